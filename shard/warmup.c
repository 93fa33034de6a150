/* Warmup SPEC parser and resolver (docs/shards.md section 3). */
#include "shard/warmup.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STAGES 100000

static void push(sl_warmup *w, uint32_t len, uint64_t batch, int kind, double amount)
{
    if ((w->n & (w->n - 1)) == 0) /* 0 or a power of two: full (the array doubles; up to 100,000 stages) */
        w->stages = sl_xrealloc(w->stages, (w->n ? 2 * w->n : 1) * sizeof *w->stages);
    w->stages[w->n++] = (sl_stage){.seq_len = len,
                                   .batch = batch,
                                   .tokens_per_step = batch * len,
                                   .amount_kind = kind,
                                   .amount = amount,
                                   .steps = -1};
}

/* Parses an unsigned integer at *p; advances *p. */
static int get_u64(const char **p, uint64_t *v)
{
    const char *s = *p;
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno)
        return -1;
    *v = x;
    *p = end;
    return 0;
}

static int get_double(const char **p, double *v)
{
    const char *s = *p;
    if ((*s < '0' || *s > '9') && *s != '.')
        return -1;
    errno = 0;
    char *end;
    double x = strtod(s, &end);
    if (errno || !isfinite(x) || x < 0)
        return -1;
    *v = x;
    *p = end;
    return 0;
}

static int check_len(const char *spec, const char *at, uint64_t len, sl_err *err)
{
    if (len == 0 || len % 8 || len > (1u << 31))
        return sl_err_set(err, SL_E_OPTION, "warmup",
                          "`warmup` '%s': offset %d: length %llu must be a positive multiple of 8", spec,
                          (int)(at - spec), (unsigned long long)len);
    return 0;
}

/* "stages:LxB@N(steps|tokens|epochs),..." */
static int parse_stages(const char *spec, const char *p, sl_warmup *w, sl_err *err)
{
    for (;;) {
        const char *at = p;
        uint64_t len, batch;
        double amount;
        if (get_u64(&p, &len) || *p++ != 'x' || get_u64(&p, &batch) || *p++ != '@' || get_double(&p, &amount))
            return sl_err_set(err, SL_E_OPTION, "warmup",
                              "`warmup` '%s': offset %d: expected LENxBATCH@AMOUNT(steps|tokens|epochs)", spec,
                              (int)(at - spec));
        int kind;
        if (!strncmp(p, "steps", 5)) {
            kind = SL_AMOUNT_STEPS;
            p += 5;
        } else if (!strncmp(p, "tokens", 6)) {
            kind = SL_AMOUNT_TOKENS;
            p += 6;
        } else if (!strncmp(p, "epochs", 6)) {
            kind = SL_AMOUNT_EPOCHS;
            p += 6;
        } else {
            return sl_err_set(err, SL_E_OPTION, "warmup",
                              "`warmup` '%s': offset %d: amount must end in steps, tokens or epochs", spec,
                              (int)(p - spec));
        }
        if (check_len(spec, at, len, err))
            return -1;
        if (batch == 0 || batch > (1ull << 40))
            return sl_err_set(err, SL_E_OPTION, "warmup", "`warmup` '%s': offset %d: batch must be positive", spec,
                              (int)(at - spec));
        if (w->n >= MAX_STAGES)
            return sl_err_set(err, SL_E_OPTION, "warmup", "`warmup` '%s': more than %d stages", spec, MAX_STAGES);
        push(w, (uint32_t)len, batch, kind, amount);
        if (len > w->max_len)
            w->max_len = (uint32_t)len;
        if (*p == 0)
            return 0;
        if (*p++ != ',')
            return sl_err_set(err, SL_E_OPTION, "warmup", "`warmup` '%s': offset %d: expected ',' between stages", spec,
                              (int)(p - 1 - spec));
    }
}

int sl_warmup_parse(const char *spec, sl_warmup *w, sl_err *err)
{
    memset(w, 0, sizeof *w);
    int rc = -1;
    const char *p = spec;
    int kind; /* 0 double, 1 linear, 2 root */
    if (!strncmp(p, "stages:", 7)) {
        rc = parse_stages(spec, p + 7, w, err);
        goto out;
    } else if (!strncmp(p, "double:", 7)) {
        kind = 0;
        p += 7;
    } else if (!strncmp(p, "linear:", 7)) {
        kind = 1;
        p += 7;
    } else if (!strncmp(p, "root:", 5)) {
        kind = 2;
        p += 5;
    } else {
        sl_err_set(err, SL_E_OPTION, "warmup",
                   "`warmup` '%s': must start with double:, linear:, root: or stages:", spec);
        goto out;
    }
    uint64_t lo, hi;
    const char *at = p;
    if (get_u64(&p, &lo) || strncmp(p, "..", 2) || (p += 2, get_u64(&p, &hi))) {
        sl_err_set(err, SL_E_OPTION, "warmup", "`warmup` '%s': offset %d: expected MIN..MAX", spec, (int)(at - spec));
        goto out;
    }
    if (check_len(spec, at, lo, err) || check_len(spec, at, hi, err))
        goto out;
    if (lo > hi) {
        sl_err_set(err, SL_E_OPTION, "warmup", "`warmup` '%s': MIN %llu is larger than MAX %llu", spec,
                   (unsigned long long)lo, (unsigned long long)hi);
        goto out;
    }
    int amount_kind = SL_AMOUNT_EPOCHS, have_amount = 0;
    double amount = 1;
    uint64_t batch = 1, tps = 0, degree = kind == 2 ? 2 : 1;
    while (*p == ',') {
        p++;
        const char *key = p;
        const char *eq = strchr(p, '=');
        if (!eq) {
            sl_err_set(err, SL_E_OPTION, "warmup", "`warmup` '%s': offset %d: expected KEY=VALUE", spec,
                       (int)(key - spec));
            goto out;
        }
        size_t kl = (size_t)(eq - key);
        p = eq + 1;
        int bad;
        if (kl == 6 && !strncmp(key, "epochs", 6)) {
            bad = get_double(&p, &amount);
            amount_kind = SL_AMOUNT_EPOCHS;
            have_amount = 1;
        } else if (kl == 5 && !strncmp(key, "steps", 5)) {
            bad = get_double(&p, &amount) || amount != floor(amount);
            amount_kind = SL_AMOUNT_STEPS;
            have_amount = 1;
        } else if (kl == 6 && !strncmp(key, "tokens", 6)) {
            bad = get_double(&p, &amount);
            amount_kind = SL_AMOUNT_TOKENS;
            have_amount = 1;
        } else if (kl == 5 && !strncmp(key, "batch", 5)) {
            bad = get_u64(&p, &batch) || batch == 0 || batch > (1ull << 40);
            tps = 0;
        } else if (kl == 3 && !strncmp(key, "tps", 3)) {
            bad = get_u64(&p, &tps) || tps == 0 || tps % hi || tps > (1ull << 50);
        } else if (kl == 6 && !strncmp(key, "degree", 6) && kind == 2) {
            bad = get_u64(&p, &degree) || degree == 0 || degree > 64;
        } else {
            sl_err_set(err, SL_E_OPTION, "warmup", "`warmup` '%s': offset %d: unknown key '%.*s'", spec,
                       (int)(key - spec), (int)kl, key);
            goto out;
        }
        if (bad || (*p && *p != ',')) {
            sl_err_set(err, SL_E_OPTION, "warmup", "`warmup` '%s': offset %d: bad value for '%.*s'%s", spec,
                       (int)(eq + 1 - spec), (int)kl, key, !strncmp(key, "tps", 3) ? " (a multiple of MAX)" : "");
            goto out;
        }
    }
    if (*p) {
        sl_err_set(err, SL_E_OPTION, "warmup", "`warmup` '%s': offset %d: unexpected '%c'", spec, (int)(p - spec), *p);
        goto out;
    }
    uint64_t T = tps ? tps : batch * hi;
    w->max_len = (uint32_t)hi;
    if (kind == 0) {
        uint64_t l = lo;
        while (l < hi)
            l *= 2;
        if (l != hi) {
            sl_err_set(err, SL_E_OPTION, "warmup", "`warmup` '%s': MAX %llu is not MIN %llu times a power of two", spec,
                       (unsigned long long)hi, (unsigned long long)lo);
            goto out;
        }
        for (l = lo; l <= hi; l *= 2)
            push(w, (uint32_t)l, T / l, amount_kind, amount);
        rc = 0;
        goto out;
    }
    /* linear / root: DeepSpeed fixed_linear / fixed_root over N steps. */
    if (!have_amount || amount_kind != SL_AMOUNT_STEPS || amount < 1) {
        sl_err_set(err, SL_E_OPTION, "warmup", "`warmup` '%s': linear and root need steps=N (N > 0)", spec);
        goto out;
    }
    if (amount > 1e7) { /* the schedule is built step by step */
        sl_err_set(err, SL_E_OPTION, "warmup", "`warmup` '%s': steps=%.0f is too large", spec, amount);
        goto out;
    }
    uint64_t N = (uint64_t)amount;
    uint32_t prev = 0;
    for (uint64_t s = 0; s < N; s++) {
        uint64_t l;
        if (degree == 1)
            l = lo + (hi - lo) * s / N;
        else
            l = lo + (uint64_t)((double)(hi - lo) * pow((double)s / (double)N, 1.0 / (double)degree));
        l -= l % 8;
        if (l < lo)
            l = lo;
        if (l != prev) {
            if (w->n >= MAX_STAGES) {
                sl_err_set(err, SL_E_OPTION, "warmup", "`warmup` '%s': more than %d stages", spec, MAX_STAGES);
                goto out;
            }
            push(w, (uint32_t)l, T / l, SL_AMOUNT_STEPS, 0);
            prev = (uint32_t)l;
        }
        w->stages[w->n - 1].amount += 1;
    }
    push(w, (uint32_t)hi, T / hi, SL_AMOUNT_OPEN, 0);
    rc = 0;
out:
    if (rc)
        sl_warmup_free(w);
    return rc;
}

void sl_warmup_single(sl_warmup *w, uint32_t seq_len, uint64_t batch)
{
    memset(w, 0, sizeof *w);
    w->max_len = seq_len;
    push(w, seq_len, batch, SL_AMOUNT_EPOCHS, 1);
}

int sl_warmup_resolve(sl_warmup *w, uint64_t D, sl_err *err)
{
    uint64_t start = 0;
    for (size_t i = 0; i < w->n; i++) {
        sl_stage *s = &w->stages[i];
        double steps;
        switch (s->amount_kind) {
        case SL_AMOUNT_STEPS: steps = s->amount; break;
        case SL_AMOUNT_TOKENS: steps = ceil(s->amount / (double)s->tokens_per_step); break;
        case SL_AMOUNT_EPOCHS: steps = ceil(s->amount * (double)D / (double)s->tokens_per_step); break;
        default: steps = -1;
        }
        if (steps > 9e15)
            return sl_errf(err, "warmup stage %zu: %.0f steps is too many", i, steps);
        s->steps = (int64_t)steps;
        s->start_token = start;
        if (s->steps > 0)
            start += (uint64_t)s->steps * s->tokens_per_step;
    }
    return 0;
}

void sl_warmup_free(sl_warmup *w)
{
    free(w->stages);
    w->stages = NULL;
    w->n = 0;
}

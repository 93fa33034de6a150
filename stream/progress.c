/* Progress lines for the log callback (stream/progress.h). */
#include "stream/progress.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/err.h"
#include "stream/io.h"
#include "base/log.h"

struct sl_progress {
    char stage[64], unit[16];
    int on, tty;
    _Atomic uint64_t items, bytes, tokens;
    _Atomic int64_t last_ns;
    int64_t total, start_ns, interval_ns;
    const sl_input *in;
    sl_progress_pos_fn pos;
    void *pos_ctx;
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Seconds between lines when stderr is not a terminal. */
static int64_t plain_interval_ns(void)
{
    const char *s = getenv("SLUICE_PROGRESS_INTERVAL");
    double v = s ? strtod(s, NULL) : 5.0;
    if (!(v > 0) || v > 86400)
        v = 5.0;
    return (int64_t)(v * 1e9);
}

sl_progress *sl_progress_start(const char *stage, const char *unit, int mode)
{
    sl_progress *p = sl_xcalloc(1, sizeof *p);
    snprintf(p->stage, sizeof p->stage, "%s", stage);
    snprintf(p->unit, sizeof p->unit, "%s", unit);
    p->tty = isatty(2);
    p->on = mode < 0 ? p->tty : mode;
    p->interval_ns = p->tty ? 200000000 : plain_interval_ns();
    p->total = -1;
    p->start_ns = now_ns();
    p->last_ns = p->start_ns;
    return p;
}

void sl_progress_set_total(sl_progress *p, int64_t total)
{
    if (p)
        p->total = total;
}

void sl_progress_track_input(sl_progress *p, const sl_input *in)
{
    if (p)
        p->in = in;
}

void sl_progress_track(sl_progress *p, sl_progress_pos_fn fn, void *ctx)
{
    if (p) {
        p->pos = fn;
        p->pos_ctx = ctx;
    }
}

/* 1234 -> "1.2 K" style with SI prefixes; bytes get "B". */
static void human(char *out, size_t n, double v, const char *unit)
{
    static const char *const pre[] = {"", "k", "M", "G", "T", "P"};
    int i = 0;
    while (v >= 1000 && i < 5) {
        v /= 1000;
        i++;
    }
    if (!strcmp(unit, "B")) /* bytes keep the customary KB */
        snprintf(out, n, i ? "%.1f %sB" : "%.0f B", v, i == 1 ? "K" : pre[i]);
    else
        snprintf(out, n, i ? "%.1f%s %s" : "%.0f%s %s", v, pre[i], unit);
}

/* done / total of the input, from the tracked input, the callback or the
 * byte total; 0 when known. */
static int position(const sl_progress *p, double *done, double *total)
{
    if (p->in && sl_input_raw_size(p->in) > 0) {
        *done = (double)sl_input_raw_offset(p->in);
        *total = (double)sl_input_raw_size(p->in);
        return 0;
    }
    if (p->pos)
        return p->pos(p->pos_ctx, done, total);
    if (p->total > 0) {
        *done = (double)p->bytes;
        *total = (double)p->total;
        return 0;
    }
    return -1;
}

static void draw(sl_progress *p, int final)
{
    double secs = (double)(now_ns() - p->start_ns) / 1e9;
    uint64_t items = p->items, bytes = p->bytes, tokens = p->tokens;
    char amount[32], rate[40], eta[48] = "";
    if (tokens) {
        human(amount, sizeof amount, (double)tokens, "tokens");
        human(rate, sizeof rate, secs > 0 ? (double)tokens / secs : 0, "tokens/s");
    } else {
        human(amount, sizeof amount, (double)bytes, "B");
        human(rate, sizeof rate, secs > 0 ? (double)bytes / secs : 0, "B");
        strcat(rate, "/s");
    }
    double done, total;
    /* at the end the input may be closed: no position then */
    if (!final && position(p, &done, &total) == 0 && total > 0 && done > 0 && done < total) {
        double left = secs * (total - done) / done;
        snprintf(eta, sizeof eta, "  %.0f%%  ETA %d:%02d", 100 * done / total, (int)left / 60, (int)left % 60);
    }
    if (final)
        snprintf(eta, sizeof eta, "  in %.1f s", secs);
    sl_log(final ? SL_LOG_PROGRESS_END : SL_LOG_PROGRESS, p->stage, "%llu %s  %s  %s%s", (unsigned long long)items,
           p->unit, amount, rate, eta);
}

static void tick(sl_progress *p)
{
    if (!p->on)
        return;
    int64_t t = now_ns(), last = p->last_ns;
    if (t - last < p->interval_ns)
        return;
    if (atomic_compare_exchange_strong(&p->last_ns, &last, t))
        draw(p, 0);
}

void sl_progress_add(sl_progress *p, uint64_t items, uint64_t bytes)
{
    if (!p)
        return;
    p->items += items;
    p->bytes += bytes;
    tick(p);
}

void sl_progress_add_tokens(sl_progress *p, uint64_t tokens)
{
    if (!p)
        return;
    p->tokens += tokens;
    tick(p);
}

void sl_progress_done(sl_progress *p)
{
    if (!p)
        return;
    if (p->on)
        draw(p, 1);
    free(p);
}

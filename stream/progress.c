/* Progress line on stderr. */
#include "stream/progress.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stream/err.h"
#include "stream/io.h"

struct sl_progress {
    char stage[64], unit[16];
    int on;
    _Atomic uint64_t items, bytes;
    _Atomic int64_t last_ns;
    int64_t total, start_ns;
    const sl_input *in;
    int drawn;
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

sl_progress *sl_progress_start(const char *stage, const char *unit, int mode)
{
    sl_progress *p = sl_xcalloc(1, sizeof *p);
    snprintf(p->stage, sizeof p->stage, "%s", stage);
    snprintf(p->unit, sizeof p->unit, "%s", unit);
    p->on = mode < 0 ? isatty(2) : mode;
    p->total = -1;
    p->start_ns = now_ns();
    p->last_ns = p->start_ns;
    return p;
}

void sl_progress_set_total(sl_progress *p, int64_t total)
{
    p->total = total;
}

void sl_progress_track_input(sl_progress *p, const sl_input *in)
{
    if (p)
        p->in = in;
}

static void human(char *out, size_t n, double v)
{
    const char *u[] = {"B", "KB", "MB", "GB", "TB"};
    int i = 0;
    while (v >= 1000 && i < 4) {
        v /= 1000;
        i++;
    }
    snprintf(out, n, i ? "%.1f %s" : "%.0f %s", v, u[i]);
}

static void draw(sl_progress *p, int final)
{
    double secs = (double)(now_ns() - p->start_ns) / 1e9;
    uint64_t items = p->items, bytes = p->bytes;
    char b[32], rate[32], eta[32] = "";
    human(b, sizeof b, (double)bytes);
    human(rate, sizeof rate, secs > 0 ? (double)bytes / secs : 0);
    /* done/total in the same unit: the tracked input's file position, or bytes */
    double done = (double)bytes, total = (double)p->total;
    if (!final && p->in && sl_input_raw_size(p->in) > 0) { /* the input may be closed at the end */
        done = (double)sl_input_raw_offset(p->in);
        total = (double)sl_input_raw_size(p->in);
    }
    if (!final && total > 0 && done > 0 && done < total) {
        double left = secs * (total - done) / done;
        snprintf(eta, sizeof eta, "  %.0f%%  ETA %d:%02d", 100 * done / total, (int)left / 60, (int)left % 60);
    }
    fprintf(stderr, "\r%s: %llu %s  %s  %s/s%s%s", p->stage, (unsigned long long)items, p->unit, b, rate, eta,
            final ? "\n" : "\033[K");
    fflush(stderr);
    p->drawn = 1;
}

void sl_progress_add(sl_progress *p, uint64_t items, uint64_t bytes)
{
    if (!p)
        return;
    p->items += items;
    p->bytes += bytes;
    if (!p->on)
        return;
    int64_t t = now_ns(), last = p->last_ns;
    if (t - last < 200000000)
        return;
    if (atomic_compare_exchange_strong(&p->last_ns, &last, t))
        draw(p, 0);
}

void sl_progress_done(sl_progress *p)
{
    if (!p)
        return;
    if (p->on)
        draw(p, 1);
    free(p);
}

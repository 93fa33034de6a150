/* Percentiles and log-scale histograms (see stats.h). */
#include "stream/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double sl_percentile(const double *s, size_t n, double p)
{
    if (!n)
        return NAN;
    if (p <= 0)
        return s[0];
    if (p >= 100)
        return s[n - 1];
    double pos = p / 100.0 * (double)(n - 1);
    size_t i = (size_t)floor(pos);
    double f = pos - (double)i;
    if (i + 1 >= n)
        return s[n - 1];
    return s[i] + (s[i + 1] - s[i]) * f;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

size_t sl_sort_finite(double *v, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i]))
            v[k++] = v[i];
    if (k)
        qsort(v, k, sizeof *v, cmp_d);
    return k;
}

void sl_histogram_log(const double *v, size_t n, int nbins, uint64_t *counts, double *edges)
{
    double lo = INFINITY, hi = -INFINITY;
    memset(counts, 0, (size_t)nbins * sizeof *counts);
    for (size_t i = 0; i < n; i++)
        if (v[i] > 0 && isfinite(v[i])) {
            lo = fmin(lo, log10(v[i]));
            hi = fmax(hi, log10(v[i]));
        }
    if (!(lo <= hi)) {
        lo = 0;
        hi = 1;
    }
    if (hi - lo < 1e-9) { /* all equal: one decade around the value */
        lo -= 0.5;
        hi += 0.5;
    }
    double w = (hi - lo) / nbins;
    for (int i = 0; i <= nbins; i++)
        edges[i] = pow(10.0, lo + w * i);
    for (size_t i = 0; i < n; i++) {
        if (!(v[i] > 0 && isfinite(v[i])))
            continue;
        int b = (int)((log10(v[i]) - lo) / w);
        b = b < 0 ? 0 : b >= nbins ? nbins - 1 : b;
        counts[b]++;
    }
}

void sl_histogram_text(sl_buf *b, const uint64_t *counts, const double *edges, int nbins, const char *what)
{
    uint64_t mx = 1;
    for (int i = 0; i < nbins; i++)
        mx = counts[i] > mx ? counts[i] : mx;
    sl_buf_printf(b, "histogram of %s (log scale):\n", what);
    for (int i = 0; i < nbins; i++) {
        int bar = (int)((double)counts[i] * 40.0 / (double)mx + 0.5);
        sl_buf_printf(b, "  %10.4g - %-10.4g |", edges[i], edges[i + 1]);
        for (int k = 0; k < bar; k++)
            sl_buf_putc(b, '#');
        sl_buf_printf(b, "%*s %llu\n", 40 - bar, "", (unsigned long long)counts[i]);
    }
}

static void svg_text(sl_buf *b, double x, double y, const char *anchor, const char *s)
{
    sl_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", x, y, anchor);
    for (; *s; s++) { /* XML-escape */
        if (*s == '<')
            sl_buf_puts(b, "&lt;");
        else if (*s == '>')
            sl_buf_puts(b, "&gt;");
        else if (*s == '&')
            sl_buf_puts(b, "&amp;");
        else
            sl_buf_putc(b, *s);
    }
    sl_buf_puts(b, "</text>\n");
}

void sl_histogram_svg(sl_buf *b, const uint64_t *counts, const double *edges, int nbins, const char *what,
                      const double *lines, int nlines)
{
    const double W = 640, H = 360, L = 60, R = 20, T = 30, B = 50;
    const double pw = W - L - R, ph = H - T - B;
    uint64_t mx = 1;
    for (int i = 0; i < nbins; i++)
        mx = counts[i] > mx ? counts[i] : mx;
    double lx0 = log10(edges[0]), lx1 = log10(edges[nbins]);
#define XOF(v) (L + (log10(v) - lx0) / (lx1 - lx0) * pw)
    sl_buf_printf(b,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                  "font-family=\"sans-serif\" font-size=\"12\">\n"
                  "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
                  W, H);
    char t[256];
    snprintf(t, sizeof t, "documents by %s", what);
    svg_text(b, W / 2, 18, "middle", t);
    for (int i = 0; i < nbins; i++) {
        double x0 = XOF(edges[i]), x1 = XOF(edges[i + 1]);
        double h = (double)counts[i] / (double)mx * ph;
        sl_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#4a7fb5\"/>\n", x0 + 0.5,
                      T + ph - h, fmax(0.5, x1 - x0 - 1), h);
    }
    sl_buf_printf(b, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n", L, T + ph, L + pw,
                  T + ph);
    sl_buf_printf(b, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n", L, T, L, T + ph);
    for (int i = 0; i <= 4; i++) { /* x ticks at 5 points of the log range */
        double v = pow(10.0, lx0 + (lx1 - lx0) * i / 4.0);
        snprintf(t, sizeof t, "%.4g", v);
        svg_text(b, XOF(v), T + ph + 16, "middle", t);
    }
    snprintf(t, sizeof t, "%s (log scale)", what);
    svg_text(b, L + pw / 2, H - 12, "middle", t);
    snprintf(t, sizeof t, "%llu", (unsigned long long)mx);
    svg_text(b, L - 6, T + 4, "end", t);
    svg_text(b, L - 6, T + ph, "end", "0");
    for (int i = 0; i < nlines; i++) {
        if (!(lines[i] > 0) || !isfinite(lines[i]))
            continue;
        double x = XOF(lines[i]);
        x = fmin(fmax(x, L), L + pw);
        sl_buf_printf(b,
                      "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#c0392b\" "
                      "stroke-dasharray=\"4 3\"/>\n",
                      x, T, x, T + ph);
        snprintf(t, sizeof t, "%.4g", lines[i]);
        svg_text(b, x, T - 4, "middle", t);
    }
    sl_buf_puts(b, "</svg>\n");
#undef XOF
}

void sl_lines_svg(sl_buf *b, const sl_svg_series *s, int ns, const char *title, const char *xlabel, const char *ylabel,
                  const double *lines, int nlines)
{
    static const char *const colors[] = {"#1f4e9c", "#c0392b", "#27ae60", "#8e44ad",
                                         "#d35400", "#16a085", "#7f8c8d", "#2c3e50"};
    const double W = 720, H = 400, L = 70, R = 150, T = 34, B = 50;
    const double pw = W - L - R, ph = H - T - B;
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    for (int k = 0; k < ns; k++)
        for (int i = 0; i < s[k].n; i++) {
            if (!(s[k].x[i] > 0) || !isfinite(s[k].y[i]))
                continue;
            x0 = fmin(x0, s[k].x[i]);
            x1 = fmax(x1, s[k].x[i]);
            double lo = s[k].lo && isfinite(s[k].lo[i]) ? s[k].lo[i] : s[k].y[i];
            double hi = s[k].hi && isfinite(s[k].hi[i]) ? s[k].hi[i] : s[k].y[i];
            y0 = fmin(y0, lo);
            y1 = fmax(y1, hi);
        }
    if (!(x0 <= x1)) {
        x0 = 1;
        x1 = 2;
        y0 = 0;
        y1 = 1;
    }
    if (x1 / x0 < 2)
        x1 = x0 * 2;
    if (y1 - y0 < 1e-9) {
        y0 -= 0.5;
        y1 += 0.5;
    }
    double pad = (y1 - y0) * 0.05;
    y0 -= pad;
    y1 += pad;
    double lx0 = log2(x0), lx1 = log2(x1);
#define XOF(v) (L + (log2(v) - lx0) / (lx1 - lx0) * pw)
#define YOF(v) (T + ph - ((v)-y0) / (y1 - y0) * ph)
    sl_buf_printf(b,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                  "font-family=\"sans-serif\" font-size=\"12\">\n"
                  "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
                  W, H);
    char t[256];
    svg_text(b, L + pw / 2, 18, "middle", title);
    sl_buf_printf(b, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n", L, T + ph, L + pw,
                  T + ph);
    sl_buf_printf(b, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n", L, T, L, T + ph);
    int step = (int)ceil((lx1 - lx0) / 10.0); /* at most about 10 ticks, at powers of two */
    step = step < 1 ? 1 : step;
    for (int e = (int)ceil(lx0); e <= (int)floor(lx1); e += step) {
        double v = ldexp(1.0, e);
        sl_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#ddd\"/>\n", XOF(v), T, XOF(v),
                      T + ph);
        snprintf(t, sizeof t, "%.0f", v);
        svg_text(b, XOF(v), T + ph + 16, "middle", t);
    }
    for (int i = 0; i <= 4; i++) {
        double v = y0 + (y1 - y0) * i / 4.0;
        snprintf(t, sizeof t, "%.3g", v);
        svg_text(b, L - 6, YOF(v) + 4, "end", t);
    }
    snprintf(t, sizeof t, "%s (log scale)", xlabel);
    svg_text(b, L + pw / 2, H - 12, "middle", t);
    sl_buf_printf(b, "<g transform=\"translate(16,%.0f) rotate(-90)\">\n", T + ph / 2);
    svg_text(b, 0, 0, "middle", ylabel);
    sl_buf_puts(b, "</g>\n");
    for (int i = 0; i < nlines; i++) {
        if (!(lines[i] > 0) || !isfinite(lines[i]))
            continue;
        double x = fmin(fmax(XOF(lines[i]), L), L + pw);
        sl_buf_printf(b,
                      "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#555\" "
                      "stroke-dasharray=\"4 3\"/>\n",
                      x, T, x, T + ph);
        snprintf(t, sizeof t, "%.6g", lines[i]);
        svg_text(b, x, T - 4, "middle", t);
    }
    for (int k = 0; k < ns; k++) {
        const char *col = colors[k % (int)(sizeof colors / sizeof colors[0])];
        int first = 1;
        for (int i = 0; i < s[k].n; i++) {
            if (!(s[k].x[i] > 0) || !isfinite(s[k].y[i]))
                continue;
            if (first)
                sl_buf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", col);
            sl_buf_printf(b, "%s%.1f,%.1f", first ? "" : " ", XOF(s[k].x[i]), YOF(s[k].y[i]));
            first = 0;
        }
        if (!first)
            sl_buf_puts(b, "\"/>\n");
        for (int i = 0; i < s[k].n; i++) {
            if (!(s[k].x[i] > 0) || !isfinite(s[k].y[i]))
                continue;
            double x = XOF(s[k].x[i]);
            if (s[k].lo && s[k].hi && isfinite(s[k].lo[i]) && isfinite(s[k].hi[i]))
                sl_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", x,
                              YOF(s[k].lo[i]), x, YOF(s[k].hi[i]), col);
            sl_buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>\n", x, YOF(s[k].y[i]), col);
        }
        double ly = T + 10 + 18 * k;
        sl_buf_printf(b, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"%s\" stroke-width=\"3\"/>\n",
                      L + pw + 12, ly - 4, L + pw + 30, ly - 4, col);
        svg_text(b, L + pw + 36, ly, "start", s[k].name);
    }
    sl_buf_puts(b, "</svg>\n");
#undef XOF
#undef YOF
}

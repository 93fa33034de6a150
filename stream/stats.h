/* Descriptive statistics over arrays of doubles: percentiles and a
 * log-scale histogram with its text and SVG renderings. Pure functions, no
 * I/O; used by `filter` (model/filter.h) for its thresholds and summaries,
 * and by the position curves (model/curve.h). */
#ifndef SLUICE_STREAM_STATS_H
#define SLUICE_STREAM_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The p-th percentile (0..100) of n values, linear interpolation between
 * closest ranks (numpy's default "linear" method). sorted must be ascending.
 * NAN when n is 0. */
double sl_percentile(const double *sorted, size_t n, double p);

/* Sorts v[0..n) ascending in place after dropping NaNs; returns how many
 * values remain. */
size_t sl_sort_finite(double *v, size_t n);

/* Histogram of log10(values) in nbins equal bins between the smallest and
 * largest value (values must be > 0). counts[nbins]; edges[nbins+1] in the
 * original (not log) scale. Values <= 0 or non-finite are not counted. */
void sl_histogram_log(const double *v, size_t n, int nbins, uint64_t *counts, double *edges);

/* Text rendering, one line per bin: "  lo -  hi | ####  count". */
void sl_histogram_text(sl_buf *b, const uint64_t *counts, const double *edges, int nbins, const char *what);

/* A self-contained SVG bar chart of the histogram with vertical lines at the
 * given thresholds (NaN = none), log-scale x axis labelled `what`. */
void sl_histogram_svg(sl_buf *b, const uint64_t *counts, const double *edges, int nbins, const char *what,
                      const double *lines, int nlines);

/* One line of sl_lines_svg: n points (x > 0), each with a band [lo, hi]
 * (NaN: no band at that point). */
typedef struct sl_svg_series {
    const char *name;
    const double *x, *y, *lo, *hi;
    int n;
} sl_svg_series;

/* A self-contained SVG line chart: the series (each a line with its points,
 * its band as a vertical bar, and a legend entry), log2-scale x axis
 * labelled xlabel, linear y axis labelled ylabel, dashed vertical lines at
 * the given x values (NaN or <= 0: none). */
void sl_lines_svg(sl_buf *b, const sl_svg_series *s, int ns, const char *title, const char *xlabel, const char *ylabel,
                  const double *lines, int nlines);

#ifdef __cplusplus
}
#endif

#endif

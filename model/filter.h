/* Score-based document selection: percentiles, CCNet buckets, histogram
 * and its SVG plot. Pure functions over arrays of scores (the CLI does the
 * reading and writing). */
#ifndef SLUICE_MODEL_FILTER_H
#define SLUICE_MODEL_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "stream/buf.h"

/* The p-th percentile (0..100) of n values, linear interpolation between
 * closest ranks (numpy's default "linear" method). sorted must be ascending. */
double sl_percentile(const double *sorted, size_t n, double p);

/* CCNet bucket of a perplexity given the head/tail cutoffs (p30, p60):
 * 0 head (pp < c_head), 1 middle (pp < c_tail), 2 tail. */
int sl_ccnet_bucket(double pp, double c_head, double c_tail);
extern const char *const sl_bucket_names[3];

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

#endif

/* Extended grapheme clusters (UAX #29) with the Unicode 17.0 properties of
 * grapheme_table.h (scripts/gen/gen_grapheme.py): the segmentation Hugging
 * Face tokenizers 0.23.3 gets from unicode-segmentation 1.13, which its
 * Precompiled normalizer works by. ICU 72 on Debian 12 knows Unicode 15.0
 * only, so marks added in 16.0 and 17.0 (U+0897, U+113B8, U+1E5EE, ...)
 * would start clusters of their own there. Internal (not installed). */
#ifndef SLUICE_TOKENIZE_GRAPHEME_H
#define SLUICE_TOKENIZE_GRAPHEME_H

#include <stddef.h>
#include <stdint.h>

/* Grapheme_Cluster_Break values, in the table's order. */
enum {
    SL_GCB_OTHER,
    SL_GCB_CR,
    SL_GCB_LF,
    SL_GCB_CONTROL,
    SL_GCB_EXTEND,
    SL_GCB_ZWJ,
    SL_GCB_RI,
    SL_GCB_PREPEND,
    SL_GCB_SPACING_MARK,
    SL_GCB_L,
    SL_GCB_V,
    SL_GCB_T,
    SL_GCB_LV,
    SL_GCB_LVT
};

/* The table's byte for code point c: bits 0..3 SL_GCB_*, bit 4
 * Extended_Pictographic, bits 5..6 Indic_Conjunct_Break (1 Consonant,
 * 2 Extend, 3 Linker). */
uint8_t sl_grapheme_props(uint32_t c);

/* The end of the cluster that starts at s[at] (at < n): the offset of the
 * next boundary. A byte that is not part of well-formed UTF-8 is a cluster
 * of its own. */
size_t sl_grapheme_end(const char *s, size_t n, size_t at);

/* The Unicode version of the table ("17.0.0"). */
const char *sl_grapheme_unicode_version(void);

#endif

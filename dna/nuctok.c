/* Nucleotide tokenizers: see nuctok.h. */
#include "dna/nuctok.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/json.h"

static const char *const char_vocab[DNA_CHAR_VOCAB] = {"[CLS]", "[SEP]", "[BOS]", "[MASK]", "[PAD]", "[RESERVED]",
                                                       "[UNK]", "A",     "C",     "G",      "T",     "N"};
static const char *const dnabert_specials[DNABERT_FIRST] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
static const char dnabert_order[4] = {'A', 'T', 'C', 'G'};

void dna_tok_opts_default(dna_tok_opts *o)
{
    memset(o, 0, sizeof *o);
    o->case_mode = DNA_CASE_UPPER;
    o->n_mode = DNA_N_TOKEN;
    o->pad_left = 1;
    o->kmer_stride = 1;
}

uint32_t dna_tok_vocab_size(const dna_tok_opts *o)
{
    if (!o->kmer)
        return DNA_CHAR_VOCAB;
    return DNABERT_FIRST + (1u << (2 * o->kmer));
}

int64_t dna_tok_pad_id(const dna_tok_opts *o)
{
    return o->kmer ? DNABERT_PAD : DNA_ID_PAD;
}
int64_t dna_tok_eos_id(const dna_tok_opts *o)
{
    return o->kmer ? DNABERT_SEP : DNA_ID_SEP;
}
int64_t dna_tok_unk_id(const dna_tok_opts *o)
{
    return o->kmer ? DNABERT_UNK : DNA_ID_UNK;
}

void dna_tok_name(const dna_tok_opts *o, char *out, size_t n)
{
    if (o->kmer)
        snprintf(out, n, "dnabert-%dmer", o->kmer);
    else
        snprintf(out, n, "hyenadna-char");
}

static void kmer_text(int k, uint32_t code, char *out)
{
    for (int i = k - 1; i >= 0; i--) {
        out[i] = dnabert_order[code & 3];
        code >>= 2;
    }
    out[k] = 0;
}

void dna_tok_extra_json(const dna_tok_opts *o, sl_buf *b)
{
    static const char *const cases[] = {"upper", "keep", "mask-as-unk"};
    static const char *const ns[] = {"token", "pad", "drop"};
    sl_buf_puts(b, "{\"case\":");
    sl_json_put_cstr(b, cases[o->case_mode]);
    sl_buf_puts(b, ",\"n\":");
    sl_json_put_cstr(b, ns[o->n_mode]);
    sl_buf_printf(b, ",\"add_eos\":%s", o->add_eos ? "true" : "false");
    if (o->max_length)
        sl_buf_printf(b, ",\"max_length\":%llu,\"padding_side\":\"%s\"", (unsigned long long)o->max_length,
                      o->pad_left ? "left" : "right");
    if (o->kmer) {
        sl_buf_printf(b, ",\"kmer\":%d,\"kmer_stride\":%d,\"kmer_alphabet\":\"ATCG\"", o->kmer, o->kmer_stride);
        sl_buf_puts(b, ",\"kmer_rule\":\"id = 5 + sum(d_i * 4^(k-1-i)), A=0 T=1 C=2 G=3\"");
    }
    if (o->kmer > 8) {
        sl_buf_puts(b, ",\"vocab_specials\":[");
        for (int i = 0; i < DNABERT_FIRST; i++) {
            if (i)
                sl_buf_putc(b, ',');
            sl_json_put_cstr(b, dnabert_specials[i]);
        }
        sl_buf_puts(b, "]}");
        return;
    }
    sl_buf_puts(b, ",\"vocab\":[");
    uint32_t v = dna_tok_vocab_size(o);
    char km[DNA_MAX_KMER + 1];
    for (uint32_t i = 0; i < v; i++) {
        if (i)
            sl_buf_putc(b, ',');
        if (!o->kmer)
            sl_json_put_cstr(b, char_vocab[i]);
        else if (i < DNABERT_FIRST)
            sl_json_put_cstr(b, dnabert_specials[i]);
        else {
            kmer_text(o->kmer, i - DNABERT_FIRST, km);
            sl_json_put_cstr(b, km);
        }
    }
    sl_buf_puts(b, "]}");
}

void dna_tokens_free(dna_tokens *t)
{
    free(t->ids);
    free(t->bytes);
    free(t->mask);
    memset(t, 0, sizeof *t);
}

/* p (an array of elements of size el with capacity *cap) grown to hold n. */
static void *grow(void *p, size_t *cap, size_t n, size_t el)
{
    if (n <= *cap)
        return p;
    size_t c = *cap ? *cap : 1024;
    while (c < n)
        c *= 2;
    *cap = c;
    return sl_xrealloc(p, c * el);
}

/* Room for n ids in t->bytes (narrow) or t->ids, and n mask bytes. */
static void reserve(dna_tokens *t, size_t n, int narrow, int with_mask)
{
    if (narrow)
        t->bytes = grow(t->bytes, &t->bytes_cap, n, 1);
    else
        t->ids = grow(t->ids, &t->cap, n, sizeof *t->ids);
    if (with_mask)
        t->mask = grow(t->mask, &t->mask_cap, n, 1);
}

/* ids [at, at + k) = v, in whichever array holds them */
static void fill_ids(dna_tokens *t, int narrow, size_t at, size_t k, uint32_t v)
{
    if (narrow) {
        memset(t->bytes + at, (int)v, k);
        return;
    }
    for (size_t i = 0; i < k; i++)
        t->ids[at + i] = v;
}

/* Byte -> character id under a case policy (N policy applied afterwards). */
static void char_lut(int case_mode, uint8_t lut[256])
{
    memset(lut, DNA_ID_UNK, 256);
    const char *b = "ACGTN";
    for (int i = 0; i < 5; i++) {
        lut[(unsigned char)b[i]] = (uint8_t)(DNA_ID_A + i);
        if (case_mode != DNA_CASE_UNK)
            lut[(unsigned char)tolower(b[i])] = (uint8_t)(DNA_ID_A + i);
    }
}

/* Character ids, one byte each (all are below DNA_CHAR_VOCAB). */
static void encode_chars(const dna_tok_opts *o, const char *seq, size_t n, dna_tokens *t)
{
    uint8_t lut[256];
    char_lut(o->case_mode, lut);
    if (o->n_mode == DNA_N_PAD) {
        lut['N'] = DNA_ID_PAD;
        if (o->case_mode != DNA_CASE_UNK)
            lut['n'] = DNA_ID_PAD;
    }
    int keep = o->case_mode == DNA_CASE_KEEP;
    reserve(t, n + 1, 1, keep);
    const unsigned char *s = (const unsigned char *)seq;
    uint8_t *ids = t->bytes, *mask = t->mask;
    if (o->n_mode == DNA_N_DROP) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            uint8_t id = lut[s[i]];
            if (id == DNA_ID_N)
                continue;
            if (keep)
                mask[k] = s[i] >= 'a' && s[i] <= 'z';
            ids[k++] = id;
        }
        t->n = k;
        return;
    }
    /* A table lookup per base: memory-bound, so it is not split across
     * threads (measured: two threads on one 10 MB record were slower than
     * one); parallelism is across documents (dna/emit.c). */
    for (size_t i = 0; i < n; i++)
        ids[i] = lut[s[i]];
    if (keep) {
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            mask[i] = (unsigned char)(s[i] - 'a') < 26;
    }
    t->n = n;
}

static void encode_kmers(const dna_tok_opts *o, const char *seq, size_t n, dna_tokens *t)
{
    int k = o->kmer, keep = o->case_mode == DNA_CASE_KEEP;
    size_t stride = (size_t)(o->kmer_stride > 0 ? o->kmer_stride : 1);
    int8_t digit[256];
    memset(digit, -1, sizeof digit);
    for (int i = 0; i < 4; i++) {
        digit[(unsigned char)dnabert_order[i]] = (int8_t)i;
        if (o->case_mode != DNA_CASE_UNK)
            digit[(unsigned char)tolower(dnabert_order[i])] = (int8_t)i;
    }
    size_t count = n >= (size_t)k ? (n - (size_t)k) / stride + 1 : 0;
    reserve(t, count + 1, 0, keep);
    /* One pass over the bases with a rolling code (the last k digits); a
     * k-mer [p, p+k) holds a non-ACGT (or lower-case) base when the last one
     * seen is at or after p. */
    const uint32_t kmask = (uint32_t)((1ull << (2 * k)) - 1);
    uint32_t code = 0;
    size_t bad_end = 0, low_end = 0, next = 0, m = 0; /* *_end: 1 + index of the last such base */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)seq[i];
        int d = digit[c];
        code = (code << 2 | (uint32_t)(d & 3)) & kmask;
        if (d < 0)
            bad_end = i + 1;
        if (c >= 'a' && c <= 'z')
            low_end = i + 1;
        if (i + 1 < (size_t)k || i + 1 - (size_t)k != next)
            continue;
        size_t p = next;
        next += stride;
        uint32_t id = DNABERT_FIRST + code;
        if (bad_end > p) {
            if (o->n_mode == DNA_N_DROP)
                continue;
            id = o->n_mode == DNA_N_PAD ? DNABERT_PAD : DNABERT_UNK;
        }
        if (keep)
            t->mask[m] = low_end > p;
        t->ids[m++] = id;
    }
    t->n = m;
}

/* add_eos, truncation and padding, Hugging Face style, on t->bytes (narrow)
 * or t->ids. */
static void finish(const dna_tok_opts *o, dna_tokens *t, int narrow)
{
    uint32_t eos = (uint32_t)dna_tok_eos_id(o), pad = (uint32_t)dna_tok_pad_id(o);
    int keep = t->mask != NULL && o->case_mode == DNA_CASE_KEEP;
    uint64_t L = o->max_length;
    if (!L) {
        if (o->add_eos) {
            reserve(t, t->n + 1, narrow, keep);
            if (keep)
                t->mask[t->n] = 0;
            fill_ids(t, narrow, t->n++, 1, eos);
        }
        return;
    }
    /* Hugging Face's pad() leaves an empty input empty (no padding) unless a
     * special token was added: HyenaDNA's tokenizer returns [] for "" without
     * add_eos, checked against the executed reference vectors. */
    if (t->n == 0 && !o->add_eos)
        return;
    size_t body = (size_t)(o->add_eos ? L - 1 : L);
    if (t->n > body)
        t->n = body;
    if (o->add_eos) {
        reserve(t, t->n + 1, narrow, keep);
        if (keep)
            t->mask[t->n] = 0;
        fill_ids(t, narrow, t->n++, 1, eos);
    }
    size_t need = (size_t)L;
    if (t->n >= need)
        return;
    reserve(t, need, narrow, keep);
    size_t padn = need - t->n;
    if (o->pad_left) {
        if (narrow)
            memmove(t->bytes + padn, t->bytes, t->n);
        else
            memmove(t->ids + padn, t->ids, t->n * sizeof *t->ids);
        if (keep)
            memmove(t->mask + padn, t->mask, t->n);
        fill_ids(t, narrow, 0, padn, pad);
        if (keep)
            memset(t->mask, 0, padn);
    } else {
        fill_ids(t, narrow, t->n, padn, pad);
        if (keep)
            memset(t->mask + t->n, 0, padn);
    }
    t->n = need;
}

void dna_tok_encode_bytes(const dna_tok_opts *o, const char *seq, size_t n, dna_tokens *t)
{
    t->n = 0;
    encode_chars(o, seq, n, t);
    finish(o, t, 1);
}

void dna_tok_encode(const dna_tok_opts *o, const char *seq, size_t n, dna_tokens *t)
{
    if (!o->kmer) {
        dna_tok_encode_bytes(o, seq, n, t);
        reserve(t, t->n + 1, 0, 0);
        for (size_t i = 0; i < t->n; i++)
            t->ids[i] = t->bytes[i];
        return;
    }
    t->n = 0;
    encode_kmers(o, seq, n, t);
    finish(o, t, 0);
}

/* Appends ",[start,end]" (or without the comma), formatted by hand: a
 * soft-masked genome has millions of runs and printf was 60% of the time. */
static void put_run(sl_buf *b, int first, size_t start, size_t end)
{
    char tmp[64];
    size_t i = sizeof tmp;
    tmp[--i] = ']';
    do
        tmp[--i] = (char)('0' + end % 10);
    while (end /= 10);
    tmp[--i] = ',';
    do
        tmp[--i] = (char)('0' + start % 10);
    while (start /= 10);
    tmp[--i] = '[';
    if (!first)
        tmp[--i] = ',';
    sl_buf_append(b, tmp + i, sizeof tmp - i);
}

void dna_tokens_mask_json(const dna_tokens *t, sl_buf *b)
{
    sl_buf_putc(b, '[');
    int first = 1;
    for (size_t i = 0; t->mask && i < t->n;) {
        if (!t->mask[i]) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < t->n && t->mask[j])
            j++;
        put_run(b, first, i, j);
        first = 0;
        i = j;
    }
    sl_buf_putc(b, ']');
}

int dna_tok_decode(const dna_tok_opts *o, const uint32_t *ids, size_t n, sl_buf *out)
{
    uint32_t v = dna_tok_vocab_size(o);
    char km[DNA_MAX_KMER + 1];
    for (size_t i = 0; i < n; i++) {
        if (ids[i] >= v)
            return -1;
        if (!o->kmer) {
            sl_buf_puts(out, char_vocab[ids[i]]);
            continue;
        }
        if (i)
            sl_buf_putc(out, ' ');
        if (ids[i] < DNABERT_FIRST) {
            sl_buf_puts(out, dnabert_specials[ids[i]]);
        } else {
            kmer_text(o->kmer, ids[i] - DNABERT_FIRST, km);
            sl_buf_puts(out, km);
        }
    }
    return 0;
}

static unsigned char complement(unsigned char c)
{
    switch (c) {
    case 'A': return 'T';
    case 'T': return 'A';
    case 'C': return 'G';
    case 'G': return 'C';
    case 'a': return 't';
    case 't': return 'a';
    case 'c': return 'g';
    case 'g': return 'c';
    default: return c;
    }
}

void dna_revcomp(char *seq, size_t n)
{
    for (size_t i = 0, j = n; i < j;) {
        j--;
        unsigned char a = (unsigned char)seq[i], b = (unsigned char)seq[j];
        seq[i] = (char)complement(b);
        seq[j] = (char)complement(a);
        i++;
    }
}

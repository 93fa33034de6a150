/* Building the byte-level BPE of a tiktoken or tekken vocabulary
 * (tiktoken_impl.h): ids and bytes, the whole-token table, the merges
 * derived from the ranks, the rank file's base64 lines, and the special
 * tokens. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "tokenize/models/tiktoken_impl.h"

void sl_tt_free_specials(special *sp, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(sp[i].name);
    free(sp);
}

/* ids 0..n_ids-1, none with bytes yet */
void sl_tt_alloc_ids(sl_bpe *b, uint32_t n_ids)
{
    b->vocab_size = n_ids;
    b->tok_off = sl_xcalloc(n_ids ? n_ids : 1, sizeof *b->tok_off);
    b->tok_len = sl_xmalloc((n_ids ? n_ids : 1) * sizeof *b->tok_len);
    b->txt_off = sl_xmalloc((n_ids ? n_ids : 1) * sizeof *b->txt_off);
    for (uint32_t i = 0; i < n_ids; i++)
        b->tok_len[i] = b->txt_off[i] = UINT32_MAX;
}

void sl_tt_set_bytes(sl_bpe *b, uint32_t id, const char *s, size_t n)
{
    if (b->pool_len + n + 1 > b->pool_cap) {
        b->pool_cap = 2 * (b->pool_len + n + 1) + 4096;
        b->pool = sl_xrealloc(b->pool, b->pool_cap);
    }
    b->tok_off[id] = (uint32_t)b->pool_len;
    b->tok_len[id] = (uint32_t)n;
    if (n)
        memcpy(b->pool + b->pool_len, s, n);
    b->pool_len += n;
}

/* Id `id` is pool[off..off+n), put into the words table unless its bytes
 * are there already (returns that id then). */
static int64_t words_put(sl_bpe *b, uint32_t id, uint32_t off, uint32_t n, uint64_t hash)
{
    int64_t old = sl_words_put(b, id, b->pool + off, n, hash);
    if (old < 0) {
        b->tok_off[id] = off;
        b->tok_len[id] = n;
    }
    return old;
}

/* One ordinary token: bytes, and into the words table unless the bytes are
 * there already (returns that id then). */
int64_t sl_tt_add_token(sl_bpe *b, uint32_t id, const char *s, size_t n)
{
    size_t at = b->pool_len;
    sl_tt_set_bytes(b, id, s, n);
    b->tok_len[id] = UINT32_MAX; /* unused until words_put takes it */
    int64_t old = words_put(b, id, (uint32_t)at, (uint32_t)n, XXH3_64bits(s, n));
    if (old >= 0)
        b->pool_len = at;
    return old;
}

/* The merges: tiktoken's rule, answered on demand (bpe_merge.c,
 * lazy_merges): the pair (l, r) merges into the token whose bytes are
 * bytes(l) + bytes(r), at its rank. Deriving the table of every split of
 * every token instead (1.3M splits for o200k) was most of the load. */
void sl_tt_set_merges(sl_bpe *b, uint32_t first, uint32_t n_ranks)
{
    uint32_t max_len = 0;
    for (uint32_t r = 0; r < n_ranks; r++)
        if (b->tok_len[first + r] > max_len)
            max_len = b->tok_len[first + r];
    b->lazy_merges = 1;
    b->rank0 = first;
    b->max_len = max_len;
}

/* "file:LINE" of a byte offset */
size_t sl_tt_line_of(const char *text, size_t off)
{
    size_t line = 1;
    for (size_t i = 0; i < off; i++)
        line += text[i] == '\n';
    return line;
}

/* base64 character -> value, -1 for the others */
static const int8_t B64[256] = {
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 62, -1, -1, -1, 63, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61,
    -1, -1, -1, -1, -1, -1, -1, 0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
    22, 23, 24, 25, -1, -1, -1, -1, -1, -1, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44,
    45, 46, 47, 48, 49, 50, 51, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};

int sl_tt_b64_val(unsigned char c)
{
    return B64[c];
}

/* Strict base64 (padded, canonical) of s[0..n) into out, which has room
 * for 3 * n / 4 bytes: the length, or -1 when invalid. */
static ptrdiff_t b64_into(const char *s, size_t n, char *out)
{
    const unsigned char *u = (const unsigned char *)s;
    if (n == 0 || n % 4)
        return -1;
    char *o = out;
    for (size_t i = 0; i + 4 < n; i += 4, o += 3) {
        int32_t a = B64[u[i]], b = B64[u[i + 1]], c = B64[u[i + 2]], d = B64[u[i + 3]];
        if ((a | b | c | d) < 0)
            return -1;
        uint32_t w = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
        o[0] = (char)(w >> 16);
        o[1] = (char)(w >> 8);
        o[2] = (char)w;
    }
    /* the last four: padding only there, as "x=" or "==" */
    const unsigned char *q = u + n - 4;
    int pad = q[3] != '=' ? 0 : q[2] == '=' ? 2 : 1;
    int32_t a = B64[q[0]], b = B64[q[1]], c = pad == 2 ? 0 : B64[q[2]], d = pad ? 0 : B64[q[3]];
    if ((a | b | c | d) < 0)
        return -1;
    uint32_t w = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
    if ((pad == 2 && (w & 0xFFFF)) || (pad == 1 && (w & 0xFF)))
        return -1; /* bits beyond the data: not canonical */
    char last[3] = {(char)(w >> 16), (char)(w >> 8), (char)w};
    memcpy(o, last, (size_t)(3 - pad));
    return o + 3 - pad - out;
}

/* Strict base64 (padded, canonical) of s[0..n) into out; -1 when invalid. */
int sl_tt_b64_decode(const char *s, size_t n, sl_buf *out)
{
    sl_buf_clear(out);
    sl_buf_reserve(out, n / 4 * 3 + 3);
    ptrdiff_t k = b64_into(s, n, out->data);
    if (k < 0)
        return -1;
    out->len = (size_t)k;
    out->data[k] = 0;
    return 0;
}

/* A token spelled as padding alone ("=", as Whisper's multilingual.tiktoken
 * has at rank 50256): Python's base64.b64decode, which tiktoken reads rank
 * files with, makes it the empty byte string. Such a token is never the
 * result of encoding and decodes to nothing. */
static int is_empty_b64(const char *s, size_t n)
{
    if (n == 0 || n > 4)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] != '=')
            return 0;
    return 1;
}

/* The common line, "BASE64 RANK\n" (or its end at the file's end) with
 * fewer than 10 digits, in one pass: its bytes decoded into out, their
 * count returned, *rank and *next (where the next line starts) set; -1
 * for anything else, which the careful parse then takes (or names). */
static ptrdiff_t fast_line(const char *text, size_t len, size_t pos, char *out, uint32_t *rank, size_t *next)
{
    const unsigned char *p = (const unsigned char *)text + pos, *start = p, *end = (const unsigned char *)text + len;
    char *o = out;
    for (; end - p >= 4; p += 4, o += 3) {
        int32_t a = B64[p[0]], b = B64[p[1]], c = B64[p[2]], d = B64[p[3]];
        if ((a | b | c | d) < 0)
            break;
        uint32_t w = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
        o[0] = (char)(w >> 16);
        o[1] = (char)(w >> 8);
        o[2] = (char)w;
    }
    if (end - p >= 4 && p[3] == '=') { /* "xx==" or "xxx=" */
        int pad = p[2] == '=' ? 2 : 1;
        int32_t a = B64[p[0]], b = B64[p[1]], c = pad == 2 ? 0 : B64[p[2]];
        if ((a | b | c) < 0)
            return -1;
        uint32_t w = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6;
        if (w & (pad == 2 ? 0xFFFF : 0xFF))
            return -1;
        o[0] = (char)(w >> 16);
        o[1] = (char)(w >> 8);
        o += 3 - pad;
        p += 4;
    }
    if (p == start || p == end || *p != ' ')
        return -1;
    const unsigned char *d0 = ++p;
    uint32_t r = 0;
    for (; p < end && (unsigned)(*p - '0') < 10 && p - d0 < 9; p++)
        r = r * 10 + (uint32_t)(*p - '0');
    if (p == d0 || (p < end && *p != '\n'))
        return -1;
    *rank = r;
    *next = (size_t)(p - (const unsigned char *)text) + 1;
    return o - out;
}

/* The line numbers of the n tokens of a rank file (its lines that are not
 * empty), for the messages about ranks. */
static uint32_t *token_lines(const char *text, size_t len, size_t n)
{
    uint32_t *lines = sl_xmalloc((n ? n : 1) * sizeof *lines), line = 0;
    size_t k = 0;
    for (size_t pos = 0; pos < len && k < n;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len, e = end;
        line++;
        if (e > pos && text[e - 1] == '\r')
            e--;
        if (e > pos)
            lines[k++] = line;
        pos = end + 1;
    }
    return lines;
}

/* The ordinary tokens of a rank file into b (ids = ranks); *n_ranks set.
 * Each line's base64 is decoded once, straight into the pool; a token is
 * its length there (its offset the sum of those before) and, only when the
 * ranks are not in order, its rank. */
int sl_tt_load_ranks(sl_bpe *b, const char *text, size_t len, const char *name, uint32_t *n_ranks, sl_err *err)
{
    /* parse and check every line; then the ranks; then the tokens */
    uint32_t *rank_line = NULL, *tlen = NULL, *trank = NULL, *tline = NULL;
    int64_t max_rank = -1;
    size_t ne = 0, line = 0;
    int rc = -1;
    if (len > UINT32_MAX) {
        sl_errf(err, "%s: a rank file of %zu bytes is beyond 4 GiB", name, len);
        goto out;
    }
    /* a line with a token takes at least 4 bytes ("= 0\n"); the tokens at
     * most 3/4 of the base64 */
    size_t cap = len / 4 + 1;
    tlen = sl_xmalloc(cap * sizeof *tlen);
    b->pool_cap = len / 4 * 3 + 4096;
    b->pool = sl_xmalloc(b->pool_cap);
    b->pool_len = 0;
    for (size_t pos = 0, next; pos < len; pos = next) {
        char *out = b->pool + b->pool_len;
        uint32_t r;
        ptrdiff_t n = fast_line(text, len, pos, out, &r, &next);
        line++;
        if (n < 0) {
            const char *nl = memchr(text + pos, '\n', len - pos);
            size_t end = nl ? (size_t)(nl - text) : len, e = end;
            next = end + 1;
            if (e > pos && text[e - 1] == '\r')
                e--;
            if (e == pos) /* an empty line: skipped, as tiktoken does */
                continue;
            const char *sp = memchr(text + pos, ' ', e - pos);
            if (!sp) {
                sl_errf(err, "%s:%zu: expected a base64 token, a space and a rank", name, line);
                goto out;
            }
            size_t blen = (size_t)(sp - (text + pos));
            n = is_empty_b64(text + pos, blen) ? 0 : b64_into(text + pos, blen, out);
            if (n < 0) {
                sl_errf(err, "%s:%zu: '%.*s' is not base64", name, line, (int)(blen > 60 ? 60 : blen), text + pos);
                goto out;
            }
            uint64_t r64 = 0;
            size_t k = (size_t)(sp - text) + 1;
            if (k == e) {
                sl_errf(err, "%s:%zu: no rank after the token", name, line);
                goto out;
            }
            for (; k < e; k++) {
                if (text[k] < '0' || text[k] > '9' || r64 > 0x7FFFFFFF) {
                    sl_errf(err, "%s:%zu: rank '%.*s' is not an integer below 2^31", name, line,
                            (int)(e - (size_t)(sp - text) - 1 > 40 ? 40 : e - (size_t)(sp - text) - 1), sp + 1);
                    goto out;
                }
                r64 = r64 * 10 + (uint64_t)(text[k] - '0');
            }
            if (r64 > 0x7FFFFFFF) {
                sl_errf(err, "%s:%zu: rank %llu is not below 2^31", name, line, (unsigned long long)r64);
                goto out;
            }
            r = (uint32_t)r64;
        }
        if (r != ne && !trank) { /* the first rank out of order */
            trank = sl_xmalloc(cap * sizeof *trank);
            for (size_t i = 0; i < ne; i++)
                trank[i] = (uint32_t)i;
        }
        if (trank)
            trank[ne] = r;
        tlen[ne++] = (uint32_t)n;
        b->pool_len += (size_t)n;
        if ((int64_t)r > max_rank)
            max_rank = (int64_t)r;
    }
    if (ne == 0) {
        sl_errf(err, "%s: no tokens (a rank file has a base64 token and a rank on each line)", name);
        goto out;
    }
    /* ranks 0..ne-1, each once (so when they come in order): a duplicate
     * names both lines, else the first missing rank is named */
    if (trank) {
        tline = token_lines(text, len, ne);
        rank_line = sl_xcalloc(ne, sizeof *rank_line);
        for (size_t i = 0; i < ne; i++) {
            uint32_t r = trank[i];
            if (r >= ne)
                continue;
            if (rank_line[r]) {
                sl_errf(err, "%s:%u: rank %u is given twice (also on line %u)", name, tline[i], r, rank_line[r]);
                goto out;
            }
            rank_line[r] = tline[i];
        }
        for (uint32_t r = 0; r < ne; r++)
            if (!rank_line[r]) {
                sl_errf(err, "%s: rank %u is missing (the ranks of %zu tokens must be 0..%zu; the largest is %lld)",
                        name, r, ne, ne - 1, (long long)max_rank);
                goto out;
            }
    }
    sl_tt_alloc_ids(b, (uint32_t)ne);
    sl_words_init(b, ne);
    /* into the words table in line order; the slots are random, so each is
     * hashed and asked for AHEAD tokens before it is needed */
    enum { AHEAD = 16 };
    uint64_t hash[AHEAD];
    uint32_t off = 0, ahead_off = 0;
    size_t ahead = 0;
    for (size_t i = 0; i < ne; i++) {
        for (; ahead < ne && ahead < i + AHEAD; ahead++) {
            uint64_t h = XXH3_64bits(b->pool + ahead_off, tlen[ahead]);
            hash[ahead % AHEAD] = h;
            __builtin_prefetch(&b->words[h & b->words_mask]);
            ahead_off += tlen[ahead];
        }
        uint32_t id = trank ? trank[i] : (uint32_t)i;
        int64_t old = words_put(b, id, off, tlen[i], hash[i % AHEAD]);
        if (old >= 0) {
            if (!tline)
                tline = token_lines(text, len, ne);
            sl_errf(err, "%s:%u: the token of rank %u is also rank %lld (line %u)", name, tline[i], id, (long long)old,
                    rank_line ? rank_line[old] : tline[old]);
            goto out;
        }
        off += tlen[i];
    }
    *n_ranks = (uint32_t)ne;
    rc = 0;
out:
    free(tlen);
    free(trank);
    free(tline);
    free(rank_line);
    return rc;
}

/* Parses "NAME=ID,NAME=ID" (the last '=' of each item splits it). */
int sl_tt_parse_specials(const char *spec, const char *name, special **out, size_t *n, sl_err *err)
{
    *out = NULL;
    *n = 0;
    if (!spec || !*spec)
        return 0;
    size_t cap = 1;
    for (const char *p = spec; *p; p++)
        cap += *p == ',';
    special *sp = sl_xcalloc(cap, sizeof *sp);
    size_t k = 0;
    for (const char *p = spec;;) {
        const char *c = strchr(p, ','), *end = c ? c : p + strlen(p), *eq = NULL;
        for (const char *q = p; q < end; q++)
            if (*q == '=')
                eq = q;
        uint64_t id = 0;
        int ok = eq && eq > p && eq + 1 < end;
        for (const char *q = eq ? eq + 1 : end; ok && q < end; q++) {
            ok = *q >= '0' && *q <= '9' && id <= 0x7FFFFFFF;
            id = id * 10 + (uint64_t)(*q - '0');
        }
        if (!ok || id > 0x7FFFFFFF) {
            sl_tt_free_specials(sp, k);
            return sl_errf(err, "%s: special tokens: '%.*s' is not NAME=ID (an id below 2^31)", name, (int)(end - p),
                           p);
        }
        sp[k].name = sl_xstrndup(p, (size_t)(eq - p));
        sp[k].len = (size_t)(eq - p);
        sp[k].id = (uint32_t)id;
        for (size_t j = 0; j < k; j++) {
            int same_name = sp[j].len == sp[k].len && !memcmp(sp[j].name, sp[k].name, sp[k].len);
            if (same_name || sp[j].id == sp[k].id) {
                if (same_name)
                    sl_errf(err, "%s: special tokens: name '%s' is given twice", name, sp[k].name);
                else
                    sl_errf(err, "%s: special tokens: id %u is given twice ('%s' and '%s')", name, sp[k].id, sp[j].name,
                            sp[k].name);
                sl_tt_free_specials(sp, k + 1);
                return -1;
            }
        }
        k++;
        if (!c)
            break;
        p = c + 1;
    }
    *out = sp;
    *n = k;
    return 0;
}

/* Gives the special tokens their ids (beyond the ordinary ones when
 * needed), bytes and trie entries. */
int sl_tt_add_specials(tiktoken *t, const char *name, sl_err *err)
{
    sl_bpe *b = t->b;
    uint32_t max_id = b->vocab_size;
    for (size_t i = 0; i < t->n_sp; i++) {
        uint32_t id = t->sp[i].id;
        if (id >= t->offset && id < t->offset + t->n_ranks)
            return sl_errf(err, "%s: special token '%s' has id %u, the id of an ordinary token (rank %u)", name,
                           t->sp[i].name, id, id - t->offset);
        if (id + 1 > max_id)
            max_id = id + 1;
    }
    if (max_id > b->vocab_size) {
        if ((uint64_t)max_id > (uint64_t)b->vocab_size + 16 * 1024 * 1024)
            return sl_errf(err, "%s: special token id %u is far beyond the %u ordinary tokens", name, max_id - 1,
                           b->vocab_size);
        b->tok_off = sl_xrealloc(b->tok_off, max_id * sizeof *b->tok_off);
        b->tok_len = sl_xrealloc(b->tok_len, max_id * sizeof *b->tok_len);
        b->txt_off = sl_xrealloc(b->txt_off, max_id * sizeof *b->txt_off);
        for (uint32_t i = b->vocab_size; i < max_id; i++)
            b->tok_len[i] = b->txt_off[i] = UINT32_MAX, b->tok_off[i] = 0;
        b->vocab_size = max_id;
    }
    b->added = sl_xcalloc(t->n_sp ? t->n_sp : 1, sizeof *b->added);
    b->n_added = t->n_sp;
    for (size_t i = 0; i < t->n_sp; i++) {
        sl_added *a = &b->added[i];
        a->id = t->sp[i].id;
        a->content = sl_xstrndup(t->sp[i].name, t->sp[i].len);
        a->len = t->sp[i].len;
        a->match = sl_xstrndup(t->sp[i].name, t->sp[i].len);
        a->match_len = t->sp[i].len;
        a->special = 1;
        sl_tt_set_bytes(b, a->id, a->content, a->len);
        if (a->len)
            sl_trie_add(&b->raw_trie, a->match, a->match_len, (int32_t)i);
    }
    return 0;
}

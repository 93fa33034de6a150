/* The byte-level BPE model's tables (bpe_load.h): GPT-2's byte alphabet,
 * the vocabulary (id -> bytes for decoding, text -> id while loading), the
 * merges, the added tokens; freeing, the lookups and decoding. Everything is
 * converted to raw bytes at load time (the byte-level alphabet only exists
 * in the files), so the encoder works on the text's own bytes. */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "base/json.h"
#include "tokenize/json_skim.h"
#include "tokenize/models/bpe_load.h"

/* GPT-2's bytes_to_unicode(): printable bytes map to themselves, the other
 * 68 to U+0100.. in byte order. */
void sl_bpe_byte_level_tables(uint32_t b2u[256], int16_t u2b[512])
{
    int n = 0;
    for (int i = 0; i < 512; i++)
        u2b[i] = -1;
    for (int b = 0; b < 256; b++) {
        int keep = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        b2u[b] = keep ? (uint32_t)b : (uint32_t)(256 + n++);
        u2b[b2u[b]] = (int16_t)b;
    }
}

/* Byte-level decoding of one token's text, as HF's ByteLevel decoder does:
 * when every character is in the byte alphabet, the bytes they stand for;
 * otherwise the token's own UTF-8 unchanged. Writes at most n bytes to out
 * and returns how many. */
static size_t byte_level_decode_to(const char *s, size_t n, char *out)
{
    static uint32_t b2u[256];
    static int16_t u2b[512];
    static int init;
    if (!init) { /* idempotent, so a race between loaders is harmless */
        sl_bpe_byte_level_tables(b2u, u2b);
        init = 1;
    }
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t m = sl_utf8_seq((const uint8_t *)s + i, n - i, &cp);
        if (!m || cp >= 512 || u2b[cp] < 0) {
            memcpy(out, s, n);
            return n;
        }
        out[k++] = (char)u2b[cp];
        i += m;
    }
    return k;
}

static void byte_level_decode(const char *s, size_t n, sl_buf *out)
{
    sl_buf_reserve(out, n);
    out->len += byte_level_decode_to(s, n, out->data + out->len);
    out->data[out->len] = 0;
}

/* 1 when every character of s is in the byte alphabet; the bytes in out. */
int sl_bpe_byte_level_only(const char *s, size_t n, sl_buf *out)
{
    size_t start = out->len;
    byte_level_decode(s, n, out);
    if (out->len - start != n)
        return 1; /* decoded: each character was one byte of the alphabet... */
    /* ...or the text came back unchanged: pure when it is ASCII of the alphabet */
    for (size_t i = 0; i < n; i++) {
        uint8_t c = (uint8_t)s[i];
        if (c < 0x21 || c > 0x7E)
            return 0;
    }
    return 1;
}

void sl_bpe_map_init(sl_bpe_map *m, size_t n)
{
    size_t cap = sl_pow2_cap(16, n + n / 4 + 16);
    m->slots = sl_xzalloc_touched(cap, sizeof *m->slots);
    m->mask = cap - 1;
}

static inline uint64_t map_head(const char *s, size_t n)
{
    return sl_head8((const uint8_t *)s, n);
}

sl_bpe_slot *sl_bpe_map_find(sl_bpe_map *m, const char *s, size_t n)
{
    size_t i = (size_t)XXH3_64bits(s, n) & m->mask;
    uint64_t head = map_head(s, n);
    for (;; i = (i + 1) & m->mask) {
        sl_bpe_slot *e = &m->slots[i];
        if (!e->s || (e->head == head && e->n == n && (n <= 8 || !memcmp(e->s + 8, s + 8, n - 8))))
            return e;
    }
}

void sl_bpe_map_set(sl_bpe_slot *slot, const char *s, size_t n, uint32_t id)
{
    slot->s = s;
    slot->n = (uint32_t)n;
    slot->id = id;
    slot->head = map_head(s, n);
}

static void set_token(sl_bpe *b, uint32_t id, const char *text, size_t n)
{
    if (b->pool_len + n + 1 > b->pool_cap) { /* grow geometrically: ~50k tokens are added */
        b->pool_cap = 2 * (b->pool_len + n + 1) + 4096;
        b->pool = sl_xrealloc(b->pool, b->pool_cap);
    }
    size_t len = byte_level_decode_to(text, n, b->pool + b->pool_len);
    b->tok_off[id] = (uint32_t)b->pool_len;
    b->tok_len[id] = (uint32_t)len;
    b->pool_len += len;
}

static void alloc_ids(sl_bpe *b, uint32_t vocab_size)
{
    b->vocab_size = vocab_size;
    b->tok_off = sl_xcalloc(vocab_size, sizeof *b->tok_off);
    b->tok_len = sl_xmalloc(vocab_size * sizeof *b->tok_len);
    b->txt_off = sl_xmalloc(vocab_size * sizeof *b->txt_off);
    for (uint32_t i = 0; i < vocab_size; i++)
        b->tok_len[i] = b->txt_off[i] = UINT32_MAX;
}

/* Fills ids, byte table and the text->id map from the vocab entries. */
int sl_bpe_load_vocab(sl_bpe *b, const sl_bpe_vent *v, size_t n, uint32_t extra_max, sl_bpe_map *map, sl_buf *txt,
                      sl_err *err)
{
    uint32_t max_id = extra_max;
    for (size_t i = 0; i < n; i++)
        if (v[i].id + 1 > max_id)
            max_id = v[i].id + 1;
    /* Ids index tables: a hostile file with one huge id must not make us
     * allocate gigabytes. Real vocabularies are dense (ids 0..n-1). */
    if ((uint64_t)max_id > 2 * ((uint64_t)n + b->n_added) + 256)
        return sl_errf(err, "%s: vocab ids are not dense (id %u with %zu entries)", b->name, max_id - 1, n);
    alloc_ids(b, max_id);
    sl_bpe_map_init(map, n + 64);
    for (size_t i = 0; i < n; i++) {
        uint32_t id = v[i].id;
        if (v[i].len >= UINT32_MAX)
            return sl_errf(err, "%s: offset %zu: a vocab entry of %zu bytes is too long", b->name, v[i].off, v[i].len);
        if (b->txt_off[id] != UINT32_MAX)
            return sl_errf(err, "%s: offset %zu: id %lld is used twice in the vocab", b->name, v[i].off, (long long)id);
        sl_bpe_slot *s = sl_bpe_map_find(map, v[i].key, v[i].len);
        sl_bpe_map_set(s, v[i].key, v[i].len, id);
        b->txt_off[id] = (uint32_t)txt->len;
        sl_buf_append(txt, v[i].key, v[i].len);
        sl_buf_putc(txt, 0);
        set_token(b, id, v[i].key, v[i].len);
    }
    /* Single-byte tokens: the vocab entry whose text is the byte's symbol. */
    uint32_t b2u[256];
    int16_t u2b[512];
    sl_bpe_byte_level_tables(b2u, u2b);
    for (int c = 0; c < 256; c++) {
        char u[4];
        size_t un = sl_utf8_encode(u, b2u[c]);
        sl_bpe_slot *s = sl_bpe_map_find(map, u, un);
        b->byte_id[c] = s->s ? (int32_t)s->id : -1;
    }
    return 0;
}

int sl_bpe_add_merge(sl_bpe *b, sl_bpe_map *map, const char *l, size_t ln, const char *r, size_t rn, size_t rank,
                     const char *where, size_t pos, sl_err *err)
{
    sl_bpe_slot *a = sl_bpe_map_find(map, l, ln);
    if (!a->s)
        return sl_errf(err, "%s:%s %zu: merge token '%.*s' is not in the vocab", b->name, where, pos, (int)ln, l);
    uint32_t ida = a->id;
    sl_bpe_slot *c = sl_bpe_map_find(map, r, rn);
    if (!c->s)
        return sl_errf(err, "%s:%s %zu: merge token '%.*s' is not in the vocab", b->name, where, pos, (int)rn, r);
    uint32_t idb = c->id;
    /* HF: the merged token is a + b without b's continuing-subword prefix
     * (its first prefix_len bytes, whatever they are) */
    if (rn < b->prefix_len)
        return sl_errf(err, "%s:%s %zu: merge token '%.*s' is shorter than the continuing_subword_prefix", b->name,
                       where, pos, (int)rn, r);
    r += b->prefix_len, rn -= b->prefix_len;
    char stackbuf[256];
    char *cat = ln + rn <= sizeof stackbuf ? stackbuf : sl_xmalloc(ln + rn);
    memcpy(cat, l, ln);
    memcpy(cat + ln, r, rn);
    sl_bpe_slot *m = sl_bpe_map_find(map, cat, ln + rn);
    if (cat != stackbuf)
        free(cat);
    if (!m->s)
        return sl_errf(err, "%s:%s %zu: the merge of '%.*s' and '%.*s' is not in the vocab", b->name, where, pos,
                       (int)ln, l, (int)rn, r);
    /* A repeated merge takes its last rank: HF collects the merges into a
     * hash map, where a later insert replaces an earlier one. */
    sl_merge_insert(b, ida, idb, (uint32_t)rank, m->id);
    return 0;
}

/* After the vocab: give added tokens their decode bytes and tries. */
static int finish_added(sl_bpe *b, sl_buf *txt, sl_err *err)
{
    uint32_t max_id = b->vocab_size;
    for (size_t i = 0; i < b->n_added; i++)
        if (b->added[i].id + 1 > max_id)
            max_id = b->added[i].id + 1;
    if ((uint64_t)max_id > 2 * ((uint64_t)b->vocab_size + b->n_added) + 256)
        return sl_errf(err, "%s: added token id %u is far beyond the vocab (%u ids)", b->name, max_id - 1,
                       b->vocab_size);
    if (max_id > b->vocab_size) {
        uint32_t old = b->vocab_size;
        b->tok_off = sl_xrealloc(b->tok_off, max_id * sizeof *b->tok_off);
        b->tok_len = sl_xrealloc(b->tok_len, max_id * sizeof *b->tok_len);
        b->txt_off = sl_xrealloc(b->txt_off, max_id * sizeof *b->txt_off);
        for (uint32_t i = old; i < max_id; i++)
            b->tok_len[i] = b->txt_off[i] = UINT32_MAX, b->tok_off[i] = 0;
        b->vocab_size = max_id;
    }
    sl_norm_scratch ns = {0};
    for (size_t i = 0; i < b->n_added; i++) {
        sl_added *a = &b->added[i];
        /* HF looks an added token's id up as the added token first. */
        b->txt_off[a->id] = (uint32_t)txt->len;
        sl_buf_append(txt, a->content, a->len);
        sl_buf_putc(txt, 0);
        if (a->normalized && b->norm.n) {
            sl_buf nb = {0};
            if (sl_normalize(&b->norm, &ns, a->content, a->len, &nb, err)) {
                sl_buf_free(&nb);
                sl_norm_scratch_free(&ns);
                return -1;
            }
            a->match = nb.data ? nb.data : sl_xstrdup("");
            a->match_len = nb.len;
        } else {
            a->match = sl_xstrndup(a->content, a->len);
            a->match_len = a->len;
        }
        /* HF decodes a normalized added token as its normalized form (e.g.
         * "Quick" under Lowercase decodes as "quick"). */
        set_token(b, a->id, a->match, a->match_len);
        if (a->match_len)
            sl_trie_add(a->normalized ? &b->norm_trie : &b->raw_trie, a->match, a->match_len, (int32_t)i);
    }
    sl_norm_scratch_free(&ns);
    return 0;
}

sl_bpe *sl_bpe_new(const char *name)
{
    sl_bpe *b = sl_xcalloc(1, sizeof *b);
    b->name = sl_xstrdup(name);
    b->cache = sl_scache_shared_new();
    b->use_regex = 1;
    b->unk_id = -1;
    return b;
}

int sl_bpe_finish(sl_bpe *b, sl_buf *txt, sl_err *err)
{
    if (finish_added(b, txt, err))
        return -1;
    b->txt_pool = txt->data ? txt->data : sl_xstrdup("");
    txt->data = NULL;
    return sl_pretok_compile(b, err);
}

void sl_bpe_free(sl_bpe *b)
{
    if (!b)
        return;
    free(b->name);
    sl_scache_shared_free(b->cache);
    free(b->tok_off);
    free(b->tok_len);
    free(b->txt_off);
    free(b->pool);
    free(b->txt_pool);
    free(b->merges);
    free(b->merge_bloom);
    free(b->merge_grid);
    free(b->merge_rank_id);
    free(b->words);
    free(b->bloom);
    free(b->dec_off);
    free(b->dec_len);
    free(b->dec_pool);
    sl_decoder_free(&b->dec);
    sl_postproc_free(&b->post);
    sl_pretokenizer_free(&b->pre_before);
    sl_pretokenizer_free(&b->pre_after);
    sl_added_free(b->added, b->n_added);
    sl_normalizer_free(&b->norm);
    sl_trie_free(&b->raw_trie);
    sl_trie_free(&b->norm_trie);
    if (b->re)
        pcre2_code_free(b->re);
    free(b);
}

uint32_t sl_bpe_vocab_size(const sl_bpe *b)
{
    return b->vocab_size;
}

const char *sl_bpe_fingerprint(const sl_bpe *b)
{
    return b->fingerprint;
}

int64_t sl_bpe_token_id(const sl_bpe *b, const char *text)
{
    for (uint32_t i = 0; i < b->vocab_size; i++)
        if (b->txt_off[i] != UINT32_MAX && !strcmp(b->txt_pool + b->txt_off[i], text))
            return i;
    return -1;
}

const char *sl_bpe_id_bytes(const sl_bpe *b, uint32_t id, size_t *len)
{
    if (id >= b->vocab_size || b->tok_len[id] == UINT32_MAX)
        return NULL;
    *len = b->tok_len[id];
    return b->pool + b->tok_off[id];
}

int sl_bpe_decode(const sl_bpe *b, const uint32_t *ids, size_t n, sl_buf *out, sl_err *err)
{
    if (b->dec_chain) {
        sl_toklist a = {0}, t = {0};
        for (size_t i = 0; i < n; i++) {
            if (ids[i] >= b->vocab_size || b->dec_off[ids[i]] == UINT32_MAX) {
                sl_toklist_free(&a);
                return sl_errf(err, "token %zu: id %u is not in the vocabulary of %s", i, ids[i], b->name);
            }
            sl_toklist_push(&a, b->dec_pool + b->dec_off[ids[i]], b->dec_len[ids[i]]);
        }
        sl_decoder_run(&b->dec, &a, &t, out);
        sl_toklist_free(&a);
        sl_toklist_free(&t);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *p = sl_bpe_id_bytes(b, ids[i], &len);
        if (!p)
            return sl_errf(err, "token %zu: id %u is not in the vocabulary of %s", i, ids[i], b->name);
        sl_buf_append(out, p, len);
    }
    return 0;
}

void sl_bpe_load_abort(sl_bpe *b, sl_bpe_map *map, sl_buf *txt, sl_json_doc *doc)
{
    free(map->slots);
    sl_buf_free(txt);
    sl_json_free(doc);
    sl_bpe_free(b);
}

sl_json_doc *sl_bpe_load_begin(const char *text, size_t len, const sl_json_skip *skip, size_t n_skip, const char *name,
                               sl_bpe **b, sl_err *err)
{
    sl_json_doc *doc = sl_tokjson_parse_skip(text, len, skip, n_skip, name, err);
    *b = doc ? sl_bpe_new(name) : NULL;
    return doc;
}

/* Loading byte-level BPE tokenizers: Hugging Face tokenizer.json, or the
 * GPT-2 vocab.json + merges.txt pair. Everything is converted to raw bytes
 * at load time (the byte-level alphabet only exists in the files), so the
 * encoder works on the text's own bytes. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

#include "stream/io.h"
#include "stream/json.h"
#include "tokenize/bpe_internal.h"
#include "tokenize/postproc.h"
#include "tokenize/sha256.h"

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
static int byte_level_only(const char *s, size_t n, sl_buf *out)
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

/* --- a string -> id table used only while loading --------------------- */
typedef struct {
    const char *s;
    uint32_t n; /* keys are shorter than 4 GiB: the token pools take 32-bit offsets */
    uint32_t id;
} str_slot;

typedef struct {
    str_slot *slots;
    size_t mask;
} str_map;

static void smap_init(str_map *m, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n + 16)
        cap *= 2;
    m->slots = sl_xcalloc(cap, sizeof *m->slots);
    m->mask = cap - 1;
}

static str_slot *smap_find(str_map *m, const char *s, size_t n)
{
    size_t i = (size_t)XXH3_64bits(s, n) & m->mask;
    while (m->slots[i].s && (m->slots[i].n != n || memcmp(m->slots[i].s, s, n)))
        i = (i + 1) & m->mask;
    return &m->slots[i];
}

/* --- building the tokenizer --------------------------------------------- */
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

/* Fills ids, byte table and the text->id map from a JSON vocab object. */
static int load_vocab(sl_bpe *b, const sl_json *vocab, uint32_t extra_max, str_map *map, sl_buf *txt, sl_err *err)
{
    if (!vocab || vocab->type != SL_JSON_OBJECT)
        return sl_errf(err, "%s: the vocab is missing or not a JSON object", b->name);
    uint32_t max_id = extra_max;
    for (size_t i = 0; i < vocab->n; i++) {
        int64_t id;
        if (!sl_json_is_int(vocab->kids[i], &id) || id < 0 || id >= (int64_t)1 << 31)
            return sl_errf(err, "%s:offset %zu: vocab entry '%.60s' has no valid integer id", b->name,
                           vocab->kids[i]->offset, vocab->keys[i]->str);
        if ((uint32_t)id + 1 > max_id)
            max_id = (uint32_t)id + 1;
    }
    /* Ids index tables: a hostile file with one huge id must not make us
     * allocate gigabytes. Real vocabularies are dense (ids 0..n-1). */
    if ((uint64_t)max_id > 2 * ((uint64_t)vocab->n + b->n_added) + 256)
        return sl_errf(err, "%s: vocab ids are not dense (id %u with %zu entries)", b->name, max_id - 1, vocab->n);
    alloc_ids(b, max_id);
    smap_init(map, vocab->n + 64);
    for (size_t i = 0; i < vocab->n; i++) {
        int64_t id;
        sl_json_is_int(vocab->kids[i], &id);
        const sl_json *k = vocab->keys[i];
        if (k->str_len >= UINT32_MAX)
            return sl_errf(err, "%s:offset %zu: a vocab entry of %zu bytes is too long", b->name, k->offset,
                           k->str_len);
        if (b->txt_off[id] != UINT32_MAX)
            return sl_errf(err, "%s:offset %zu: id %lld is used twice in the vocab", b->name, k->offset, (long long)id);
        str_slot *s = smap_find(map, k->str, k->str_len);
        s->s = k->str, s->n = (uint32_t)k->str_len, s->id = (uint32_t)id;
        b->txt_off[id] = (uint32_t)txt->len;
        sl_buf_append(txt, k->str, k->str_len);
        sl_buf_putc(txt, 0);
        set_token(b, (uint32_t)id, k->str, k->str_len);
    }
    /* Single-byte tokens: the vocab entry whose text is the byte's symbol. */
    uint32_t b2u[256];
    int16_t u2b[512];
    sl_bpe_byte_level_tables(b2u, u2b);
    for (int c = 0; c < 256; c++) {
        char u[4];
        size_t un = sl_utf8_encode(u, b2u[c]);
        str_slot *s = smap_find(map, u, un);
        b->byte_id[c] = s->s ? (int32_t)s->id : -1;
    }
    return 0;
}

static int is_null(const sl_json *v)
{
    return !v || v->type == SL_JSON_NULL;
}

static const char *type_of(const sl_json *v)
{
    const char *t = v && v->type == SL_JSON_OBJECT ? sl_json_get_str(v, "type") : NULL;
    return t ? t : "?";
}

/* continuing_subword_prefix / end_of_word_suffix: the initial symbols of
 * each byte with them, as HF's BPE makes a word's symbols (prefix on every
 * character but the first, suffix on the last). */
static int affix_ids(sl_bpe *b, str_map *map, const sl_json *prefix, const sl_json *suffix, sl_err *err)
{
    uint32_t b2u[256];
    int16_t u2b[512];
    sl_bpe_byte_level_tables(b2u, u2b);
    const char *pre = is_null(prefix) ? "" : prefix->str, *suf = is_null(suffix) ? "" : suffix->str;
    size_t pn = is_null(prefix) ? 0 : prefix->str_len, sn = is_null(suffix) ? 0 : suffix->str_len;
    sl_buf t = {0};
    for (int c = 0; c < 256; c++) {
        char u[4];
        size_t un = sl_utf8_encode(u, b2u[c]);
        for (int k = 0; k < 3; k++) { /* prefixed, suffixed, both */
            sl_buf_clear(&t);
            if (k != 1)
                sl_buf_append(&t, pre, pn);
            sl_buf_append(&t, u, un);
            if (k != 0)
                sl_buf_append(&t, suf, sn);
            str_slot *e = smap_find(map, t.data, t.len);
            int32_t id = e->s ? (int32_t)e->id : -1;
            (k == 0 ? b->byte_id_cont : k == 1 ? b->byte_id_end : b->byte_id_both)[c] = id;
        }
    }
    sl_buf_free(&t);
    (void)err;
    return 0;
}

/* The token strings a decoder chain sees: the vocab text of each id, an
 * added token's normalized content for its id (HF decodes it so). */
static void build_dec_strings(sl_bpe *b, const sl_json *vocab)
{
    sl_buf pool = {0};
    b->dec_off = sl_xmalloc(b->vocab_size * sizeof *b->dec_off);
    b->dec_len = sl_xmalloc(b->vocab_size * sizeof *b->dec_len);
    for (uint32_t i = 0; i < b->vocab_size; i++)
        b->dec_off[i] = b->dec_len[i] = UINT32_MAX;
    for (size_t i = 0; i < vocab->n; i++) {
        int64_t id;
        sl_json_is_int(vocab->kids[i], &id);
        b->dec_off[id] = (uint32_t)pool.len;
        b->dec_len[id] = (uint32_t)vocab->keys[i]->str_len;
        sl_buf_append(&pool, vocab->keys[i]->str, vocab->keys[i]->str_len);
    }
    for (size_t i = 0; i < b->n_added; i++) {
        const sl_added *a = &b->added[i];
        b->dec_off[a->id] = (uint32_t)pool.len;
        b->dec_len[a->id] = (uint32_t)a->match_len;
        sl_buf_append(&pool, a->match, a->match_len);
    }
    b->dec_pool = pool.data ? pool.data : sl_xstrdup("");
}

static int add_merge(sl_bpe *b, str_map *map, const char *l, size_t ln, const char *r, size_t rn, size_t rank,
                     const char *where, size_t pos, sl_err *err)
{
    str_slot *a = smap_find(map, l, ln);
    if (!a->s)
        return sl_errf(err, "%s:%s %zu: merge token '%.*s' is not in the vocab", b->name, where, pos, (int)ln, l);
    uint32_t ida = a->id;
    str_slot *c = smap_find(map, r, rn);
    if (!c->s)
        return sl_errf(err, "%s:%s %zu: merge token '%.*s' is not in the vocab", b->name, where, pos, (int)rn, r);
    uint32_t idb = c->id;
    char stackbuf[256];
    char *cat = ln + rn <= sizeof stackbuf ? stackbuf : sl_xmalloc(ln + rn);
    /* HF: the merged token is a + b without b's continuing-subword prefix
     * (its first prefix_len bytes, whatever they are) */
    if (rn < b->prefix_len)
        return sl_errf(err, "%s:%s %zu: merge token '%.*s' is shorter than the continuing_subword_prefix", b->name,
                       where, pos, (int)rn, r);
    r += b->prefix_len, rn -= b->prefix_len;
    memcpy(cat, l, ln);
    memcpy(cat + ln, r, rn);
    str_slot *m = smap_find(map, cat, ln + rn);
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

static int load_merges_json(sl_bpe *b, const sl_json *merges, str_map *map, sl_err *err)
{
    if (!merges || merges->type != SL_JSON_ARRAY)
        return sl_errf(err, "%s: model.merges is missing or not an array", b->name);
    sl_merge_table_init(b, merges->n);
    for (size_t i = 0; i < merges->n; i++) {
        const sl_json *m = merges->kids[i];
        if (m->type == SL_JSON_STRING) {
            const char *sp = memchr(m->str, ' ', m->str_len);
            if (!sp || memchr(sp + 1, ' ', m->str_len - (size_t)(sp + 1 - m->str)))
                return sl_errf(err, "%s:offset %zu: merge '%.60s' is not two tokens separated by one space", b->name,
                               m->offset, m->str);
            if (add_merge(b, map, m->str, (size_t)(sp - m->str), sp + 1, m->str_len - (size_t)(sp + 1 - m->str), i,
                          "merge", i, err))
                return -1;
        } else if (m->type == SL_JSON_ARRAY && m->n == 2 && m->kids[0]->type == SL_JSON_STRING &&
                   m->kids[1]->type == SL_JSON_STRING) {
            if (add_merge(b, map, m->kids[0]->str, m->kids[0]->str_len, m->kids[1]->str, m->kids[1]->str_len, i,
                          "merge", i, err))
                return -1;
        } else {
            return sl_errf(err, "%s:offset %zu: a merge must be \"a b\" or [\"a\", \"b\"]", b->name, m->offset);
        }
    }
    return 0;
}

static int load_merges_txt(sl_bpe *b, const char *txt, size_t n, str_map *map, sl_err *err)
{
    size_t lines = 0;
    for (size_t i = 0; i < n; i++)
        lines += txt[i] == '\n';
    sl_merge_table_init(b, lines + 1);
    size_t rank = 0, lineno = 0;
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(txt + i, '\n', n - i);
        size_t e = nl ? (size_t)(nl - txt) : n;
        const char *l = txt + i;
        size_t ln = e - i;
        lineno++;
        i = e + 1;
        if (ln && l[ln - 1] == '\r')
            ln--;
        if (ln == 0 || (lineno == 1 && ln >= 8 && !memcmp(l, "#version", 8)))
            continue;
        const char *sp = memchr(l, ' ', ln);
        if (!sp || memchr(sp + 1, ' ', ln - (size_t)(sp + 1 - l)))
            return sl_errf(err, "%s:%zu: merge line is not two tokens separated by one space", b->name, lineno);
        if (add_merge(b, map, l, (size_t)(sp - l), sp + 1, ln - (size_t)(sp + 1 - l), rank++, "line", lineno, err))
            return -1;
    }
    return 0;
}

/* The fast forms of a Split step: the Llama-3 (= cl100k), Qwen2, o200k and
 * tekken patterns, isolating their matches, not inverted. Its SL_PRETOK_*
 * kind, or -1 when it is another Split (run by the general pre-tokenizer). */
static int fast_split(const sl_json *p)
{
    const sl_json *pat = sl_json_get(p, "pattern");
    const char *re = pat && pat->type == SL_JSON_OBJECT ? sl_json_get_str(pat, "Regex") : NULL;
    const char *beh = sl_json_get_str(p, "behavior");
    int inv = 0;
    if (!re || !beh || strcmp(beh, "Isolated") || (sl_json_get_bool(p, "invert", &inv) == 0 && inv))
        return -1;
    return !strcmp(re, sl_pretok_llama3_pattern)   ? SL_PRETOK_LLAMA3
           : !strcmp(re, sl_pretok_qwen2_pattern)  ? SL_PRETOK_QWEN2
           : !strcmp(re, sl_pretok_o200k_pattern)  ? SL_PRETOK_O200K
           : !strcmp(re, sl_pretok_tekken_pattern) ? SL_PRETOK_TEKKEN
                                                   : -1;
}

/* A ByteLevel step's two options (serde defaults true); 0 when p is not a ByteLevel. */
static int byte_level_opts(const sl_json *p, int *add_prefix_space, int *use_regex)
{
    if (strcmp(type_of(p), "ByteLevel"))
        return 0;
    int v;
    *add_prefix_space = sl_json_get_bool(p, "add_prefix_space", &v) == 0 ? v : 1;
    *use_regex = sl_json_get_bool(p, "use_regex", &v) == 0 ? v : 1;
    return 1;
}

/* Digits(individual_digits) then ByteLevel with its regex and no prefix
 * space (StarCoder, Refact): every number a piece of its own. */
static int fast_digits(const sl_json *d, const sl_json *bl)
{
    int v, aps, rx;
    return sl_json_get_bool(d, "individual_digits", &v) == 0 && v && byte_level_opts(bl, &aps, &rx) && rx && !aps;
}

/* Falcon's Sequence [Punctuation(Contiguous), ByteLevel(use_regex, no
 * prefix space), Digits(not individual), Split("[0-9][0-9][0-9]", Isolated)]:
 * exactly these settings. */
static int fast_falcon(const sl_json *list)
{
    const sl_json *pu = list->kids[0], *dg = list->kids[2], *sp = list->kids[3];
    if (strcmp(type_of(pu), "Punctuation") || strcmp(type_of(dg), "Digits") || strcmp(type_of(sp), "Split"))
        return 0;
    const sl_json *pat = sl_json_get(sp, "pattern");
    const char *re = pat && pat->type == SL_JSON_OBJECT ? sl_json_get_str(pat, "Regex") : NULL;
    const char *beh = sl_json_get_str(pu, "behavior"), *sbeh = sl_json_get_str(sp, "behavior");
    int v = 0, inv = 0, aps, rx;
    return beh && !strcmp(beh, "Contiguous") && !(sl_json_get_bool(dg, "individual_digits", &v) == 0 && v) && re &&
           !strcmp(re, "[0-9][0-9][0-9]") && sbeh && !strcmp(sbeh, "Isolated") &&
           !(sl_json_get_bool(sp, "invert", &inv) == 0 && inv) && byte_level_opts(list->kids[1], &aps, &rx) && rx &&
           !aps;
}

/* The leaves of a pre_tokenizer (Sequences flattened), at most SL_PRETOK_MAX + 1. */
static int flatten_pre(const sl_json *p, const sl_json **leaf, size_t *n, int depth, const char *name, sl_err *err)
{
    if (!strcmp(type_of(p), "Sequence")) {
        const sl_json *list = sl_json_get(p, "pretokenizers");
        if (!list || list->type != SL_JSON_ARRAY)
            return sl_errf(err, "%s: pre_tokenizer Sequence has no 'pretokenizers' array", name);
        if (depth >= 8)
            return sl_errf(err, "%s: pre_tokenizer Sequences nested too deeply", name);
        for (size_t i = 0; i < list->n; i++)
            if (flatten_pre(list->kids[i], leaf, n, depth + 1, name, err))
                return -1;
        return 0;
    }
    if (*n == SL_PRETOK_MAX + 1)
        return sl_errf(err, "%s: more than %d pre_tokenizer steps", name, SL_PRETOK_MAX);
    leaf[(*n)++] = p;
    return 0;
}

/* Any Sequence of the splitting pre-tokenizers of pretokenizer.h with one
 * ByteLevel step among them: the steps before it run on the normalized
 * text, those after it on its byte-level text, as HF runs them. */
static int load_general(sl_bpe *b, const sl_json *p, sl_err *err)
{
    const sl_json *leaf[SL_PRETOK_MAX + 1];
    size_t n = 0, at = SIZE_MAX;
    if (flatten_pre(p, leaf, &n, 0, b->name, err))
        return -1;
    for (size_t i = 0; i < n; i++) {
        const char *t = type_of(leaf[i]);
        if (!strcmp(t, "ByteLevel")) {
            if (at != SIZE_MAX)
                return sl_errf(err, "%s: pre_tokenizer: more than one ByteLevel step is not supported", b->name);
            at = i;
        } else if (strcmp(t, "BertPreTokenizer") && strcmp(t, "Whitespace") && strcmp(t, "WhitespaceSplit") &&
                   strcmp(t, "Punctuation") && strcmp(t, "Digits") && strcmp(t, "Split")) {
            return sl_errf(err,
                           "%s: pre_tokenizer '%s' is not supported with byte-level BPE (supported: ByteLevel, and "
                           "with it BertPreTokenizer, Whitespace, WhitespaceSplit, Punctuation, Digits, Split, "
                           "Sequence)",
                           b->name, t);
        }
    }
    if (at == SIZE_MAX)
        return sl_errf(err, "%s: pre_tokenizer %s has no ByteLevel step, which byte-level BPE needs", b->name,
                       type_of(p));
    for (size_t i = 0; i < n; i++)
        if (i != at && sl_pretokenizer_load(i < at ? &b->pre_before : &b->pre_after, leaf[i], b->name, err))
            return -1;
    byte_level_opts(leaf[at], &b->add_prefix_space, &b->bl_regex);
    b->general = 1;
    b->use_regex = 0; /* no pattern of the fast path to compile */
    sl_bpe_byte_level_tables(b->b2u, b->u2b);
    return 0;
}

/* The fast forms (pretok.c's scanners): a single ByteLevel; Split with a
 * known pattern then ByteLevel without regex or prefix space; Digits then
 * ByteLevel (StarCoder); Falcon's four steps. Anything else: load_general. */
static int load_pre_tokenizer(sl_bpe *b, const sl_json *p, sl_err *err)
{
    if (is_null(p))
        return sl_errf(err, "%s: pre_tokenizer is null; byte-level BPE needs a ByteLevel pre-tokenizer", b->name);
    if (byte_level_opts(p, &b->add_prefix_space, &b->use_regex))
        return 0;
    const sl_json *list = sl_json_get(p, "pretokenizers");
    if (strcmp(type_of(p), "Sequence") || !list || list->type != SL_JSON_ARRAY)
        return load_general(b, p, err);
    int aps, rx;
    if (list->n == 1 && byte_level_opts(list->kids[0], &b->add_prefix_space, &b->use_regex))
        return 0;
    if (list->n == 2 && !strcmp(type_of(list->kids[0]), "Digits") && fast_digits(list->kids[0], list->kids[1])) {
        b->pretok = SL_PRETOK_GPT2_DIGITS;
        return 0;
    }
    if (list->n == 4 && fast_falcon(list)) {
        b->pretok = SL_PRETOK_FALCON;
        return 0;
    }
    int kind = list->n == 2 && !strcmp(type_of(list->kids[0]), "Split") ? fast_split(list->kids[0]) : -1;
    if (kind >= 0 && byte_level_opts(list->kids[1], &aps, &rx) && !aps && !rx) {
        b->pretok = kind;
        b->add_prefix_space = 0;
        b->use_regex = 1; /* the split is Split's pattern */
        return 0;
    }
    return load_general(b, p, err);
}

/* ignore_merges: the model vocabulary entries by their bytes. Only entries
 * written wholly in the byte-level alphabet: a piece is always looked up in
 * that form, so no other entry can match it. */
static void build_words(sl_bpe *b, const sl_json *vocab)
{
    size_t cap = 16;
    while (cap < 2 * vocab->n + 16)
        cap *= 2;
    b->words = sl_xcalloc(cap, sizeof *b->words);
    b->words_mask = cap - 1;
    sl_buf tmp = {0};
    for (size_t i = 0; i < vocab->n; i++) {
        int64_t id;
        sl_json_is_int(vocab->kids[i], &id);
        const sl_json *k = vocab->keys[i];
        sl_buf_clear(&tmp);
        if (!byte_level_only(k->str, k->str_len, &tmp))
            continue;
        uint64_t h = XXH3_64bits(tmp.data ? tmp.data : "", tmp.len) & b->words_mask;
        while (b->words[h])
            h = (h + 1) & b->words_mask;
        b->words[h] = (uint32_t)id + 1;
    }
    sl_buf_free(&tmp);
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

static sl_bpe *new_bpe(const char *name)
{
    sl_bpe *b = sl_xcalloc(1, sizeof *b);
    b->name = sl_xstrdup(name);
    b->cache = sl_scache_shared_new();
    b->use_regex = 1;
    b->unk_id = -1;
    return b;
}

static int finish(sl_bpe *b, sl_buf *txt, sl_err *err)
{
    if (finish_added(b, txt, err))
        return -1;
    b->txt_pool = txt->data ? txt->data : sl_xstrdup("");
    txt->data = NULL;
    return sl_pretok_compile(b, err);
}

static sl_bpe *load_tokenizer_json(const char *text, size_t len, const char *name, sl_err *err)
{
    sl_json_opts jo = {.invalid_utf8 = SL_UTF8_ERROR};
    sl_json_doc *doc = sl_json_parse(text, len, &jo, err);
    if (!doc) {
        sl_err_prefix(err, "%s", name);
        return NULL;
    }
    sl_bpe *b = new_bpe(name);
    str_map map = {0};
    sl_buf txt = {0};
    const sl_json *root = sl_json_root(doc);
    const sl_json *model = root->type == SL_JSON_OBJECT ? sl_json_get(root, "model") : NULL;
    if (!model || model->type != SL_JSON_OBJECT) {
        sl_errf(err, "%s: not a tokenizer.json (no 'model' object)", name);
        goto fail;
    }
    const char *mt = sl_json_get_str(model, "type");
    if (mt && strcmp(mt, "BPE")) {
        sl_errf(err, "%s: model type '%s' is not supported (tokenizer.json models: BPE, Unigram, WordPiece, WordLevel)",
                name, mt);
        goto fail;
    }
    if (!sl_json_get(model, "merges") || !sl_json_get(model, "vocab")) {
        sl_errf(err, "%s: a BPE model without `vocab` and `merges`", name);
        goto fail;
    }
    static const char *const must_be_null[][2] = {{"truncation", "truncation"}, {"padding", "padding"}};
    for (size_t i = 0; i < 2; i++)
        if (!is_null(sl_json_get(root, must_be_null[i][0]))) {
            sl_errf(err, "%s: %s is not supported (set it to null)", name, must_be_null[i][1]);
            goto fail;
        }
    const sl_json *v;
    double dv;
    if ((v = sl_json_get(model, "dropout")) && !is_null(v) && (sl_json_get_num(model, "dropout", &dv) || dv != 0)) {
        sl_errf(err, "%s: BPE dropout is not supported", name);
        goto fail;
    }
    const sl_json *unk = sl_json_get(model, "unk_token");
    if (!is_null(unk) && unk->type != SL_JSON_STRING) {
        sl_errf(err, "%s: model.unk_token is not a string", name);
        goto fail;
    }
    const sl_json *prefix = sl_json_get(model, "continuing_subword_prefix"),
                  *suffix = sl_json_get(model, "end_of_word_suffix");
    if ((!is_null(prefix) && prefix->type != SL_JSON_STRING) || (!is_null(suffix) && suffix->type != SL_JSON_STRING)) {
        sl_errf(err, "%s: model.%s is not a string", name,
                !is_null(prefix) && prefix->type != SL_JSON_STRING ? "continuing_subword_prefix"
                                                                   : "end_of_word_suffix");
        goto fail;
    }
    if (!is_null(prefix) && prefix->str_len)
        b->affix = 1, b->prefix_len = prefix->str_len;
    if (!is_null(suffix) && suffix->str_len)
        b->affix = 1;
    int bv;
    if (sl_json_get_bool(model, "byte_fallback", &bv) == 0 && bv) {
        sl_errf(err, "%s: byte_fallback is not supported", name);
        goto fail;
    }
    b->ignore_merges = sl_json_get_bool(model, "ignore_merges", &bv) == 0 && bv;
    if (sl_normalizer_load(&b->norm, sl_json_get(root, "normalizer"), name, err) ||
        load_pre_tokenizer(b, sl_json_get(root, "pre_tokenizer"), err))
        goto fail;
    /* ByteLevel (or none): the bytes of the tokens, as before; any other
     * chain runs on the token strings (decoders.h) */
    const sl_json *dec = sl_json_get(root, "decoder");
    if (!is_null(dec) && strcmp(type_of(dec), "ByteLevel")) {
        if (sl_decoder_load(&b->dec, dec, name, err))
            goto fail;
        b->dec_chain = 1;
    }
    if (sl_added_parse(sl_json_get(root, "added_tokens"), name, &b->added, &b->n_added, err) ||
        load_vocab(b, sl_json_get(model, "vocab"), 0, &map, &txt, err) ||
        (b->affix && affix_ids(b, &map, prefix, suffix, err)) ||
        load_merges_json(b, sl_json_get(model, "merges"), &map, err) || finish(b, &txt, err))
        goto fail;
    if (b->dec_chain)
        build_dec_strings(b, sl_json_get(model, "vocab"));
    b->unk_id = -1;
    if (!is_null(unk)) { /* HF looks it up in the model vocab (an error there when a character needs it) */
        str_slot *u = smap_find(&map, unk->str, unk->str_len);
        if (!u->s) {
            sl_errf(err, "%s: model.unk_token '%.60s' is not in the vocab", name, unk->str);
            goto fail;
        }
        b->unk_id = (int32_t)u->id;
        int fu = 0;
        b->fuse_unk = sl_json_get_bool(model, "fuse_unk", &fu) == 0 && fu;
    }
    /* a post-processor acts only with --add-special-tokens (tokenizer.c),
     * but one sluice cannot run is refused either way */
    sl_postproc pp;
    if (sl_postproc_load(&pp, sl_json_get(root, "post_processor"), b->vocab_size, name, err))
        goto fail;
    sl_postproc_free(&pp);
    if (b->ignore_merges)
        build_words(b, sl_json_get(model, "vocab"));
    free(map.slots);
    sl_json_free(doc);
    return b;
fail:
    free(map.slots);
    sl_buf_free(&txt);
    sl_json_free(doc);
    sl_bpe_free(b);
    return NULL;
}

static sl_bpe *load_vocab_merges(const char *vj, size_t vn, const char *mt, size_t mn, const char *name, sl_err *err)
{
    sl_json_opts jo = {.invalid_utf8 = SL_UTF8_ERROR};
    sl_json_doc *doc = sl_json_parse(vj, vn, &jo, err);
    if (!doc) {
        sl_err_prefix(err, "%s", name);
        return NULL;
    }
    sl_bpe *b = new_bpe(name);
    str_map map = {0};
    sl_buf txt = {0};
    /* GPT-2 as HF and tiktoken load it: no normalizer, ByteLevel without a
     * prefix space, and <|endoftext|> as a special token when present. */
    b->add_prefix_space = 0;
    if (load_vocab(b, sl_json_root(doc), 0, &map, &txt, err) || load_merges_txt(b, mt, mn, &map, err))
        goto fail;
    str_slot *e = smap_find(&map, "<|endoftext|>", 13);
    if (e->s) {
        b->added = sl_xcalloc(1, sizeof *b->added);
        b->added[0] = (sl_added){.id = e->id, .content = sl_xstrdup("<|endoftext|>"), .len = 13, .special = 1};
        b->n_added = 1;
    }
    if (finish(b, &txt, err))
        goto fail;
    free(map.slots);
    sl_json_free(doc);
    return b;
fail:
    free(map.slots);
    sl_buf_free(&txt);
    sl_json_free(doc);
    sl_bpe_free(b);
    return NULL;
}

sl_bpe *sl_bpe_load_mem(const char *json, size_t json_len, const char *merges, size_t merges_len, const char *name,
                        sl_err *err)
{
    sl_bpe *b = merges ? load_vocab_merges(json, json_len, merges, merges_len, name, err)
                       : load_tokenizer_json(json, json_len, name, err);
    if (!b)
        return NULL;
    sl_sha256 h;
    uint8_t d[32];
    sl_sha256_init(&h);
    sl_sha256_update(&h, json, json_len);
    if (merges)
        sl_sha256_update(&h, merges, merges_len);
    sl_sha256_final(&h, d);
    sl_sha256_hex(d, b->fingerprint);
    return b;
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

sl_bpe *sl_bpe_load(const char *path, sl_err *err)
{
    sl_buf a = {0}, m = {0};
    int pair = 0;
    if (is_dir(path)) {
        sl_buf_printf(&a, "%s/tokenizer.json", path);
        if (!exists(a.data)) {
            sl_buf_clear(&a);
            sl_buf_printf(&a, "%s/vocab.json", path);
            sl_buf_printf(&m, "%s/merges.txt", path);
            pair = 1;
            if (!exists(a.data) || !exists(m.data)) {
                sl_errf(err, "%s: directory has neither tokenizer.json nor vocab.json + merges.txt", path);
                sl_buf_free(&a);
                sl_buf_free(&m);
                return NULL;
            }
        }
    } else {
        sl_buf_puts(&a, path);
        size_t n = strlen(path);
        if (n >= 10 && !strcmp(path + n - 10, "vocab.json")) {
            sl_buf_append(&m, path, n - 10);
            sl_buf_puts(&m, "merges.txt");
            pair = 1;
            if (!exists(m.data)) {
                sl_errf(err, "%s: a vocab.json needs merges.txt beside it (%s not found)", path, m.data);
                sl_buf_free(&a);
                sl_buf_free(&m);
                return NULL;
            }
        }
    }
    char *jt = NULL, *mtxt = NULL;
    size_t jn = 0, mn = 0;
    sl_bpe *b = NULL;
    if (sl_read_file(a.data, &jt, &jn, err) == 0 && (!pair || sl_read_file(m.data, &mtxt, &mn, err) == 0))
        b = sl_bpe_load_mem(jt, jn, pair ? mtxt : NULL, mn, pair ? m.data : a.data, err);
    if (b && pair) { /* name the pair by its vocab.json in messages */
        free(b->name);
        b->name = sl_xstrdup(a.data);
    }
    free(jt);
    free(mtxt);
    sl_buf_free(&a);
    sl_buf_free(&m);
    return b;
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
    free(b->words);
    free(b->dec_off);
    free(b->dec_len);
    free(b->dec_pool);
    sl_decoder_free(&b->dec);
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

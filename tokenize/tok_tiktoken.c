/* The tiktoken family behind tokenizer.h (tiktoken.h): tiktoken rank files
 * and Mistral's tekken JSON.
 *
 * tiktoken encodes a piece of the pattern's split as one token when the
 * piece is a token, else by merging: starting from single bytes, the
 * adjacent pair whose concatenated bytes are the token of lowest rank is
 * merged, the leftmost of equal ranks first, until no adjacent pair forms a
 * token. That is byte-level BPE with a merge table holding, for every token
 * t and every split of its bytes into two tokens (l, r), the merge
 * (l, r) -> t at rank rank(t): the symbols are always tokens, and the pair
 * (l, r) can merge exactly when bytes(l) + bytes(r) is a token. So the
 * loader builds an sl_bpe (merge table, whole-piece table as ignore_merges
 * uses it, the pattern's scanner or PCRE2) and bpe_encode.c / bpe_merge.c
 * encode. Special tokens are added tokens (added.h), matched in the raw text
 * by the special mode. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "stream/io.h"
#include "stream/json.h"
#include "tokenize/bpe_internal.h"
#include "tokenize/sha256.h"
#include "tokenize/tiktoken.h"
#include "tokenize/tokenizer_impl.h"

/* tiktoken's own spellings (tiktoken_ext/openai_public.py) */
static const char R50K_PAT[] =
    "'(?:[sdmt]|ll|ve|re)| ?\\p{L}++| ?\\p{N}++| ?[^\\s\\p{L}\\p{N}]++|\\s++$|\\s+(?!\\S)|\\s";
static const char CL100K_PAT[] = "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+| "
                                 "?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s";
static const char GPT2_HF_PAT[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

/* Named patterns: the name, the pretok kind, and the pattern strings that
 * mean the same split (for a regex given in full). */
static const struct {
    const char *name;
    int kind;
    const char *same[2];
} patterns[] = {
    {"gpt2", SL_PRETOK_GPT2, {R50K_PAT, GPT2_HF_PAT}},
    {"cl100k", SL_PRETOK_LLAMA3, {CL100K_PAT, sl_pretok_llama3_pattern}},
    {"llama3", SL_PRETOK_LLAMA3, {NULL, NULL}},
    {"qwen2", SL_PRETOK_QWEN2, {sl_pretok_qwen2_pattern, NULL}},
    {"o200k", SL_PRETOK_O200K, {sl_pretok_o200k_pattern, NULL}},
    {"tekken", SL_PRETOK_TEKKEN, {sl_pretok_tekken_pattern, NULL}},
};
#define N_PATTERNS (sizeof patterns / sizeof *patterns)

/* OpenAI's rank files by the sha256 tiktoken pins for them: their pattern
 * and special tokens (tiktoken_ext/openai_public.py). */
static const struct {
    const char *sha256, *pattern, *specials;
} known_files[] = {
    {"306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930", "gpt2", "<|endoftext|>=50256"},
    {"94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069", "gpt2", "<|endoftext|>=50256"},
    {"223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7", "cl100k",
     "<|endoftext|>=100257,<|fim_prefix|>=100258,<|fim_middle|>=100259,<|fim_suffix|>=100260,<|endofprompt|>=100276"},
    {"446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d", "o200k",
     "<|endoftext|>=199999,<|endofprompt|>=200018"},
};

/* Mistral's special tokens of tekken files without a special_tokens list
 * (version v7 and before; mistral_common's Tekkenizer.DEPRECATED_SPECIAL_TOKENS),
 * ids 0..19; the rest up to default_num_special_tokens are <SPECIAL_id>. */
static const char *const tekken_old_specials[] = {
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
};

typedef struct special {
    char *name;
    size_t len;
    uint32_t id;
} special;

typedef struct tiktoken {
    sl_bpe *b;
    uint32_t offset; /* id of rank 0 (tekken: its number of special tokens) */
    uint32_t n_ranks;
    special *sp;
    size_t n_sp;
} tiktoken;

/* --- building ---------------------------------------------------------- */
static void free_specials(special *sp, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(sp[i].name);
    free(sp);
}

static void tt_free(void *impl)
{
    tiktoken *t = impl;
    if (!t)
        return;
    sl_bpe_free(t->b);
    free_specials(t->sp, t->n_sp);
    free(t);
}

/* ids 0..n_ids-1, none with bytes yet */
static void alloc_ids(sl_bpe *b, uint32_t n_ids)
{
    b->vocab_size = n_ids;
    b->tok_off = sl_xcalloc(n_ids ? n_ids : 1, sizeof *b->tok_off);
    b->tok_len = sl_xmalloc((n_ids ? n_ids : 1) * sizeof *b->tok_len);
    b->txt_off = sl_xmalloc((n_ids ? n_ids : 1) * sizeof *b->txt_off);
    for (uint32_t i = 0; i < n_ids; i++)
        b->tok_len[i] = b->txt_off[i] = UINT32_MAX;
}

static void set_bytes(sl_bpe *b, uint32_t id, const char *s, size_t n)
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

/* The ordinary token whose bytes are s[0..n), or -1 (words table: id + 1). */
static int64_t find_bytes(const sl_bpe *b, const char *s, size_t n)
{
    for (uint64_t h = XXH3_64bits(s, n) & b->words_mask; b->words[h]; h = (h + 1) & b->words_mask) {
        uint32_t id = b->words[h] - 1;
        if (b->tok_len[id] == n && !memcmp(b->pool + b->tok_off[id], s, n))
            return id;
    }
    return -1;
}

/* One ordinary token: bytes, and into the words table unless the bytes are
 * there already (returns that id then). */
static int64_t add_token(sl_bpe *b, uint32_t id, const char *s, size_t n)
{
    int64_t old = find_bytes(b, s, n);
    if (old >= 0)
        return old;
    set_bytes(b, id, s, n);
    uint64_t h = XXH3_64bits(s, n) & b->words_mask;
    while (b->words[h])
        h = (h + 1) & b->words_mask;
    b->words[h] = id + 1;
    return -1;
}

static void words_init(sl_bpe *b, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n + 16)
        cap *= 2;
    b->words = sl_xcalloc(cap, sizeof *b->words);
    b->words_mask = cap - 1;
}

/* The merge table: every split of every token into two tokens (found
 * once, then inserted into a table of the right size). */
static void build_merges(sl_bpe *b, uint32_t first, uint32_t n_ranks)
{
    struct m {
        uint32_t l, r, rank, id;
    } *ms = NULL;
    size_t n = 0, cap = 0;
    for (uint32_t r = 0; r < n_ranks; r++) {
        uint32_t id = first + r, len = b->tok_len[id];
        const char *s = b->pool + b->tok_off[id];
        for (uint32_t k = 1; k < len; k++) {
            int64_t l = find_bytes(b, s, k), rt = l >= 0 ? find_bytes(b, s + k, len - k) : -1;
            if (rt < 0)
                continue;
            if (n == cap) {
                cap = cap ? 2 * cap : 4096;
                ms = sl_xrealloc(ms, cap * sizeof *ms);
            }
            ms[n++] = (struct m){(uint32_t)l, (uint32_t)rt, r, id};
        }
    }
    sl_merge_table_init(b, n);
    for (size_t i = 0; i < n; i++)
        sl_merge_insert(b, ms[i].l, ms[i].r, ms[i].rank, ms[i].id);
    free(ms);
}

/* "file:LINE" of a byte offset */
static size_t line_of(const char *text, size_t off)
{
    size_t line = 1;
    for (size_t i = 0; i < off; i++)
        line += text[i] == '\n';
    return line;
}

static int b64_val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Strict base64 (padded, canonical) of s[0..n) into out; -1 when invalid. */
static int b64_decode(const char *s, size_t n, sl_buf *out)
{
    sl_buf_clear(out);
    if (n == 0 || n % 4)
        return -1;
    for (size_t i = 0; i < n; i += 4) {
        int v[4], pad = 0;
        for (int k = 0; k < 4; k++) {
            unsigned char c = (unsigned char)s[i + k];
            if (c == '=' && i + 4 == n && k >= 2) {
                v[k] = 0;
                pad++;
                continue;
            }
            if (pad || (v[k] = b64_val(c)) < 0)
                return -1;
        }
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        char bytes[3] = {(char)(w >> 16), (char)(w >> 8), (char)w};
        if ((pad == 2 && (w & 0xFFFF)) || (pad == 1 && (w & 0xFF)))
            return -1; /* bits beyond the data: not canonical */
        sl_buf_append(out, bytes, (size_t)(3 - pad));
    }
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

/* The ordinary tokens of a rank file into b (ids = ranks); *n_ranks set. */
static int load_ranks(sl_bpe *b, const char *text, size_t len, const char *name, uint32_t *n_ranks, sl_err *err)
{
    /* parse and check every line; then the ranks; then the tokens */
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    lines++;
    uint32_t *rank_line = NULL; /* rank -> its line */
    int64_t max_rank = -1;
    sl_buf tok = {0};
    struct entry {
        uint32_t rank, len; /* len = base64 length */
        size_t off, line;
    } *ent = sl_xmalloc(lines * sizeof *ent);
    size_t ne = 0, line = 0;
    int rc = -1;
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len, e = end;
        line++;
        if (e > pos && text[e - 1] == '\r')
            e--;
        if (e == pos) { /* an empty line: skipped, as tiktoken does */
            pos = end + 1;
            continue;
        }
        const char *sp = memchr(text + pos, ' ', e - pos);
        if (!sp) {
            sl_errf(err, "%s:%zu: expected a base64 token, a space and a rank", name, line);
            goto out;
        }
        size_t blen = (size_t)(sp - (text + pos));
        if (!is_empty_b64(text + pos, blen) && b64_decode(text + pos, blen, &tok)) {
            sl_errf(err, "%s:%zu: '%.*s' is not base64", name, line, (int)(blen > 60 ? 60 : blen), text + pos);
            goto out;
        }
        uint64_t r = 0;
        size_t k = (size_t)(sp - text) + 1;
        if (k == e) {
            sl_errf(err, "%s:%zu: no rank after the token", name, line);
            goto out;
        }
        for (; k < e; k++) {
            if (text[k] < '0' || text[k] > '9' || r > 0x7FFFFFFF) {
                sl_errf(err, "%s:%zu: rank '%.*s' is not an integer below 2^31", name, line,
                        (int)(e - (size_t)(sp - text) - 1 > 40 ? 40 : e - (size_t)(sp - text) - 1), sp + 1);
                goto out;
            }
            r = r * 10 + (uint64_t)(text[k] - '0');
        }
        if (r > 0x7FFFFFFF) {
            sl_errf(err, "%s:%zu: rank %llu is not below 2^31", name, line, (unsigned long long)r);
            goto out;
        }
        ent[ne++] = (struct entry){(uint32_t)r, (uint32_t)blen, pos, line};
        if ((int64_t)r > max_rank)
            max_rank = (int64_t)r;
        pos = end + 1;
    }
    if (ne == 0) {
        sl_errf(err, "%s: no tokens (a rank file has a base64 token and a rank on each line)", name);
        goto out;
    }
    /* ranks 0..ne-1, each once: a duplicate names both lines, else the
     * first missing rank is named */
    rank_line = sl_xcalloc(ne, sizeof *rank_line);
    for (size_t i = 0; i < ne; i++) {
        uint32_t r = ent[i].rank;
        if (r >= ne)
            continue;
        if (rank_line[r]) {
            sl_errf(err, "%s:%zu: rank %u is given twice (also on line %u)", name, ent[i].line, r, rank_line[r]);
            goto out;
        }
        rank_line[r] = (uint32_t)ent[i].line;
    }
    for (uint32_t r = 0; r < ne; r++)
        if (!rank_line[r]) {
            sl_errf(err, "%s: rank %u is missing (the ranks of %zu tokens must be 0..%zu; the largest is %lld)", name,
                    r, ne, ne - 1, (long long)max_rank);
            goto out;
        }
    alloc_ids(b, (uint32_t)ne);
    words_init(b, ne);
    for (size_t i = 0; i < ne; i++) {
        if (is_empty_b64(text + ent[i].off, ent[i].len))
            sl_buf_clear(&tok);
        else
            b64_decode(text + ent[i].off, ent[i].len, &tok);
        int64_t old = add_token(b, ent[i].rank, tok.data, tok.len);
        if (old >= 0) {
            sl_errf(err, "%s:%zu: the token of rank %u is also rank %lld (line %u)", name, ent[i].line, ent[i].rank,
                    (long long)old, rank_line[old]);
            goto out;
        }
    }
    *n_ranks = (uint32_t)ne;
    rc = 0;
out:
    free(ent);
    free(rank_line);
    sl_buf_free(&tok);
    return rc;
}

/* Parses "NAME=ID,NAME=ID" (the last '=' of each item splits it). */
static int parse_specials(const char *spec, const char *name, special **out, size_t *n, sl_err *err)
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
            free_specials(sp, k);
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
                free_specials(sp, k + 1);
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
static int add_specials(tiktoken *t, const char *name, sl_err *err)
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
        set_bytes(b, a->id, a->content, a->len);
        if (a->len)
            sl_trie_add(&b->raw_trie, a->match, a->match_len, (int32_t)i);
    }
    return 0;
}

static int kind_of(const char *pattern)
{
    for (size_t i = 0; i < N_PATTERNS; i++) {
        if (!strcmp(pattern, patterns[i].name))
            return (int)i;
        for (int k = 0; k < 2; k++)
            if (patterns[i].same[k] && !strcmp(pattern, patterns[i].same[k]))
                return (int)i;
    }
    return -1;
}

/* The pattern: a name or a regex; *canon is what the fingerprint hashes
 * (cl100k for llama3 and the spellings of a named pattern). */
static int set_pattern(sl_bpe *b, const char *pattern, const char *name, const char **canon, sl_err *err)
{
    int k = kind_of(pattern);
    b->use_regex = 1;
    if (k >= 0) {
        b->pretok = patterns[k].kind;
        *canon = patterns[k].kind == SL_PRETOK_LLAMA3 ? "cl100k" : patterns[k].name;
        return sl_pretok_compile(b, err);
    }
    *canon = pattern;
    b->drop_gaps = 1; /* tiktoken drops text a pattern does not match */
    return sl_pretok_compile_regex(b, pattern, name, err);
}

/* The byte tokens, the merges; checks every byte has a token. */
static int finish_vocab(tiktoken *t, const char *name, sl_err *err)
{
    sl_bpe *b = t->b;
    for (int i = 0; i < 256; i++) {
        char c = (char)i;
        int64_t id = find_bytes(b, &c, 1);
        if (id < 0)
            return sl_errf(err, "%s: no token for the byte 0x%02X (every single byte needs one)", name, i);
        b->byte_id[i] = (int32_t)id;
    }
    build_merges(b, t->offset, t->n_ranks);
    return 0;
}

static void fingerprint(const char *data, size_t n, const char *pattern, const special *sp, size_t n_sp, char out[72])
{
    sl_sha256 h;
    uint8_t d[32];
    sl_sha256_init(&h);
    sl_sha256_update(&h, data, n);
    if (pattern) { /* a rank file: the pattern and special tokens are part of the tokenizer */
        sl_buf extra = {0};
        sl_buf_printf(&extra, "\n#pattern %s\n#special", pattern);
        for (size_t i = 0; i < n_sp; i++) {
            sl_buf_printf(&extra, " %u ", sp[i].id);
            sl_buf_append(&extra, sp[i].name, sp[i].len);
        }
        sl_sha256_update(&h, extra.data, extra.len);
        sl_buf_free(&extra);
    }
    sl_sha256_final(&h, d);
    sl_sha256_hex(d, out);
}

static int cmp_special(const void *a, const void *b)
{
    const special *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* --- tekken JSON ---------------------------------------------------------- */
static int tekken_int(const sl_json *cfg, const char *key, int64_t lo, int64_t hi, int64_t *v, const char *text,
                      const char *name, sl_err *err)
{
    const sl_json *x = sl_json_get(cfg, key);
    if (!x)
        return sl_errf(err, "%s:%zu: config.%s is missing", name, line_of(text, cfg->offset), key);
    if (!sl_json_is_int(x, v) || *v < lo || *v > hi)
        return sl_errf(err, "%s:%zu: config.%s must be an integer in %lld..%lld", name, line_of(text, x->offset), key,
                       (long long)lo, (long long)hi);
    return 0;
}

static int load_tekken(tiktoken *t, const char *text, size_t len, const char *name, const char **pattern,
                       sl_json_doc **docp, sl_err *err)
{
    sl_json_opts jo = {.invalid_utf8 = SL_UTF8_ERROR};
    sl_err je = {{0}};
    sl_json_doc *doc = sl_json_parse(text, len, &jo, &je);
    if (!doc)
        return sl_errf(err, "%s: %s", name, je.msg);
    *docp = doc;
    const sl_json *root = sl_json_root(doc), *cfg = sl_json_get(root, "config"), *vocab = sl_json_get(root, "vocab");
    if (!cfg || cfg->type != SL_JSON_OBJECT)
        return sl_errf(err, "%s: no \"config\" object (a tekken file has config and vocab)", name);
    if (!vocab || vocab->type != SL_JSON_ARRAY)
        return sl_errf(err, "%s: no \"vocab\" array (a tekken file has config and vocab)", name);
    *pattern = sl_json_get_str(cfg, "pattern");
    if (!*pattern)
        return sl_errf(err, "%s:%zu: config.pattern is missing", name, line_of(text, cfg->offset));
    int64_t vsize, nspecial;
    if (tekken_int(cfg, "default_num_special_tokens", 0, 1 << 20, &nspecial, text, name, err) ||
        tekken_int(cfg, "default_vocab_size", nspecial + 256, nspecial + (int64_t)vocab->n, &vsize, text, name, err))
        return -1;
    const sl_json *list = sl_json_get(root, "special_tokens");
    if (list && list->type == SL_JSON_NULL)
        list = NULL;
    if (list && list->type != SL_JSON_ARRAY)
        return sl_errf(err, "%s:%zu: special_tokens must be an array", name, line_of(text, list->offset));
    if (!list) { /* Mistral's rule: only files up to v7 may leave them out */
        const char *ver = sl_json_get_str(cfg, "version");
        int v = ver && ver[0] == 'v' ? atoi(ver + 1) : 0;
        if (!ver || v < 1 || v > 7)
            return sl_errf(err,
                           "%s: no special_tokens list (only files of version v1..v7 may leave it out; this is %s)",
                           name, ver ? ver : "without config.version");
    }
    size_t n_listed = list ? list->n : sizeof tekken_old_specials / sizeof *tekken_old_specials;
    if ((int64_t)n_listed > nspecial)
        return sl_errf(err, "%s: %zu special tokens, more than config.default_num_special_tokens (%lld)", name,
                       n_listed, (long long)nspecial);
    t->offset = (uint32_t)nspecial;
    t->n_ranks = (uint32_t)(vsize - nspecial);
    t->sp = sl_xcalloc((size_t)nspecial + 1, sizeof *t->sp);
    for (size_t i = 0; i < (size_t)nspecial; i++) {
        special *s = &t->sp[t->n_sp++];
        if (i < n_listed && list) {
            const sl_json *e = list->kids[i];
            int64_t r;
            const char *str = e->type == SL_JSON_OBJECT ? sl_json_get_str(e, "token_str") : NULL;
            if (!str || sl_json_get_int(e, "rank", &r) || r != (int64_t)i)
                return sl_errf(err, "%s:%zu: special_tokens[%zu] must be an object with rank %zu and token_str", name,
                               line_of(text, e->offset), i, i);
            s->name = sl_xstrdup(str);
        } else if (i < n_listed) {
            s->name = sl_xstrdup(tekken_old_specials[i]);
        } else {
            char buf[32];
            snprintf(buf, sizeof buf, "<SPECIAL_%zu>", i);
            s->name = sl_xstrdup(buf);
        }
        s->len = strlen(s->name);
        s->id = (uint32_t)i;
        for (size_t j = 0; j < i; j++)
            if (t->sp[j].len == s->len && !memcmp(t->sp[j].name, s->name, s->len))
                return sl_errf(err, "%s: special token '%s' is given twice (ids %zu and %zu)", name, s->name, j, i);
    }
    sl_bpe *b = t->b;
    alloc_ids(b, (uint32_t)vsize);
    words_init(b, t->n_ranks);
    sl_buf tok = {0};
    for (uint32_t r = 0; r < t->n_ranks; r++) {
        const sl_json *e = vocab->kids[r];
        int64_t rank;
        const char *b64 = e->type == SL_JSON_OBJECT ? sl_json_get_str(e, "token_bytes") : NULL;
        if (!b64 || sl_json_get_int(e, "rank", &rank) || rank != r) {
            sl_buf_free(&tok);
            return sl_errf(err, "%s:%zu: vocab[%u] must be an object with rank %u and token_bytes", name,
                           line_of(text, e->offset), r, r);
        }
        if (b64_decode(b64, strlen(b64), &tok)) {
            sl_buf_free(&tok);
            return sl_errf(err, "%s:%zu: vocab[%u].token_bytes '%.60s' is not base64", name, line_of(text, e->offset),
                           r, b64);
        }
        int64_t old = add_token(b, t->offset + r, tok.data, tok.len);
        if (old >= 0) {
            sl_buf_free(&tok);
            return sl_errf(err, "%s:%zu: the token of rank %u is also rank %lld", name, line_of(text, e->offset), r,
                           (long long)(old - t->offset));
        }
    }
    sl_buf_free(&tok);
    return 0;
}

/* --- loading ------------------------------------------------------------- */
static int is_tekken(const char *data, size_t n)
{
    size_t i = 0;
    while (i < n && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t'))
        i++;
    if (i == n || data[i] != '{')
        return 0;
    for (i++; i < n && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t'); i++)
        ;
    return n - i >= 8 && !memcmp(data + i, "\"config\"", 8);
}

/* Pattern and special tokens recorded in a stream header's extra. */
static int from_header_extra(const sl_ts_header *h, char **pattern, char **specials)
{
    if (!h || !h->extra_json)
        return 0;
    sl_err e = {{0}};
    sl_json_doc *doc = sl_json_parse(h->extra_json, strlen(h->extra_json), NULL, &e);
    const sl_json *tt = doc ? sl_json_get(sl_json_root(doc), "tiktoken") : NULL;
    const char *p = tt && tt->type == SL_JSON_OBJECT ? sl_json_get_str(tt, "pattern") : NULL;
    const char *s = tt && tt->type == SL_JSON_OBJECT ? sl_json_get_str(tt, "special") : NULL;
    if (p) {
        *pattern = sl_xstrdup(p);
        *specials = sl_xstrdup(s ? s : "");
    }
    sl_json_free(doc);
    return p != NULL;
}

static const sl_tok_ops ops;

sl_tokenizer *sl_tiktoken_load_mem(const char *data, size_t n, const char *name, const sl_tokenizer_opts *o,
                                   sl_err *err)
{
    static const sl_tokenizer_opts defaults = SL_TOKENIZER_OPTS_INIT;
    if (!o)
        o = &defaults;
    tiktoken *t = sl_xcalloc(1, sizeof *t);
    t->b = sl_xcalloc(1, sizeof *t->b);
    t->b->name = sl_xstrdup(name);
    t->b->cache = sl_scache_shared_new();
    sl_json_doc *doc = NULL;
    char *hdr_pattern = NULL, *hdr_specials = NULL;
    const char *pattern = o->pattern, *specials = o->specials, *canon = NULL;
    int tekken = is_tekken(data, n);
    char fp[72];
    if (tekken) {
        if (o->pattern || (o->specials && *o->specials)) {
            sl_errf(err, "%s: a tekken file has its own pattern and special tokens; none may be given", name);
            goto fail;
        }
        if (load_tekken(t, data, n, name, &pattern, &doc, err))
            goto fail;
    } else {
        if (load_ranks(t->b, data, n, name, &t->n_ranks, err))
            goto fail;
        if (!pattern && from_header_extra(o->header, &hdr_pattern, &hdr_specials)) {
            pattern = hdr_pattern; /* decoding a stream: the pattern and specials it was made with */
            specials = hdr_specials;
        }
        if (!pattern) {
            fingerprint(data, n, NULL, NULL, 0, fp);
            for (size_t i = 0; i < sizeof known_files / sizeof *known_files; i++)
                if (!strcmp(fp + 7, known_files[i].sha256)) {
                    pattern = known_files[i].pattern;
                    if (!specials)
                        specials = known_files[i].specials;
                }
        }
        if (!pattern) {
            sl_errf(err,
                    "%s: a tiktoken rank file needs a pattern (gpt2, cl100k, llama3, qwen2, o200k, tekken or a "
                    "regex)",
                    name);
            goto fail;
        }
        if (parse_specials(specials, name, &t->sp, &t->n_sp, err))
            goto fail;
    }
    if (finish_vocab(t, name, err) || add_specials(t, name, err) || set_pattern(t->b, pattern, name, &canon, err))
        goto fail;
    if (t->n_sp)
        qsort(t->sp, t->n_sp, sizeof *t->sp, cmp_special); /* the fingerprint's order */
    fingerprint(data, n, tekken ? NULL : canon, t->sp, t->n_sp, fp);

    sl_tokenizer *tk = sl_tokenizer_new(&sl_tok_family_tiktoken, &ops, t);
    tk->special_mode = o->special;
    sl_bpe_set_scanner(t->b, !o->pcre2);
    tk->vocab_size = t->b->vocab_size;
    sl_tokenizer_set_specials(tk, t->b->added, t->b->n_added);
    snprintf(tk->fingerprint, sizeof tk->fingerprint, "%s", fp);
    snprintf(t->b->fingerprint, sizeof t->b->fingerprint, "%s", fp);
    const char *base = strrchr(name, '/');
    snprintf(tk->name, sizeof tk->name, "tiktoken:%s", base && base[1] ? base + 1 : name);
    static const char *const names[SL_TOK_N_SPECIAL][3] = {{"<|endoftext|>", "<|end_of_text|>", "</s>"},
                                                           {"<|begin_of_text|>", "<s>", NULL},
                                                           {"<|padding|>", "<pad>", NULL},
                                                           {"<unk>", NULL, NULL}};
    for (int k = 0; k < SL_TOK_N_SPECIAL; k++)
        for (int j = 0; j < 3 && names[k][j] && tk->special[k] < 0; j++)
            for (size_t i = 0; i < t->n_sp; i++)
                if (!strcmp(t->sp[i].name, names[k][j]))
                    tk->special[k] = t->sp[i].id;
    if (!tekken) { /* what decoding the stream needs besides the file (from_header_extra) */
        sl_buf x = {0}, s = {0};
        for (size_t i = 0; i < t->n_sp; i++) {
            if (i)
                sl_buf_putc(&s, ',');
            sl_buf_append(&s, t->sp[i].name, t->sp[i].len);
            sl_buf_printf(&s, "=%u", t->sp[i].id);
        }
        sl_buf_puts(&x, "{\"tiktoken\":{\"pattern\":");
        sl_json_put_cstr(&x, canon);
        sl_buf_puts(&x, ",\"special\":");
        sl_json_put_str(&x, s.data ? s.data : "", s.len);
        sl_buf_puts(&x, "}}");
        tk->extra = x.data;
        sl_buf_free(&s);
    }
    sl_json_free(doc);
    free(hdr_pattern);
    free(hdr_specials);
    return tk;
fail:
    sl_json_free(doc);
    free(hdr_pattern);
    free(hdr_specials);
    tt_free(t);
    return NULL;
}

/* --- the family ---------------------------------------------------------- */
static void *tt_state_new(const void *impl)
{
    return sl_bpe_state_new(((const tiktoken *)impl)->b);
}

static void tt_state_free(void *state)
{
    sl_bpe_state_free(state);
}

static int tt_encode(const sl_tokenizer *tk, void *state, const char *text, size_t n, sl_ids *out, sl_err *err)
{
    const tiktoken *t = tk->impl;
    return sl_bpe_encode(t->b, state, text, n, tk->special_mode, out, err);
}

static int tt_decode(const sl_tokenizer *tk, const uint32_t *ids, size_t n, sl_buf *out, sl_err *err)
{
    const tiktoken *t = tk->impl;
    return sl_bpe_decode(t->b, ids, n, out, err);
}

/* A special token's name, else an ordinary token's bytes. */
static int64_t tt_token_id(const sl_tokenizer *tk, const char *text)
{
    const tiktoken *t = tk->impl;
    size_t n = strlen(text);
    for (size_t i = 0; i < t->n_sp; i++)
        if (t->sp[i].len == n && !memcmp(t->sp[i].name, text, n))
            return t->sp[i].id;
    return find_bytes(t->b, text, n);
}

static const sl_tok_ops ops = {tt_free, tt_state_new, tt_state_free, tt_encode, tt_decode, tt_token_id};

/* A rank file's first line (base64, a space, digits) or a tekken JSON head. */
static int tt_probe(sl_tok_src *src)
{
    const unsigned char *head = src->head;
    size_t n = src->head_len;
    if (src->is_dir || n == 0)
        return 0;
    if (is_tekken((const char *)head, n))
        return 1;
    size_t i = 0;
    while (i < n && b64_val(head[i]) >= 0)
        i++;
    while (i < n && head[i] == '=')
        i++;
    if (i == 0 || i % 4 || i >= n || head[i] != ' ')
        return 0;
    size_t d = ++i;
    while (i < n && head[i] >= '0' && head[i] <= '9')
        i++;
    return i > d && (i == n || head[i] == '\n' || head[i] == '\r');
}

static sl_tokenizer *tt_load(sl_tok_src *src, const sl_tokenizer_opts *o, sl_err *err)
{
    char *data = NULL;
    size_t n;
    if (sl_read_file(src->path, &data, &n, err))
        return NULL;
    sl_tokenizer *t = sl_tiktoken_load_mem(data, n, src->path, o, err);
    free(data);
    return t;
}

const sl_tok_family sl_tok_family_tiktoken = {"tiktoken", tt_probe, tt_load, NULL, NULL};

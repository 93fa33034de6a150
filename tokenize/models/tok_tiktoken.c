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
 * loader builds an sl_bpe (whole-piece table as ignore_merges uses it, the
 * pattern's scanner or PCRE2) whose merge table is that rule itself, a
 * lookup of bytes(l) + bytes(r) made when an encode first needs the pair
 * (lazy_merges), and bpe_encode.c / bpe_merge.c encode. Special tokens
 * are added tokens (added.h), matched in the raw text by the special mode. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "stream/io.h"
#include "base/json.h"
#include "tokenize/models/bpe_internal.h"
#include "tokenize/sha256.h"
#include "tokenize/models/tiktoken.h"
#include "tokenize/models/tiktoken_impl.h"
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

/* --- building ---------------------------------------------------------- */

static void tt_free(void *impl)
{
    tiktoken *t = impl;
    if (!t)
        return;
    sl_bpe_free(t->b);
    sl_tt_free_specials(t->sp, t->n_sp);
    free(t);
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
        int64_t id = sl_bpe_find_word(b, &c, 1);
        if (id < 0)
            return sl_errf(err, "%s: no token for the byte 0x%02X (every single byte needs one)", name, i);
        b->byte_id[i] = (int32_t)id;
    }
    sl_tt_set_merges(b, t->offset, t->n_ranks);
    return 0;
}

/* of_data: the hash state after the file's bytes (hashed once per load) */
static void fingerprint(const sl_sha256 *of_data, const char *pattern, const special *sp, size_t n_sp, char out[72])
{
    sl_sha256 h = *of_data;
    uint8_t d[32];
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
    t->b->unk_id = -1; /* none: every byte has a token (finish_vocab) */
    sl_json_doc *doc = NULL;
    char *hdr_pattern = NULL, *hdr_specials = NULL;
    const char *pattern = o->pattern, *specials = o->specials, *canon = NULL;
    int tekken = is_tekken(data, n);
    char fp[72];
    sl_sha256 of_data;
    sl_sha256_init(&of_data);
    sl_sha256_update(&of_data, data, n);
    if (tekken) {
        if (o->pattern || (o->specials && *o->specials)) {
            sl_errf(err, "%s: a tekken file has its own pattern and special tokens; none may be given", name);
            goto fail;
        }
        if (sl_tt_load_tekken(t, data, n, name, &pattern, &doc, err))
            goto fail;
    } else {
        if (sl_tt_load_ranks(t->b, data, n, name, &t->n_ranks, err))
            goto fail;
        if (!pattern && from_header_extra(o->header, &hdr_pattern, &hdr_specials)) {
            pattern = hdr_pattern; /* decoding a stream: the pattern and specials it was made with */
            specials = hdr_specials;
        }
        if (!pattern) {
            fingerprint(&of_data, NULL, NULL, 0, fp);
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
        if (sl_tt_parse_specials(specials, name, &t->sp, &t->n_sp, err))
            goto fail;
    }
    if (finish_vocab(t, name, err) || sl_tt_add_specials(t, name, err) || set_pattern(t->b, pattern, name, &canon, err))
        goto fail;
    if (t->n_sp)
        qsort(t->sp, t->n_sp, sizeof *t->sp, cmp_special); /* the fingerprint's order */
    fingerprint(&of_data, tekken ? NULL : canon, t->sp, t->n_sp, fp);

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
    return sl_bpe_find_word(t->b, text, n);
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
    while (i < n && sl_tt_b64_val(head[i]) >= 0)
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
    /* a rank file mapped (stream/io.h: no copy); a tekken file is JSON, whose
     * reader takes a NUL-terminated copy */
    sl_mapped f;
    if (sl_map_file(src->path, &f, err))
        return NULL;
    char *copy = NULL;
    if (f.mapped && is_tekken(f.data, f.len)) {
        copy = sl_xmalloc(f.len + 1);
        memcpy(copy, f.data, f.len);
        copy[f.len] = 0;
    }
    sl_tokenizer *t = sl_tiktoken_load_mem(copy ? copy : f.data, f.len, src->path, o, err);
    free(copy);
    sl_unmap_file(&f);
    return t;
}

const sl_tok_family sl_tok_family_tiktoken = {"tiktoken", tt_probe, tt_load, NULL, NULL};

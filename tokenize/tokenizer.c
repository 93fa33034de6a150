/* The tokenizer interface (tokenizer.h) over the families of
 * tokenizer_impl.h. */
#include "tokenize/tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <sys/stat.h>

#include "stream/io.h"
#include "tokenize/tokenizer_impl.h"

/* Probed in this order; the last one (the Hugging Face / GPT-2 loader)
 * takes what no other claimed and says what is wrong with it. */
static const sl_tok_family *const families[] = {&sl_tok_family_char,  &sl_tok_family_tiktoken, &sl_tok_family_wordpiece,
                                                &sl_tok_family_spbpe, &sl_tok_family_spm,      &sl_tok_family_unigram,
                                                &sl_tok_family_bpe};
#define N_FAMILIES (sizeof families / sizeof *families)

struct sl_tok_state {
    const sl_tokenizer *t;
    void *impl;
};

/* sl_ids_push's slow path: room for at least one more id. */
void sl_ids_grow(sl_ids *a)
{
    a->cap = a->cap ? 2 * a->cap : 256;
    a->v = sl_xrealloc(a->v, a->cap * sizeof *a->v);
}

void sl_ids_append(sl_ids *a, const uint32_t *v, size_t n)
{
    while (a->cap - a->n < n)
        sl_ids_grow(a);
    if (n)
        memcpy(a->v + a->n, v, n * sizeof *v);
    a->n += n;
}

void sl_ids_free(sl_ids *a)
{
    free(a->v);
    a->v = NULL;
    a->n = a->cap = 0;
}

sl_tokenizer *sl_tokenizer_new(const sl_tok_family *f, const sl_tok_ops *ops, void *impl)
{
    sl_tokenizer *t = sl_xcalloc(1, sizeof *t);
    t->family = f;
    t->ops = ops;
    t->impl = impl;
    t->modality = SL_MOD_TEXT;
    for (int i = 0; i < SL_TOK_N_SPECIAL; i++)
        t->special[i] = -1;
    return t;
}

/* The first i' >= i where text[i'] is a byte a special token starts with
 * (t->spec_nfirst of them, 1 to 4), or n. One byte (all of them start with
 * the same text: "<|" of <|endoftext|> and Llama-3's, "[" of [CLS]) by
 * memchr, so the look costs little beside encoding (3 GB/s on C code and
 * Markdown, full of '<'; glibc's memmem of "<|" was 5x slower); 2 to 4
 * bytes 16 at a time (Mistral's tekken files have 1000 special tokens
 * starting with '<' or '['; byte by byte this scan was 7 % of a run). */
static size_t next_first(const sl_tokenizer *t, const char *text, size_t n, size_t i)
{
    const char *f = t->spec_first;
    int k = t->spec_nfirst;
    if (k == 1) {
        const char *p = memchr(text + i, f[0], n - i);
        return p ? (size_t)(p - text) : n;
    }
#if defined(__SSE2__)
    __m128i c0 = _mm_set1_epi8(f[0]), c1 = _mm_set1_epi8(f[1]), c2 = _mm_set1_epi8(f[k > 2 ? 2 : 0]),
            c3 = _mm_set1_epi8(f[k > 3 ? 3 : 0]);
    for (; n - i >= 16; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(text + i));
        unsigned m =
            (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, c0), _mm_cmpeq_epi8(x, c1)),
                                                     _mm_or_si128(_mm_cmpeq_epi8(x, c2), _mm_cmpeq_epi8(x, c3))));
        if (m)
            return i + (size_t)__builtin_ctz(m);
    }
#endif
    while (i < n && !t->spec_trie.first[(uint8_t)text[i]])
        i++;
    return i;
}

/* Each candidate position (next_first, then the text all of them start
 * with compared), or with more than 4 first bytes each byte in the trie's
 * table of them, then the trie. */
const char *sl_tokenizer_find_special(const sl_tokenizer *t, const char *text, size_t n, size_t *at)
{
    if (!t->n_spec)
        return NULL;
    const char *pre = t->spec_pre;
    size_t np = t->spec_prefix;
    for (size_t i = 0; i < n; i++) {
        if (t->spec_nfirst) {
            i = next_first(t, text, n, i);
            if (i == n)
                return NULL;
            if (np > 1 && (n - i < np || memcmp(text + i + 1, pre + 1, np - 1)))
                continue;
        } else if (!t->spec_trie.first[(uint8_t)text[i]]) {
            continue;
        }
        size_t len;
        int32_t k = sl_trie_longest(&t->spec_trie, text, n, i, &len);
        if (k >= 0) {
            if (at)
                *at = i;
            return t->spec_text[k];
        }
    }
    return NULL;
}

static sl_tokenizer *load_family(const char *path, const sl_tokenizer_opts *o, sl_err *err);

/* The family's tokenizer, and with o->add_special the ids of the file's
 * post-processor around each text's (read by the family's load, from its one
 * parse of the file). */
sl_tokenizer *sl_tokenizer_load(const char *path, const sl_tokenizer_opts *o, sl_err *err)
{
    sl_tokenizer *t = load_family(path, o, err);
    if (t && o && o->add_special && !t->post_known &&
        (t->family == &sl_tok_family_spm || t->family == &sl_tok_family_tiktoken)) {
        /* (their files are not tokenizer.json: nothing to read again) */
        sl_errf(err,
                "%s: %s has no post-processor, so there are no special tokens to add (put BOS/EOS around each "
                "text instead: --prepend-bos/--append-eos)",
                path, t->family == &sl_tok_family_spm ? "a SentencePiece .model" : "a tiktoken or tekken file");
        sl_tokenizer_free(t);
        return NULL;
    }
    if (t && o && o->add_special && !t->post_known) {
        /* every tokenizer.json load keeps its post-processor (post_known):
         * what is left is no tokenizer.json (GPT-2's vocab.json + merges.txt,
         * a character vocabulary) */
        sl_errf(err, "%s: adding special tokens needs a tokenizer.json with a post_processor; this is none", path);
        sl_tokenizer_free(t);
        return NULL;
    }
    return t;
}

/* JSON text (an object, after blanks and a UTF-8 BOM). */
static int looks_json(const unsigned char *p, size_t n)
{
    size_t i = n >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3) ? 3 : 0;
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
        i++;
    return i == n || p[i] == '{';
}

static sl_tokenizer *load_family(const char *path, const sl_tokenizer_opts *o, sl_err *err)
{
    static const sl_tokenizer_opts defaults = SL_TOKENIZER_OPTS_INIT;
    if (!o)
        o = &defaults;
    struct stat st;
    sl_tok_src src = {.path = path};
    src.is_dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    if (!src.is_dir) {
        FILE *f = fopen(path, "rb");
        if (f) {
            src.head_len = fread(src.head, 1, sizeof src.head, f);
            fclose(f);
        }
        /* a compressed file (tokenizer.json.zst, xlmr.model.xz,
         * cl100k_base.tiktoken.gz): the families probe its first decoded
         * bytes, as every load reads it decoded (sl_read_file,
         * sl_map_file); compressed data that does not decode leaves no head,
         * and the last family's load says what is wrong with it */
        if (src.head_len && sl_compression_sniff(src.head, src.head_len) != SL_COMP_NONE) {
            sl_err perr = {0};
            sl_input *in = sl_input_open(path, &perr);
            long got = in ? sl_input_peek(in, src.head, sizeof src.head, &perr) : -1;
            sl_input_close(in);
            src.head_len = got > 0 ? (size_t)got : 0;
        }
    }
    const sl_tok_family *fam = NULL;
    if (o->family) {
        for (size_t i = 0; i < N_FAMILIES && !fam; i++)
            if (!strcmp(families[i]->name, o->family))
                fam = families[i];
        if (!fam)
            sl_errf(err, "%s: no tokenizer family '%s'", path, o->family);
    } else {
        for (size_t i = 0; i + 1 < N_FAMILIES && !fam; i++)
            if (families[i]->probe(&src))
                fam = families[i];
        /* the last family (byte-level BPE) reads tokenizer.json, GPT-2's
         * vocab.json and directories: anything else is none of the formats,
         * which is better said so than as a JSON syntax error at offset 0 */
        if (!fam && !src.is_dir && src.head_len && !looks_json(src.head, src.head_len))
            sl_errf(err,
                    "%s: not a tokenizer file (none of tokenizer.json, a SentencePiece .model, tiktoken ranks, "
                    "a WordPiece vocab.txt, GPT-2's vocab.json + merges.txt)",
                    path);
        else if (!fam)
            fam = families[N_FAMILIES - 1];
    }
    sl_tokenizer *t = fam ? fam->load(&src, o, err) : NULL;
    free(src.json_path);
    free(src.json);
    return t;
}

sl_tokenizer *sl_tokenizer_from_header(const sl_ts_header *h, const char *name, sl_err *err)
{
    for (size_t i = 0; i < N_FAMILIES; i++)
        if (families[i]->in_header && families[i]->in_header(h))
            return families[i]->from_header(h, name, err);
    sl_errf(err, "%s: the stream has no character vocabulary in its header", name);
    return NULL;
}

int sl_tokenizer_in_header(const sl_ts_header *h)
{
    for (size_t i = 0; i < N_FAMILIES; i++)
        if (families[i]->in_header && families[i]->in_header(h))
            return 1;
    return 0;
}

void sl_tokenizer_free(sl_tokenizer *t)
{
    if (!t)
        return;
    t->ops->free(t->impl);
    free(t->extra);
    free(t->add_pre);
    free(t->add_post);
    sl_trie_free(&t->spec_trie);
    for (size_t i = 0; i < t->n_spec; i++)
        free(t->spec_text[i]);
    free(t->spec_text);
    free(t);
}

const char *sl_tokenizer_family(const sl_tokenizer *t)
{
    return t->family->name;
}
const char *sl_tokenizer_name(const sl_tokenizer *t)
{
    return t->name;
}
const char *sl_tokenizer_fingerprint(const sl_tokenizer *t)
{
    return t->fingerprint;
}
uint32_t sl_tokenizer_vocab_size(const sl_tokenizer *t)
{
    return t->vocab_size;
}
int64_t sl_tokenizer_special(const sl_tokenizer *t, sl_tok_special which)
{
    return (unsigned)which < SL_TOK_N_SPECIAL ? t->special[which] : -1;
}
int64_t sl_tokenizer_token_id(const sl_tokenizer *t, const char *text)
{
    return t->ops->token_id(t, text);
}

void sl_tokenizer_header(const sl_tokenizer *t, sl_ts_header *h)
{
    sl_ts_header_init(h, t->modality, t->vocab_size);
    int64_t *ids[SL_TOK_N_SPECIAL] = {&h->eos, &h->bos, &h->pad, &h->unk};
    for (int i = 0; i < SL_TOK_N_SPECIAL; i++)
        *ids[i] = t->special[i] >= 0 ? t->special[i] : SL_TS_NO_ID;
    snprintf(h->fingerprint, sizeof h->fingerprint, "%s", t->fingerprint);
    snprintf(h->tokenizer, sizeof h->tokenizer, "%s", t->name);
    if (t->extra)
        sl_ts_header_set_extra(h, t->extra);
}

sl_tok_state *sl_tok_state_new(const sl_tokenizer *t)
{
    sl_tok_state *s = sl_xcalloc(1, sizeof *s);
    s->t = t;
    s->impl = t->ops->state_new ? t->ops->state_new(t->impl) : NULL;
    return s;
}

void sl_tok_state_free(sl_tok_state *s)
{
    if (!s)
        return;
    if (s->t->ops->state_free)
        s->t->ops->state_free(s->impl);
    free(s);
}

int sl_tokenizer_encode(const sl_tokenizer *t, sl_tok_state *s, const char *text, size_t n, sl_ids *out, sl_err *err)
{
    if (!t->n_add_pre && !t->n_add_post)
        return t->ops->encode(t, s->impl, text, n, out, err);
    for (size_t i = 0; i < t->n_add_pre; i++)
        sl_ids_push(out, t->add_pre[i]);
    if (t->ops->encode(t, s->impl, text, n, out, err))
        return -1;
    for (size_t i = 0; i < t->n_add_post; i++)
        sl_ids_push(out, t->add_post[i]);
    return 0;
}

int sl_tokenizer_decode(const sl_tokenizer *t, const uint32_t *ids, size_t n, sl_buf *out, sl_err *err)
{
    return t->ops->decode(t, ids, n, out, err);
}

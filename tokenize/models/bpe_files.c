/* Byte-level BPE from files (bpe.h): a tokenizer.json, a directory holding
 * one, or GPT-2's vocab.json + merges.txt pair (as HF and tiktoken load it). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "stream/io.h"
#include "base/json.h"
#include "tokenize/json_skim.h"
#include "tokenize/models/bpe_load.h"
#include "tokenize/sha256.h"

static int load_merges_txt(sl_bpe *b, const char *txt, size_t n, sl_bpe_map *map, sl_err *err)
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
        if (sl_bpe_add_merge(b, map, l, (size_t)(sp - l), sp + 1, ln - (size_t)(sp + 1 - l), rank++, "line", lineno,
                             err))
            return -1;
    }
    return 0;
}

static sl_bpe *load_vocab_merges(const char *vj, size_t vn, const char *mt, size_t mn, const char *name, sl_err *err)
{
    sl_bpe *b;
    sl_bpe_lists L = {0};
    sl_json_doc *doc = NULL;
    /* the vocabulary in one pass; the parser (and its messages) where it
     * is not the plain case */
    if (sl_bpe_vocab_read(vj, 0, vn, &L)) {
        b = sl_bpe_new(name);
    } else if (!(doc = sl_bpe_load_begin(vj, vn, NULL, 0, name, &b, err))) {
        return NULL;
    }
    sl_bpe_map map = {0};
    sl_buf txt = {0};
    /* GPT-2 as HF and tiktoken load it: no normalizer, ByteLevel without a
     * prefix space, and <|endoftext|> as a special token when present. */
    b->add_prefix_space = 0;
    if ((doc && sl_bpe_vocab_list(b, sl_json_root(doc), &L, err)) ||
        sl_bpe_load_vocab(b, L.v, L.nv, 0, &map, &txt, err) || load_merges_txt(b, mt, mn, &map, err))
        goto fail;
    sl_bpe_slot *e = sl_bpe_map_find(&map, "<|endoftext|>", 13);
    if (e->s) {
        b->added = sl_xcalloc(1, sizeof *b->added);
        b->added[0] = (sl_added){.id = e->id, .content = sl_xstrdup("<|endoftext|>"), .len = 13, .special = 1};
        b->n_added = 1;
    }
    if (sl_bpe_finish(b, &txt, err))
        goto fail;
    free(map.slots);
    sl_json_free(doc);
    sl_bpe_lists_free(&L);
    return b;
fail:
    sl_bpe_load_abort(b, &map, &txt, doc);
    sl_bpe_lists_free(&L);
    return NULL;
}

sl_bpe *sl_bpe_load_mem(const char *json, size_t json_len, const char *merges, size_t merges_len, const char *name,
                        sl_err *err)
{
    sl_bpe *b = merges ? load_vocab_merges(json, json_len, merges, merges_len, name, err)
                       : sl_bpe_load_json(json, json_len, name, err);
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

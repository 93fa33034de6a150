/* Added tokens are matched leftmost-longest, as HF does with its
 * Aho-Corasick automaton (MatchKind::LeftmostLongest), with the byte trie
 * of trie.h. */
#include "tokenize/added.h"

#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "tokenize/normalizers/normalize.h"
#include "tokenize/tokenizer_impl.h"

int sl_added_parse(const sl_json *list, const char *name, sl_added **out, size_t *n, sl_err *err)
{
    if (!list || list->type == SL_JSON_NULL)
        return 0;
    if (list->type != SL_JSON_ARRAY)
        return sl_errf(err, "%s: added_tokens is not an array", name);
    *out = sl_xcalloc(list->n ? list->n : 1, sizeof **out);
    for (size_t i = 0; i < list->n; i++) {
        const sl_json *t = list->kids[i];
        const sl_json *c = sl_json_get(t, "content");
        int64_t id;
        if (!c || c->type != SL_JSON_STRING || sl_json_get_int(t, "id", &id) || id < 0 || id >= (int64_t)1 << 31)
            return sl_errf(err, "%s: offset %zu: added token needs a string 'content' and an integer 'id'", name,
                           t->offset);
        if (c->str_len == 0)
            return sl_errf(err, "%s: offset %zu: added token with empty content", name, t->offset);
        sl_added *a = &(*out)[(*n)++];
        a->id = (uint32_t)id;
        a->content = sl_xstrndup(c->str, c->str_len);
        a->len = c->str_len;
        int v;
        a->special = sl_json_get_bool(t, "special", &v) == 0 && v;
        a->normalized = sl_json_get_bool(t, "normalized", &v) == 0 ? v : !a->special;
        a->lstrip = sl_json_get_bool(t, "lstrip", &v) == 0 && v;
        a->rstrip = sl_json_get_bool(t, "rstrip", &v) == 0 && v;
        a->single_word = sl_json_get_bool(t, "single_word", &v) == 0 && v;
    }
    return 0;
}

void sl_added_free(sl_added *a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(a[i].content);
        free(a[i].match);
    }
    free(a);
}

static uint32_t char_before(const char *t, size_t pos, size_t *start)
{
    size_t i = pos;
    while (i > 0 && ((uint8_t)t[i - 1] & 0xC0) == 0x80 && pos - i < 3)
        i--;
    if (i > 0)
        i--;
    uint32_t cp = 0;
    if (!sl_utf8_seq((const uint8_t *)t + i, pos - i, &cp))
        cp = (uint8_t)t[pos - 1];
    if (start)
        *start = i;
    return cp;
}

int sl_added_split(const sl_added *added, const sl_trie *trie, const char *t, size_t n, size_t base,
                   sl_special_mode mode, sl_added_gap_fn gap, void *ctx, sl_ids *out, sl_err *err)
{
    size_t done = 0, i = 0;
    while (i < n && trie->n) {
        i = sl_trie_next(trie, t, n, i); /* no token starts before */
        if (i == n)
            break;
        size_t len = 0;
        int32_t k = sl_trie_longest(trie, t, n, i, &len);
        if (k < 0) {
            i++;
            continue;
        }
        const sl_added *a = &added[k];
        size_t start = i, stop = i + len;
        i = stop;
        if (a->special && mode == SL_SPECIAL_PLAIN)
            continue;
        if (a->special && mode == SL_SPECIAL_ERROR)
            return sl_errf(err, "byte %zu: special token '%s' in the text (`special`=error)", base + start, a->content);
        if (a->single_word) {
            uint32_t cp;
            int before = start > 0 && sl_uc_is_word(char_before(t, start, NULL));
            int after = stop < n && sl_utf8_seq((const uint8_t *)t + stop, n - stop, &cp) && sl_uc_is_word(cp);
            if (before || after)
                continue;
        }
        if (a->lstrip) {
            while (start > done) {
                size_t cs;
                uint32_t cp = char_before(t, start, &cs);
                if (!sl_uc_is_space(cp) || cs < done)
                    break;
                start = cs;
            }
        }
        if (a->rstrip) {
            uint32_t cp;
            size_t k2;
            while (stop < n && (k2 = sl_utf8_seq((const uint8_t *)t + stop, n - stop, &cp)) && sl_uc_is_space(cp))
                stop += k2;
            i = stop;
        }
        if (start > done) {
            if (gap(ctx, t + done, start - done, done, err))
                return -1;
        }
        sl_ids_push(out, a->id);
        done = stop;
    }
    if (n > done)
        return gap(ctx, t + done, n - done, done, err);
    return 0;
}

/* (tokenizer_impl.h) */
void sl_tokenizer_set_specials(sl_tokenizer *t, const sl_added *a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!a[i].special || !a[i].len)
            continue;
        if (!t->n_spec) {
            t->spec_prefix = a[i].len < sizeof t->spec_pre ? a[i].len : sizeof t->spec_pre;
            memcpy(t->spec_pre, a[i].content, t->spec_prefix);
        }
        size_t p = 0;
        while (p < t->spec_prefix && p < a[i].len && a[i].content[p] == t->spec_pre[p])
            p++;
        t->spec_prefix = p;
        t->spec_text = sl_xrealloc(t->spec_text, (t->n_spec + 1) * sizeof *t->spec_text);
        t->spec_text[t->n_spec] = sl_xstrndup(a[i].content, a[i].len);
        sl_trie_add(&t->spec_trie, a[i].content, a[i].len, (int32_t)t->n_spec);
        if (!t->n_spec || t->spec_nfirst) { /* their first bytes while at most 4 (0 once more) */
            int k = 0;
            while (k < t->spec_nfirst && t->spec_first[k] != a[i].content[0])
                k++;
            if (k == t->spec_nfirst && k < 4)
                t->spec_first[t->spec_nfirst++] = a[i].content[0];
            else if (k == t->spec_nfirst)
                t->spec_nfirst = 0;
        }
        t->n_spec++;
    }
}

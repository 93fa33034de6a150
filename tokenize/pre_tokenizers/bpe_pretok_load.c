/* The pre_tokenizer of a byte-level BPE tokenizer.json (bpe_load.h): the
 * fast forms that pretok.c's scanners run, or the general Sequence of
 * pretokenizer.h steps around one ByteLevel step. */
#include <stdint.h>
#include <string.h>

#include "base/json.h"
#include "tokenize/models/bpe_load.h"
#include "tokenize/hf_pipeline.h"

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
    if (strcmp(sl_hf_type_of(p), "ByteLevel"))
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
    if (strcmp(sl_hf_type_of(pu), "Punctuation") || strcmp(sl_hf_type_of(dg), "Digits") ||
        strcmp(sl_hf_type_of(sp), "Split"))
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
    if (!strcmp(sl_hf_type_of(p), "Sequence")) {
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
        const char *t = sl_hf_type_of(leaf[i]);
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
                       sl_hf_type_of(p));
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
int sl_bpe_load_pre_tokenizer(sl_bpe *b, const sl_json *p, sl_err *err)
{
    if (sl_hf_is_null(p))
        return sl_errf(err, "%s: pre_tokenizer is null; byte-level BPE needs a ByteLevel pre-tokenizer", b->name);
    if (byte_level_opts(p, &b->add_prefix_space, &b->use_regex))
        return 0;
    const sl_json *list = sl_json_get(p, "pretokenizers");
    if (strcmp(sl_hf_type_of(p), "Sequence") || !list || list->type != SL_JSON_ARRAY)
        return load_general(b, p, err);
    int aps, rx;
    if (list->n == 1 && byte_level_opts(list->kids[0], &b->add_prefix_space, &b->use_regex))
        return 0;
    if (list->n == 2 && !strcmp(sl_hf_type_of(list->kids[0]), "Digits") && fast_digits(list->kids[0], list->kids[1])) {
        b->pretok = SL_PRETOK_GPT2_DIGITS;
        return 0;
    }
    if (list->n == 4 && fast_falcon(list)) {
        b->pretok = SL_PRETOK_FALCON;
        return 0;
    }
    int kind = list->n == 2 && !strcmp(sl_hf_type_of(list->kids[0]), "Split") ? fast_split(list->kids[0]) : -1;
    if (kind >= 0 && byte_level_opts(list->kids[1], &aps, &rx) && !aps && !rx) {
        b->pretok = kind;
        b->add_prefix_space = 0;
        b->use_regex = 1; /* the split is Split's pattern */
        return 0;
    }
    return load_general(b, p, err);
}

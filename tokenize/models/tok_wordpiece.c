/* The WordPiece and WordLevel models (an sl_hf_model, hf_pipeline.h: the
 * models themselves are model_wordpiece.c and model_wordlevel.c) and their
 * family behind tokenizer.h: BERT-style Hugging Face tokenizer.json files.
 * The pipeline runs the added tokens, normalizer, pre-tokenizer,
 * post-processor and decoder. */
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "tokenize/hf_pipeline.h"
#include "tokenize/json_skim.h"
#include "tokenize/models/models.h"

static void *wp_load_model(const sl_json *model, const sl_hf_src *src, sl_err *err)
{
    const char *mt = sl_json_get_str(model, "type");
    if (!mt) {
        sl_errf(err, "%s: not a tokenizer.json (no 'model' object with a type)", src->name);
        return NULL;
    }
    sl_vocab_model *m = sl_xcalloc(1, sizeof *m);
    int rc = !strcmp(mt, "WordPiece") ? sl_wordpiece_load(m, model, src->name, err)
             : !strcmp(mt, "WordLevel")
                 ? sl_wordlevel_load(m, model, src->name, err)
                 : sl_errf(err, "%s: model type '%s' is not supported here (WordPiece, WordLevel)", src->name, mt);
    if (rc) {
        sl_vocab_model_free(m);
        free(m);
        return NULL;
    }
    return m;
}

static void wp_free(void *model)
{
    sl_vocab_model_free(model);
    free(model);
}

static sl_vocab *wp_vocab(void *model)
{
    return &((sl_vocab_model *)model)->vocab;
}

static int64_t wp_unk_id(const void *model)
{
    return ((const sl_vocab_model *)model)->unk_id;
}

static void *wp_state_new(const void *model)
{
    (void)model;
    return sl_xcalloc(1, sizeof(sl_buf));
}

static void wp_state_free(void *state)
{
    if (state)
        sl_buf_free(state);
    free(state);
}

static int wp_encode(const void *model, void *state, const char *p, size_t n, sl_ids *out, sl_err *err)
{
    const sl_vocab_model *m = model;
    return m->kind == SL_MODEL_WORDPIECE ? sl_wordpiece_encode(m, state, p, n, out, err)
                                         : sl_wordlevel_encode(m, p, n, out, err);
}

static const sl_hf_model wp_model = {
    .name_prefix = "bpe",
    .specials = {{"[SEP]", "</s>"}, {"[CLS]", "<s>"}, {"[PAD]", "<pad>"}},
    .bad_utf8 = SL_HF_BAD_SKIP,
    .added_mult = 2,
    .added_slack = 256,
    .load = wp_load_model,
    .free = wp_free,
    .vocab = wp_vocab,
    .unk_id = wp_unk_id,
    .state_new = wp_state_new,
    .state_free = wp_state_free,
    .encode = wp_encode,
};

/* A tokenizer.json whose model is WordPiece or WordLevel. */
static int wp_probe(sl_tok_src *src)
{
    static const char *const types[] = {"WordPiece", "WordLevel", NULL};
    return sl_tokjson_probe_model(src, types);
}

sl_tokenizer *sl_tok_wordpiece_load_mem(const char *text, size_t len, const char *name, const sl_tokenizer_opts *o,
                                        sl_err *err)
{
    return sl_hf_load_mem(&wp_model, &sl_tok_family_wordpiece, text, len, name, o, err);
}

static sl_tokenizer *wp_load(sl_tok_src *src, const sl_tokenizer_opts *o, sl_err *err)
{
    return sl_tokjson_load(src, o, err, sl_tok_wordpiece_load_mem);
}

const sl_tok_family sl_tok_family_wordpiece = {"wordpiece", wp_probe, wp_load, NULL, NULL};

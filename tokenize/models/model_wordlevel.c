/* The WordLevel model (HF models/wordlevel): a piece is its vocabulary
 * entry, or the unk token. */
#include <stdlib.h>
#include <string.h>

#include "tokenize/models/models.h"

int sl_vocab_model_unk(sl_vocab_model *m, const sl_json *model, const char *def, const char *name, sl_err *err);

int sl_vocab_model_unk(sl_vocab_model *m, const sl_json *model, const char *def, const char *name, sl_err *err)
{
    const sl_json *u = sl_json_get(model, "unk_token");
    if (u && u->type != SL_JSON_STRING && u->type != SL_JSON_NULL)
        return sl_errf(err, "%s: model.unk_token is not a string", name);
    m->unk = u && u->type == SL_JSON_STRING ? sl_xstrndup(u->str, u->str_len) : sl_xstrdup(def);
    m->unk_id = sl_vocab_find(&m->vocab, m->unk, strlen(m->unk));
    return 0;
}

int sl_wordlevel_load(sl_vocab_model *m, const sl_json *model, const char *name, sl_err *err)
{
    memset(m, 0, sizeof *m);
    m->kind = SL_MODEL_WORDLEVEL;
    if (sl_vocab_load(&m->vocab, sl_json_get(model, "vocab"), name, err))
        return -1;
    return sl_vocab_model_unk(m, model, "<unk>", name, err);
}

void sl_vocab_model_free(sl_vocab_model *m)
{
    sl_vocab_free(&m->vocab);
    free(m->unk);
    free(m->prefix);
    memset(m, 0, sizeof *m);
}

int sl_wordlevel_encode(const sl_vocab_model *m, const char *p, size_t n, sl_ids *out, sl_err *err)
{
    int64_t id = sl_vocab_find(&m->vocab, p, n);
    if (id < 0)
        id = m->unk_id;
    if (id < 0)
        return sl_errf(err, "'%.*s' is not in the vocabulary and the unk token '%s' is not either",
                       (int)(n > 60 ? 60 : n), p, m->unk);
    sl_ids_push(out, (uint32_t)id);
    return 0;
}

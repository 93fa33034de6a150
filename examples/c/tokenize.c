/* Tokenize a string with a tokenizer file and decode the ids back.
 *
 *   ./tokenize gpt-neox-20b/tokenizer.json "Hello world"
 *   12092 1533
 *   Hello world
 *
 * Line 1: the ids, as Hugging Face tokenizers' encode(text) gives them
 * (special tokens written in the text, like <|endoftext|>, become their id).
 * Line 2: the ids decoded back to text. */
#include <sluice/sluice.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s TOKENIZER TEXT\n", argv[0]);
        return 2;
    }
    sl_err err = {0};

    /* Load the tokenizer: a tokenizer.json, vocab.json + merges.txt, a
     * SentencePiece .model, ... (the family is recognised by content). */
    sl_tokenizer_opts opts = SL_TOKENIZER_OPTS_INIT;
    opts.special = SL_SPECIAL_PARSE;
    sl_tokenizer *tok = sl_tokenizer_load(argv[1], &opts, &err);
    if (!tok) {
        fprintf(stderr, "tokenize: %s\n", err.msg);
        return 1;
    }

    /* Each thread that encodes has its own state; the tokenizer is shared. */
    sl_tok_state *state = sl_tok_state_new(tok);
    sl_ids ids = {0};
    sl_buf text = {0};
    int rc = sl_tokenizer_encode(tok, state, argv[2], strlen(argv[2]), &ids, &err);
    if (rc == 0) {
        for (size_t i = 0; i < ids.n; i++)
            printf(i ? " %u" : "%u", ids.v[i]);
        printf("\n");
        rc = sl_tokenizer_decode(tok, ids.v, ids.n, &text, &err);
    }
    if (rc == 0)
        printf("%s\n", text.data ? text.data : "");
    else
        fprintf(stderr, "tokenize: %s\n", err.msg);

    sl_buf_free(&text);
    sl_ids_free(&ids);
    sl_tok_state_free(state);
    sl_tokenizer_free(tok);
    return rc ? 1 : 0;
}

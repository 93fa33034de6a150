/* A program that uses libsluice the way an outside project would: built by
 * tests/cli/install_pkgconfig.sh against the installed headers and library
 * only (`pkg-config --cflags --libs sluice`), never against the source tree.
 *
 *   install_pkgconfig count STREAM       "docs D tokens T sum S" of a token stream
 *   install_pkgconfig bpe TOKENIZER FILE the BPE ids of FILE's bytes, one line
 *   install_pkgconfig shard DIR          per split: rows, pieces, documents, tokens
 *
 * It reaches past the stable API (sl_buf_append), so it opts into the rest. */
#define SLUICE_UNSTABLE_API
#include <sluice/sluice.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int die(const sl_err *err)
{
    fprintf(stderr, "install_pkgconfig: %s\n", err->msg);
    return 1;
}

static int count(const char *path)
{
    sl_err err = {{0}};
    sl_input *in = sl_input_open(path, &err);
    if (!in)
        return die(&err);
    sl_ts_reader *r = sl_ts_reader_open(in, &err);
    if (!r) {
        sl_input_close(in);
        return die(&err);
    }
    sl_doc d;
    memset(&d, 0, sizeof d);
    unsigned long long docs = 0, tokens = 0, sum = 0;
    unsigned vocab = sl_ts_reader_header(r)->vocab_size;
    int rc;
    while ((rc = sl_ts_read_doc(r, &d, &err)) == 1) {
        docs++;
        tokens += d.n_tokens;
        for (size_t i = 0; i < d.n_tokens; i++)
            sum += d.tokens[i];
    }
    sl_doc_free(&d);
    sl_ts_reader_close(r);
    sl_input_close(in);
    if (rc < 0)
        return die(&err);
    printf("docs %llu tokens %llu sum %llu vocab %u\n", docs, tokens, sum, vocab);
    return 0;
}

static int bpe(const char *tokenizer, const char *path)
{
    sl_err err = {{0}};
    /* through the tokenizer interface: the family is recognised by content */
    sl_tokenizer_opts to = SL_TOKENIZER_OPTS_INIT;
    to.special = SL_SPECIAL_PARSE;
    sl_tokenizer *t = sl_tokenizer_load(tokenizer, &to, &err);
    if (!t)
        return die(&err);
    FILE *f = fopen(path, "rb");
    if (!f) {
        sl_tokenizer_free(t);
        perror(path);
        return 1;
    }
    sl_buf text = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        sl_buf_append(&text, chunk, n);
    fclose(f);
    sl_tok_state *st = sl_tok_state_new(t);
    sl_ids ids = {0};
    int rc = sl_tokenizer_encode(t, st, text.data ? text.data : "", text.len, &ids, &err);
    if (rc == 0) {
        for (size_t i = 0; i < ids.n; i++)
            printf(i ? " %u" : "%u", ids.v[i]);
        printf("\n");
    }
    sl_ids_free(&ids);
    sl_tok_state_free(st);
    sl_buf_free(&text);
    sl_tokenizer_free(t);
    return rc ? die(&err) : 0;
}

static int shard(const char *dir)
{
    sl_err err = {{0}};
    sl_shard *s = sl_shard_open(dir, 1, &err);
    if (!s)
        return die(&err);
    int rc = 0;
    for (int k = 0; k < SL_SPLIT_N && !rc; k++) {
        const sl_shard_split *sp = sl_shard_get_split(s, k);
        if (!sp->present)
            continue;
        unsigned long long rows = 0, pieces = 0, docs = 0;
        sl_shard_iter *it = sl_shard_iter_open(s, k, &err);
        if (!it) {
            rc = -1;
            break;
        }
        sl_row row;
        int m;
        while ((m = sl_shard_iter_next(it, &row, &err)) == 1) {
            rows++;
            pieces += row.n_pieces;
        }
        sl_shard_iter_close(it);
        if (m < 0) {
            rc = -1;
            break;
        }
        for (size_t i = 0; i < sl_shard_n_docs(s); i++) {
            const char *id, *by_ordinal;
            size_t len = 0;
            const sl_shard_docref *d = sl_shard_doc(s, i, &id);
            by_ordinal = sl_shard_doc_id(s, d->ordinal, &len);
            if (by_ordinal != id || len != d->id_len) {
                fprintf(stderr, "install_pkgconfig: document %zu: the two id accessors disagree\n", i);
                rc = 1;
            }
            docs += d->split == k;
        }
        printf("%s rows %llu pieces %llu documents %llu tokens %llu seq_len %u\n", sl_shard_split_names[k], rows,
               pieces, docs, (unsigned long long)sp->tokens, sl_shard_get_info(s)->seq_len);
    }
    sl_shard_close(s);
    return rc ? die(&err) : 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "count"))
        return count(argv[2]);
    if (argc == 4 && !strcmp(argv[1], "bpe"))
        return bpe(argv[2], argv[3]);
    if (argc == 3 && !strcmp(argv[1], "shard"))
        return shard(argv[2]);
    fprintf(stderr, "usage: install_pkgconfig count STREAM | bpe TOKENIZER FILE | shard DIR (sluice %s)\n",
            SLUICE_VERSION_STRING);
    return 2;
}

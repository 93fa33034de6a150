/* libFuzzer target: SentencePiece .model files (tokenize/models/sp_proto.c and the
 * spm family) on arbitrary bytes. The protobuf reader must return a model
 * or a one-line error naming the offset, never read out of bounds; a file
 * that loads must encode sample texts (ids below the vocab size) and
 * decode them without error. The protobuf reader's fast way for the usual
 * piece layout must give what its field loop alone gives. Seeds:
 * tests/fuzz/corpus/spm_load (tiny Unigram and BPE models trained by
 * SentencePieceTrainer on README.md with a 4-rule normalization TSV, one
 * with byte_fallback). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tokenize/models/sp_proto.h"
#include "tokenize/tokenizer.h"

static void exercise(sl_tokenizer *t)
{
    static const char *const samples[] = {"Hello  world", "  AB \xef\xbc\xa1 <sep> x\xe2\x80\x83y ",
                                          "\xe4\xb8\xad\xf0\x9f\x99\x82", "", "\xff\xfe a"};
    sl_tok_state *s = sl_tok_state_new(t);
    for (size_t k = 0; k < sizeof samples / sizeof *samples; k++) {
        sl_ids ids = {0};
        sl_err e;
        if (sl_tokenizer_encode(t, s, samples[k], strlen(samples[k]), &ids, &e))
            abort();
        for (size_t i = 0; i < ids.n; i++)
            if (ids.v[i] >= sl_tokenizer_vocab_size(t))
                abort();
        sl_buf out = {0};
        if (sl_tokenizer_decode(t, ids.v, ids.n, &out, &e))
            abort();
        sl_buf_free(&out);
        sl_ids_free(&ids);
    }
    sl_tok_state_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sl_err e, e2;
    sl_spm_proto m, m2;
    int rc = sl_spm_proto_parse(data, size, "fuzz.model", &m, &e);
    if (rc && (!strstr(e.msg, "fuzz.model") || strchr(e.msg, '\n')))
        abort();
    /* the fast way for the usual piece layout gives what the field loop does */
    sl_spm_proto_fast = 0;
    int rc2 = sl_spm_proto_parse(data, size, "fuzz.model", &m2, &e2);
    sl_spm_proto_fast = 1;
    if (rc != rc2 || (rc && strcmp(e.msg, e2.msg)) || (!rc && !sl_spm_proto_same(&m, &m2)))
        abort();
    if (!rc) {
        sl_spm_proto_free(&m);
        sl_spm_proto_free(&m2);
    }
    int fd = memfd_create("fuzz.model", 0);
    if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    sl_tokenizer_opts o = SL_TOKENIZER_OPTS_INIT;
    o.family = "spm";
    sl_tokenizer *t = sl_tokenizer_load(path, &o, &e);
    if (t) {
        exercise(t);
        sl_tokenizer_free(t);
    }
    close(fd);
    return 0;
}

/* Write token ids as a token stream, then pack that stream into a shard
 * directory of fixed-length rows for training.
 *
 *   printf '5 6 7\n8 9\n' | ./write_shards 32000 2 16 docs.tok shards/
 *
 * Each line of standard input is one document: its token ids, separated by
 * spaces. VOCAB is the vocabulary size (every id is below it), EOS the id
 * that ends each document in the rows, SEQ_LEN the row length (a multiple
 * of 8). The documents are named doc0, doc1, ... */
#include <sluice/sluice.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads the documents of standard input into a token stream at path. */
static int write_stream(const char *path, uint32_t vocab, int64_t eos, sl_err *err)
{
    sl_ts_header h;
    sl_ts_header_init(&h, SL_MOD_IDS, vocab);
    h.eos = eos;
    sl_output *out = sl_output_open(path, err);
    if (!out) {
        sl_ts_header_free(&h);
        return -1;
    }
    sl_ts_writer *w = sl_ts_writer_open(out, &h, err);
    sl_ts_header_free(&h);
    if (!w) {
        sl_output_abort(out);
        return -1;
    }

    sl_doc doc = {0};
    char line[65536];
    int rc = 0;
    for (unsigned n = 0; rc == 0 && fgets(line, sizeof line, stdin); n++) {
        char id[32];
        snprintf(id, sizeof id, "doc%u", n);
        sl_doc_clear(&doc);
        sl_doc_set_id(&doc, id, strlen(id));
        char *p = line, *end;
        for (unsigned long v = strtoul(p, &end, 10); end != p; v = strtoul(p, &end, 10)) {
            sl_doc_push(&doc, (uint32_t)v);
            p = end;
        }
        rc = sl_ts_write_doc(w, &doc, err); /* checks every id < vocab */
    }
    sl_doc_free(&doc);

    /* The trailer (count and checksum) first, then the file is renamed into place. */
    if (rc == 0 && sl_ts_writer_finish(w, err) == 0)
        return sl_output_commit(out, err);
    if (rc != 0)
        sl_ts_writer_abort(w);
    sl_output_abort(out);
    return -1;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: %s VOCAB EOS SEQ_LEN STREAM DIR < ids.txt\n", argv[0]);
        return 2;
    }
    sl_err err = {0};
    if (write_stream(argv[4], (uint32_t)strtoul(argv[1], NULL, 10), strtoll(argv[2], NULL, 10), &err)) {
        fprintf(stderr, "write_shards: %s\n", err.msg);
        return 1;
    }

    /* The shard stage, as `sluice shard STREAM --seq-len SEQ_LEN -o DIR` runs it. */
    sl_stage_opts opts;
    sl_stage_opts_default(&opts);
    opts.pack.seq_len = strtoll(argv[3], NULL, 10);
    opts.progress = 0;
    const char *inputs[] = {argv[4]};
    sl_stage_stats stats;
    if (sl_shard_run(&opts, inputs, 1, argv[5], &stats, &err) != 0) {
        fprintf(stderr, "write_shards: %s\n", err.msg);
        return 1;
    }
    printf("%llu documents into %s\n", (unsigned long long)stats.docs, argv[5]);
    return 0;
}

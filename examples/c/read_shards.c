/* Read a shard directory row by row and print every document piece.
 *
 *   ./read_shards shards/
 *   train row 0 doc0 0: 5 6 7 2
 *   ...
 *
 * One line per piece: the split, the row, the document id, the piece's
 * offset in the document, then its tokens. A document longer than the
 * space left in a row continues in the next row; concatenating its pieces
 * in offset order gives the document followed by the end-of-document id. */
#include <sluice/sluice.h>

#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    sl_err err = {0};
    sl_shard *shard = sl_shard_open(argv[1], 1, &err); /* 1: verify the checksums too */
    if (!shard) {
        fprintf(stderr, "read_shards: %s\n", err.msg);
        return 1;
    }
    const sl_shard_info *info = sl_shard_get_info(shard);
    fprintf(stderr, "%zu documents, rows of %u tokens\n", sl_shard_n_docs(shard), info->seq_len);

    int rc = 0;
    for (int split = 0; split < SL_SPLIT_N && rc == 0; split++) {
        if (!sl_shard_get_split(shard, split)->present) /* no validation split, say */
            continue;
        sl_shard_iter *it = sl_shard_iter_open(shard, split, &err);
        if (!it) {
            rc = -1;
            break;
        }
        sl_row row;
        while ((rc = sl_shard_iter_next(it, &row, &err)) == 1) {
            for (size_t i = 0; i < row.n_pieces; i++) {
                const sl_piece *p = &row.pieces[i];
                printf("%s row %llu %.*s %llu:", sl_shard_split_names[split], (unsigned long long)row.index,
                       (int)p->id_len, p->id, (unsigned long long)p->doc_offset);
                for (uint32_t t = 0; t < p->length; t++)
                    printf(" %u", row.tokens[p->offset + t]);
                printf("\n");
            }
        }
        sl_shard_iter_close(it);
    }
    if (rc < 0)
        fprintf(stderr, "read_shards: %s\n", err.msg);
    sl_shard_close(shard);
    return rc < 0 ? 1 : 0;
}

/* The fields of an open shard directory: internal to shard/ (library users
 * and the CLI go through the accessors in shard/shard.h). */
#ifndef SLUICE_SHARD_SHARD_INTERNAL_H
#define SLUICE_SHARD_SHARD_INTERNAL_H

#include "shard/shard.h"

struct sl_shard {
    char *dir;
    sl_shard_info info;
    sl_warmup warmup; /* resolved stages of the train split */
    sl_shard_split split[SL_SPLIT_N];
    /* documents.jsonl: ids loaded, lines read through docs_map */
    size_t n_docs;
    sl_shard_docref *docs;
    char *doc_ids;
    char *docs_map; /* documents.jsonl, memory-mapped (NULL when empty) */
    size_t docs_len;
    int docs_streamed; /* opened by sl_shard_open_docs: no table, pieces get no id */
};

#endif

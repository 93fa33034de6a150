/* sluice: the library behind the `sluice` command (libsluice.a).
 *
 * Every public header, in the order of the pipeline. A program includes this
 * one (`#include <sluice/sluice.h>`, compiled with `pkg-config --cflags
 * --libs sluice`) or the module headers it needs (`<sluice/shard/shard.h>`).
 * `make install` installs exactly the headers listed here (plus whatever
 * they include, which must be public too: tests/cli/install_pkgconfig.sh
 * builds a program against the installed copy), so a header that is not
 * here is internal and may change at any time. docs/architecture.md says
 * what each module does and how the CLI calls it.
 *
 * Conventions: names start with sl_ / SL_ (dna_ / DNA_ in dna/); a function
 * that can fail returns -1 or NULL and fills an sl_err whose message names
 * the file and position; nothing prints, nothing exits. */
#ifndef SLUICE_H
#define SLUICE_H

#define SLUICE_VERSION_MAJOR 0
#define SLUICE_VERSION_MINOR 1
#define SLUICE_VERSION_PATCH 0
#define SLUICE_VERSION_STRING "0.1.0"

#ifdef __cplusplus
extern "C" {
#endif

/* base: errors, buffers, UTF-8, JSON, input and atomic output, progress, statistics */
#include "stream/err.h"
#include "stream/buf.h"
#include "stream/utf8.h"
#include "stream/json.h"
#include "stream/io.h"
#include "stream/source.h"
#include "stream/parts.h"
#include "stream/partition.h"
#include "stream/progress.h"
#include "stream/stats.h"
#include "stream/batch.h"

/* documents in, token streams between stages */
#include "stream/docreader.h"
#include "stream/read.h"
#include "stream/tokstream.h"
#include "stream/cat.h"

/* text tokenizers: one interface (tokenizer.h) over the families, the
 * documents -> token stream stage (docpipe.h) and back (detok.h) */
#include "tokenize/tokenizer.h"
#include "tokenize/bpe.h"
#include "tokenize/chartok.h"
#include "tokenize/detok.h"
#include "tokenize/docpipe.h"
#include "tokenize/ids.h"

/* DNA */
#include "dna/seqfile.h"
#include "dna/bed.h"
#include "dna/window.h"
#include "dna/nuctok.h"
#include "dna/emit.h"
#include "dna/species.h"
#include "dna/tokenize.h"

/* audio */
#include "audio/decode.h"
#include "audio/quantize.h"
#include "audio/clips.h"
#include "audio/wavwrite.h"
#include "audio/tokenize.h"
#include "audio/detokenize.h"

/* document metadata, packing, warmup schedules, shard directories, Megatron datasets, mixing */
#include "shard/meta.h"
#include "shard/pack.h"
#include "shard/packed.h"
#include "shard/warmup.h"
#include "shard/view.h"
#include "shard/shard.h"
#include "shard/cat.h"
#include "shard/megatron.h"
#include "shard/megatron_stage.h"
#include "shard/merge.h"
#include "shard/stage.h"
#include "shard/mix.h"

/* compute backends, checkpoints, models (the interface, Mamba-1), scoring (with
 * per-position loss curves and mergeable score summaries), filtering and
 * fastText classifiers */
#include "kernels/backend.h"
#include "model/safetensors.h"
#include "model/tensors.h"
#include "model/model.h"
#include "model/mamba.h"
#include "model/score.h"
#include "model/curve.h"
#include "model/summary.h"
#include "model/score_stage.h"
#include "model/filter.h"
#include "model/fasttext.h"
#include "model/classify.h"

#ifdef __cplusplus
}
#endif

#endif

/* sluice: the library behind the `sluice` command (libsluice.a).
 *
 * A program includes this header (`#include <sluice/sluice.h>`) and builds
 * with `pkg-config --cflags --libs sluice`; examples/c/ shows four short
 * programs and docs/api.md describes the API.
 *
 * The stable API is what this header declares by default: the calls below,
 * each documented where it is declared. Within a 0.x minor version they keep
 * their names, arguments and meaning:
 *
 *   errors        sl_err (base/err.h): every call that can fail fills one
 *                 (message, code, field); sl_errcode_name
 *   messages      sl_log_set/_get (base/log.h): warnings, notes, progress
 *   buffers       sl_buf, sl_buf_free
 *   files         sl_input_open/_close, sl_output_open/_commit/_abort
 *   documents     sl_docreader_open/_next/_close, sl_textdoc_free
 *   token streams sl_ts_header_init/_free, sl_doc_set_id/_push/_clear/_free,
 *                 sl_ts_writer_open, sl_ts_write_doc, sl_ts_writer_finish/_abort,
 *                 sl_ts_reader_open/_open_paths/_header, sl_ts_read_doc,
 *                 sl_ts_reader_close
 *   tokenizers    sl_tokenizer_load/_free/_vocab_size/_special/_token_id/_header,
 *                 sl_tok_state_new/_free, sl_tokenizer_encode/_decode, sl_ids_free
 *   shards        sl_stage_opts_default, sl_shard_run (write a shard directory);
 *                 sl_shard_open/_close/_get_info/_get_split/_n_docs/_doc/_doc_id,
 *                 sl_shard_iter_open/_next/_close (read one)
 *   models        sl_backend_open/_close, sl_cuda_device_count,
 *                 sl_model_load/_free/_get_info, sl_model_run_new/_free/_reset,
 *                 sl_model_forward
 *   scoring       sl_score_batch
 *
 * Everything else (the other stages, DNA and audio, packing, Megatron
 * export, mixing, curves, filters, the helpers behind the stable calls) is
 * the unstable API: declared only when the program defines
 * SLUICE_UNSTABLE_API before including this header (as zstd's
 * ZSTD_STATIC_LINKING_ONLY), and free to change in any release. The module
 * headers are installed too: the core ones included first below hold the
 * same split; the others (<sluice/shard/mix.h>, ...) are unstable as a whole
 * and need the macro as well.
 *
 * Conventions: names start with sl_ / SL_ (dna_ / DNA_ in dna/); a function
 * that can fail returns -1 or NULL and fills an sl_err whose message names
 * the file and position, whose code says what kind of failure (SL_E_IO,
 * SL_E_FORMAT, SL_E_OPTION, ...) and whose field names the option at fault;
 * nothing prints (warnings, notes and progress go to the callback set with
 * sl_log_set), nothing exits. A stage runs as
 * sl_<stage>_run(opts, inputs, n, out, result, err). Objects are created by
 * _open/_new/_load and released by the matching _close/_free; NULL passed to
 * a release call is a no-op. */
#ifndef SLUICE_H
#define SLUICE_H

#define SLUICE_VERSION_MAJOR 0
#define SLUICE_VERSION_MINOR 1
#define SLUICE_VERSION_PATCH 0
#define SLUICE_VERSION_STRING "0.1.0"

#ifdef __cplusplus
extern "C" {
#endif

/* the stable core (the unstable parts of these headers need SLUICE_UNSTABLE_API) */
#include "base/err.h"
#include "base/log.h"
#include "base/buf.h"
#include "base/utf8.h"
#include "stream/io.h"
#include "stream/docreader.h"
#include "stream/tokstream.h"
#include "tokenize/tokenizer.h"
#include "shard/pack.h"
#include "shard/meta.h"
#include "shard/packed.h"
#include "shard/shard.h"
#include "shard/stage.h"
#include "kernels/backend.h"
#include "model/model.h"
#include "model/score.h"

/* the unstable API, in the order of the pipeline */
#ifdef SLUICE_UNSTABLE_API
/* base: errors, buffers, UTF-8, JSON, input and atomic output, progress, statistics */
#include "base/json.h"
#include "stream/source.h"
#include "stream/parts.h"
#include "stream/partition.h"
#include "stream/progress.h"
#include "stream/stats.h"
#include "stream/batch.h"

/* documents in, token streams between stages */
#include "stream/read.h"
#include "stream/cat.h"

/* text tokenizers: one interface (tokenizer.h) over the families, the
 * documents -> token stream stage (docpipe.h) and back (detok.h) */
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

/* warmup schedules, shard views and concatenation, Megatron datasets, merging, mixing */
#include "shard/warmup.h"
#include "shard/view.h"
#include "shard/cat.h"
#include "shard/megatron.h"
#include "shard/megatron_stage.h"
#include "shard/merge.h"
#include "shard/mix.h"
#include "shard/stats.h"
#include "shard/verify.h"

/* checkpoints, Mamba, the score stage (with per-position loss curves and
 * mergeable score summaries), filtering and fastText classifiers */
#include "model/safetensors.h"
#include "model/tensors.h"
#include "model/mamba.h"
#include "model/curve.h"
#include "model/summary.h"
#include "model/score_stage.h"
#include "model/filter.h"
#include "model/fasttext.h"
#include "model/classify.h"
#endif /* SLUICE_UNSTABLE_API */

#ifdef __cplusplus
}
#endif

#endif

#!/bin/bash
# One task of the text pipeline: part R of N of the corpus, read and
# BPE-tokenized into $OUT/tokens/tokens-R-of-N.tok (docs/scale-out.md).
# Submit with submit.sh (array + dependent shard job), or by hand:
#   sbatch --array=0-63 examples/slurm/text.sh
# Re-submitting the same array re-does only the parts whose output is
# missing or does not verify (--skip-existing).
#SBATCH --job-name=sluice-text
#SBATCH --output=%x-%A_%a.log

# ---- variables (exported by submit.sh, or: sbatch --export=ALL,INPUTS=...)
SLUICE=${SLUICE:-sluice}
INPUTS=${INPUTS:-corpus/*.jsonl}          # files or globs, expanded here
TOKENIZER=${TOKENIZER:-tokenizer.json}
OUT=${OUT:-work}                          # parts go to $OUT/tokens/
READ_OPTS=${READ_OPTS-}                  # e.g. --field content --on-error skip
BPE_OPTS=${BPE_OPTS---append-eos}
THREADS=${THREADS:-${SLURM_CPUS_PER_TASK:-1}}   # the CPUs the task got (submit.sh: CPUS)
# ----

set -euo pipefail
: "${SLURM_ARRAY_TASK_ID:?run as a job array task (sbatch --array=0-<N-1>)}"
R=$((SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN))
N=$SLURM_ARRAY_TASK_COUNT
mkdir -p "$OUT/tokens"
part=$(printf '%s/tokens/tokens-%05d-of-%05d.tok' "$OUT" "$R" "$N")
# shellcheck disable=SC2086  # INPUTS and *_OPTS are word lists on purpose
set +e
$SLUICE read --part slurm --progress -@ "$THREADS" $READ_OPTS $INPUTS |
  $SLUICE tokenize bpe --skip-existing --progress -@ "$THREADS" -t "$TOKENIZER" $BPE_OPTS -o "$part"
st=("${PIPESTATUS[@]}")
set -e
# tokenize bpe must succeed; read too, except that when the part already
# verifies tokenize stops at once and read ends on the closed pipe (SIGPIPE,
# 141): the part is done either way.
[ "${st[1]}" = 0 ] || exit "${st[1]}"
[ "${st[0]}" = 0 ] || [ "${st[0]}" = 141 ] || exit "${st[0]}"
echo "part $R of $N: $part"

#!/bin/bash
# Scoring as a GPU array: task R scores part file R of $PARTS (a directory of
# token part files, e.g. $OUT/tokens from text.sh with the same N) and writes
# the scored stream $OUT/scored/scored-R-of-N.tok and its score summary
# $OUT/summaries/summary-R-of-N.sum (a few hundred KB at most); then one filter
# over the whole scored directory keeps documents by cutoffs computed over ALL
# parts (filter.sh: exact, or from the merged summaries with CUTOFFS=summaries). On a node without a GPU the same script scores on the CPU
# (--device auto). submit.sh asks for a GPU (GRES=gpu:1) only when the cluster
# has GPU nodes (sinfo), else for none; GRES=none or GRES=gpu:2 choose.
# Submit with: submit.sh score, or by hand:
#   sbatch --array=0-63 --cpus-per-task=8 --gres=gpu:1 examples/slurm/score.sh
#SBATCH --job-name=sluice-score
#SBATCH --output=%x-%A_%a.log

# ---- variables
SLUICE=${SLUICE:-sluice}
MODEL=${MODEL:-mamba-130m}
OUT=${OUT:-work}
PARTS=${PARTS:-$OUT/tokens}
SCORE_OPTS=${SCORE_OPTS---prepend eos}
DEVICE=${DEVICE:-auto}                   # auto: the GPU when the task got one, else CPU
THREADS=${THREADS:-${SLURM_CPUS_PER_TASK:-1}}   # the CPUs the task got (submit.sh: CPUS)
# ----

set -euo pipefail
: "${SLURM_ARRAY_TASK_ID:?run as a job array task (sbatch --array=0-<N-1>)}"
R=$((SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN))
N=$SLURM_ARRAY_TASK_COUNT
mapfile -t files < <(ls "$PARTS" | grep -- '-of-' | sort)
[ "${#files[@]}" = "$N" ] || { echo "score.sh: $PARTS has ${#files[@]} part files, the array $N tasks" >&2; exit 1; }
# the part files in part order (zero-padded R sorts as numbers)
in=$PARTS/${files[$R]}
mkdir -p "$OUT/scored" "$OUT/summaries"
out=$(printf '%s/scored/scored-%05d-of-%05d.tok' "$OUT" "$R" "$N")
sum=$(printf '%s/summaries/summary-%05d-of-%05d.sum' "$OUT" "$R" "$N")
# shellcheck disable=SC2086
$SLUICE score --skip-existing --progress -@ "$THREADS" -m "$MODEL" --device "$DEVICE" --to-stream $SCORE_OPTS "$in" \
  -o "$out" --summary "$sum"
echo "part $R of $N: $out"

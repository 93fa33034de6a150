#!/bin/bash
# One job of the MinHash dedup chain (docs/dedup.md, "Steps"): STEP is
#   signatures  array task R of N: the signatures of part R of $INPUTS
#   buckets     array task R of M: the candidate pairs of bands [B*R/M, B*(R+1)/M)
#   cluster     one job: the clusters of all pairs, $OUT/dedup/summary.json and .svg
#   filter      array task R of N (the same N as signatures): the kept documents
#               of part R into $OUT/dedup/kept/kept-R-of-N.jsonl, the removed
#               ones into $OUT/dedup/removed/
# submit.sh dedup submits the four with --dependency=afterok between them;
# re-submitting re-does only what is missing or does not verify
# (--skip-existing). Every step must get the same MINHASH_OPTS.
#SBATCH --job-name=sluice-dedup
#SBATCH --cpus-per-task=4
#SBATCH --output=%x-%A_%a.log

# ---- variables (exported by submit.sh, or: sbatch --export=ALL,STEP=...,INPUTS=...)
SLUICE=${SLUICE:-sluice}
STEP=${STEP:-${1:-}}
INPUTS=${INPUTS:-corpus/*.jsonl}          # files or globs, expanded here
OUT=${OUT:-work}                          # the steps' files go to $OUT/dedup/
READ_OPTS=${READ_OPTS-}                   # e.g. --field content
MINHASH_OPTS=${MINHASH_OPTS-}             # e.g. --buckets 20 --rows 10 --jaccard 0.8
# ----

set -euo pipefail
W=$OUT/dedup
part=()
if [ "$STEP" != cluster ]; then
  : "${SLURM_ARRAY_TASK_ID:?run $STEP as a job array task (sbatch --array=0-<N-1>)}"
  part=(--part slurm)
  R=$((SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN))
  N=$SLURM_ARRAY_TASK_COUNT
fi
# shellcheck disable=SC2086  # INPUTS and *_OPTS are word lists on purpose
case $STEP in
  signatures) $SLUICE dedup minhash --step signatures "${part[@]}" --skip-existing --signatures "$W" \
                $READ_OPTS $MINHASH_OPTS $INPUTS ;;
  buckets) $SLUICE dedup minhash --step buckets "${part[@]}" --skip-existing --signatures "$W" $MINHASH_OPTS ;;
  cluster) $SLUICE dedup minhash --step cluster --skip-existing --signatures "$W" $MINHASH_OPTS \
             --summary "$W/summary.json" --plot "$W/summary.svg" ;;
  filter)
    name=$(printf '%05d-of-%05d' "$R" "$N")
    $SLUICE dedup minhash --step filter "${part[@]}" --skip-existing --signatures "$W" $READ_OPTS $MINHASH_OPTS \
      $INPUTS -o "$W/kept/kept-$name.jsonl" --removed "$W/removed/removed-$name.jsonl" ;;
  *) echo "dedup.sh: STEP must be signatures, buckets, cluster or filter (got '$STEP')" >&2; exit 2 ;;
esac
echo "dedup $STEP${R+ part $R of $N}: done"

#!/bin/bash
# The merge job: shards the directory of part files written by an array
# (text.sh, dna.sh) into $OUT/shards, exactly as sharding the single-process
# output would. Run it after the array: sbatch --dependency=afterok:<array job>.
# A missing or foreign part file is an error naming it.
#SBATCH --job-name=sluice-shard
#SBATCH --output=%x-%j.log

# ---- variables
SLUICE=${SLUICE:-sluice}
OUT=${OUT:-work}
SHARD_OPTS=${SHARD_OPTS---seq-len 2048 --shuffle --seed 1 --val-fraction 0.01}
THREADS=${THREADS:-${SLURM_CPUS_PER_TASK:-1}}   # the CPUs the job got (submit.sh: CPUS)
# ----

set -euo pipefail
# shellcheck disable=SC2086
$SLUICE shard --skip-existing --progress -@ "$THREADS" $SHARD_OPTS "$OUT/tokens" -o "$OUT/shards"
echo "shards: $OUT/shards"

#!/bin/bash
# After score.sh: one filter over all scored parts, so percentile cutoffs
# (--keep-pct, --bucket) are those of the whole corpus, then (optionally) a
# shard of the kept documents. Run with --dependency=afterok:<score array>.
# CUTOFFS=exact (default): the exact percentiles, from a first pass over the
# scored parts. CUTOFFS=summaries: from the merged score summaries that
# score.sh wrote (within relative 2^-10 of the exact ones, docs/scale-out.md),
# one pass; each part could then also be filtered by its own task.
#SBATCH --job-name=sluice-filter
#SBATCH --output=%x-%j.log

# ---- variables
SLUICE=${SLUICE:-sluice}
OUT=${OUT:-work}
FILTER_OPTS=${FILTER_OPTS---keep-pct 10:90}
CUTOFFS=${CUTOFFS:-exact}                # exact | summaries
THREADS=${THREADS:-${SLURM_CPUS_PER_TASK:-1}}   # the CPUs the job got (submit.sh: CPUS)
# ----

set -euo pipefail
from=()
case $CUTOFFS in
  exact) ;;
  summaries) from=(--cutoffs-from "$OUT/summaries") ;;
  *) echo "filter.sh: CUTOFFS is exact or summaries, not '$CUTOFFS'" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086
$SLUICE filter --progress -@ "$THREADS" $FILTER_OPTS "${from[@]}" "$OUT/scored" -o "$OUT/kept.tok"
echo "kept: $OUT/kept.tok"

#!/bin/bash
# After score.sh: one filter over all scored parts, so percentile cutoffs
# (--keep-pct, --bucket) are those of the whole corpus, then (optionally) a
# shard of the kept documents. Run with --dependency=afterok:<score array>.
#SBATCH --job-name=sluice-filter
#SBATCH --cpus-per-task=4
#SBATCH --output=%x-%j.log

# ---- variables
SLUICE=${SLUICE:-sluice}
OUT=${OUT:-work}
FILTER_OPTS=${FILTER_OPTS---keep-pct 10:90}
# ----

set -euo pipefail
# shellcheck disable=SC2086
$SLUICE filter $FILTER_OPTS "$OUT/scored" -o "$OUT/kept.tok"
echo "kept: $OUT/kept.tok"

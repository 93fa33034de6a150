#!/bin/bash
# One task of the DNA pipeline: part R of N of the sequence files (whole
# FASTA/FASTQ/2bit files, balanced by size) tokenized into
# $OUT/tokens/dna-R-of-N.tok; or, with SPECIES set, samples R*S/N.. of the
# species-classification set drawn from the genomes in $INPUTS
# (docs/scale-out.md). Submit with submit.sh or sbatch --array=0-63.
#SBATCH --job-name=sluice-dna
#SBATCH --output=%x-%A_%a.log

# ---- variables
SLUICE=${SLUICE:-sluice}
INPUTS=${INPUTS:-genomes/*.fa.gz}
OUT=${OUT:-work}
DNA_OPTS=${DNA_OPTS---window 32768 --add-eos}   # tokenize dna options
SPECIES=${SPECIES:-}                             # non-empty: dna species instead
SPECIES_OPTS=${SPECIES_OPTS---window 32768 --samples 65536 --seed 1}
THREADS=${THREADS:-${SLURM_CPUS_PER_TASK:-1}}   # the CPUs the task got (submit.sh: CPUS)
# ----

set -euo pipefail
: "${SLURM_ARRAY_TASK_ID:?run as a job array task (sbatch --array=0-<N-1>)}"
R=$((SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN))
N=$SLURM_ARRAY_TASK_COUNT
mkdir -p "$OUT/tokens"
part=$(printf '%s/tokens/dna-%05d-of-%05d.tok' "$OUT" "$R" "$N")
# shellcheck disable=SC2086
if [ -n "$SPECIES" ]; then
  $SLUICE dna species --part slurm --skip-existing --progress -@ "$THREADS" $SPECIES_OPTS $INPUTS -o "$part"
else
  $SLUICE tokenize dna --part slurm --skip-existing --progress -@ "$THREADS" $DNA_OPTS $INPUTS -o "$part"
fi
echo "part $R of $N: $part"

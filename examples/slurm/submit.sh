#!/bin/bash
# Submits a pipeline as an N-task array plus the job that combines the parts
# (afterok: it runs only when every task succeeded).
#   N=64 INPUTS='corpus/*.jsonl.zst' TOKENIZER=neox/tokenizer.json OUT=work examples/slurm/submit.sh text
#   N=64 INPUTS='genomes/*.fa.gz' OUT=work examples/slurm/submit.sh dna
#   N=64 MODEL=mamba-130m OUT=work examples/slurm/submit.sh score
#   N=64 M=14 INPUTS='corpus/*.jsonl' OUT=work examples/slurm/submit.sh dedup
#     (MinHash dedup: signatures as an N-task array, buckets as an M-task array,
#     one cluster job, the filter as an N-task array; each after the one before)
# Resources: CPUS per task (default: 4, 8 for score, but never more than the
# smallest node has, from sinfo), GRES (default: gpu:1 for score when the
# cluster has GPU nodes, else none; GRES=none asks for no GRES).
# Extra sbatch options: SBATCH_OPTS (e.g. --partition=cpu --time=4:00:00).
# WAIT=1: wait for the final job (sbatch --wait) and return its status.
# To resume after failed or killed tasks, run the same command again.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pipeline=${1:?usage: submit.sh text|dna|score|dedup}
N=${N:-64}
export SLUICE=${SLUICE:-sluice} OUT=${OUT:-work}
case $pipeline in
  text) task=text.sh; final=shard.sh ;;
  dna) task=dna.sh; final=shard.sh ;;
  score) task=score.sh; final=filter.sh ;;
  dedup) task=dedup.sh; final=dedup.sh ;;
  *) echo "submit.sh: unknown pipeline '$pipeline' (text|dna|score|dedup)" >&2; exit 2 ;;
esac
# CPUs: what the pipeline wants, capped at the smallest node (a request no
# node can meet pends forever, reason PartitionConfig)
want=4
[ "$pipeline" = score ] && want=8
least=$(sinfo -h -o '%c' 2> /dev/null | tr -d '+' | sort -n | head -n 1)
[[ "$least" =~ ^[0-9]+$ ]] && [ "$least" -lt "$want" ] && want=$least
CPUS=${CPUS:-$want}
# GRES: a GPU for scoring where the cluster has GPU nodes; nothing otherwise
if [ -z "${GRES:-}" ]; then
  GRES=none
  [ "$pipeline" = score ] && sinfo -h -o '%G' 2> /dev/null | grep -q 'gpu' && GRES=gpu:1
fi
res=(--cpus-per-task="$CPUS")
[ "$GRES" = none ] || res+=(--gres="$GRES")
mkdir -p "$OUT/logs"
wait=()
[ -n "${WAIT:-}" ] && wait=(--wait)
if [ "$pipeline" = dedup ]; then
  M=${M:-$N}
  # shellcheck disable=SC2086
  sub() { # sub STEP DEPENDENCY SBATCH-ARGS...: the job id
    local step=$1 dep=$2 id; shift 2
    id=$(STEP=$step sbatch --parsable --export=ALL "${res[@]}" ${SBATCH_OPTS:-} ${dep:+--dependency=afterok:$dep --kill-on-invalid-dep=yes} \
      --job-name="sluice-dedup-$step" "$@" "$here/dedup.sh")
    echo "${id%%;*}"
  }
  s=$(sub signatures "" --array=0-$((N - 1)) --output="$OUT/logs/%x-%A_%a.log")
  b=$(sub buckets "$s" --array=0-$((M - 1)) --output="$OUT/logs/%x-%A_%a.log")
  c=$(sub cluster "$b" --output="$OUT/logs/%x-%j.log")
  fid=$(sub filter "$c" --array=0-$((N - 1)) --output="$OUT/logs/%x-%A_%a.log" "${wait[@]}")
  echo "submitted dedup: signatures $s ($N tasks), buckets $b ($M tasks), cluster $c, filter $fid ($N tasks)"
  if [ -n "${WAIT:-}" ]; then
    # every task of the filter array, as scontrol lists them
    state=$(scontrol show job "$fid" 2> /dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | sort -u | tr '\n' ' ')
    if [ "$state" != "COMPLETED " ]; then
      echo "submit.sh: the dedup filter (job $fid) ended ${state:-?}: an earlier step failed" >&2
      exit 1
    fi
  fi
  exit 0
fi
# shellcheck disable=SC2086
jid=$(sbatch --parsable --export=ALL "${res[@]}" ${SBATCH_OPTS:-} --array=0-$((N - 1)) \
  --output="$OUT/logs/%x-%A_%a.log" "$here/$task")
jid=${jid%%;*}
echo "submitted $task as array job $jid ($N tasks, ${res[*]})"
# shellcheck disable=SC2086
fid=$(sbatch --parsable --export=ALL --cpus-per-task="$CPUS" ${SBATCH_OPTS:-} --dependency=afterok:"$jid" --kill-on-invalid-dep=yes \
  --output="$OUT/logs/%x-%j.log" "${wait[@]}" "$here/$final")
fid=${fid%%;*}
echo "submitted $final as job $fid (after $jid)"
if [ -n "${WAIT:-}" ]; then
  # sbatch --wait also returns 0 for a job cancelled because a task failed
  state=$(scontrol show job "$fid" 2> /dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
  [ "$state" = COMPLETED ] || { echo "submit.sh: $final (job $fid) ended $state: some tasks of $jid failed" >&2; exit 1; }
fi

#!/usr/bin/env bash
# tiktoken-family benchmark: sluice tokenize bpe with tiktoken rank files and
# Mistral's tekken JSON against tiktoken itself (encode_ordinary_batch), on
# the same mixed corpus as bench/bpe.sh (bpe_corpus.py), 1 thread and all
# threads; ids are compared. Rank files: OpenAI's r50k_base.tiktoken rebuilt
# from GPT-2's vocab.json + merges.txt (tests/data/bpe/gpt2) under the gpt2
# and o200k patterns; tekken_240911.json when mistral-common is installed.
# Env: SLUICE_BIN, TIKTOKEN_BENCH_MB (default 32), TIKTOKEN_BENCH_RUNS (runs
# per time, the median kept; default 3), TIKTOKEN_BENCH_PYTHON (a
# Python with tiktoken [and mistral-common]; default /work/tok10-venv if
# present, else python3; without tiktoken the peer is skipped).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
sluice=${SLUICE_BIN:-$root/build/sluice}
py=${TIKTOKEN_BENCH_PYTHON:-}
if [ -z "$py" ]; then
  if [ -x /work/tok10-venv/bin/python ]; then py=/work/tok10-venv/bin/python; else py=python3; fi
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-tiktoken-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$here/bpe_corpus.py" "$tmp/corpus.jsonl" "${TIKTOKEN_BENCH_MB:-32}"
"$py" "$here/tiktoken_bench.py" "$sluice" "$tmp/corpus.jsonl" "$tmp"

#!/usr/bin/env bash
# Language identification per core: sluice classify with lid.176.ftz
# (tests/data/classify) against the fasttext package's predict and
# datatrove's LanguageFilter, from the same JSON Lines (bench/bpe_corpus.py:
# text already on the machine, 1-16 KB documents), one thread each; prints
# MB/s per core and the ratios, and how often the labels agree.
# Env: SLUICE_BIN (default ./build/sluice), CLASSIFY_BENCH_MB (default 8),
# CLASSIFY_BENCH_PYTHON (a Python with fasttext and, optionally, datatrove;
# default the venv /work/venv-h33 if present, else python3; missing peers are
# skipped), CLASSIFY_BENCH_RUNS (default 3).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
sluice=${SLUICE_BIN:-$root/build/sluice}
py=${CLASSIFY_BENCH_PYTHON:-}
if [ -z "$py" ]; then
  if [ -x /work/venv-h33/bin/python ]; then py=/work/venv-h33/bin/python; else py=python3; fi
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-classify-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$here/bpe_corpus.py" "$tmp/corpus.jsonl" "${CLASSIFY_BENCH_MB:-8}"
"$py" "$here/classify_bench.py" "$sluice" "$root/tests/data/classify/lid.176.ftz" "$tmp/corpus.jsonl"

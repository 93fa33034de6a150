#!/usr/bin/env bash
# BPE tokenizer benchmark: sluice tokenize bpe vs Hugging Face tokenizers (and
# tiktoken for GPT-2) on the same >= 50 MB of mixed text (Python sources,
# /usr/share/doc text, multilingual test documents), 1 thread and all threads.
# Also times the pathological case (1 MB of one character) for sluice.
# Env: SLUICE_BIN (default ./build/sluice), BPE_BENCH_MB (default 64),
# BPE_BENCH_PYTHON (a Python with tokenizers/tiktoken; default the venv
# /work/venv-bpe if present, else python3; peers missing there are skipped).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
sluice=${SLUICE_BIN:-$root/build/sluice}
py=${BPE_BENCH_PYTHON:-}
if [ -z "$py" ]; then
  if [ -x /work/venv-bpe/bin/python ]; then py=/work/venv-bpe/bin/python; else py=python3; fi
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bpe-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$here/bpe_corpus.py" "$tmp/corpus.jsonl" "${BPE_BENCH_MB:-64}"
"$py" "$here/bpe_bench.py" "$sluice" "$tmp/corpus.jsonl"
# pathological input: one 1 MB document of a single character (one pre-token)
python3 -c "import json; print(json.dumps({'id':'run','text':'a'*1000000}))" > "$tmp/run.jsonl"
for t in "$root/tests/data/bpe/neox-tokenizer.json" "$root/tests/data/bpe/gpt2"; do
  TIMEFORMAT="sluice 1 MB of 'a' ($(basename "$t")): %R s"
  time "$sluice" tokenize bpe -q -@ 1 -t "$t" "$tmp/run.jsonl" -o "$tmp/run.tok"
done

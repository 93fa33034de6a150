#!/usr/bin/env bash
# Tokenizer load time per family: sluice (CPU seconds of a run on one short
# document, start and exit included) beside the reference library's load
# (sentencepiece for .model files, HF tokenizers for tokenizer.json,
# tiktoken for rank files; in-process CPU seconds), median of 3 runs each.
# The large vocabularies: XLM-R's 250k-piece Unigram as .model and as
# tokenizer.json (tests/data/xlmr), Whisper's multilingual.tiktoken
# (tests/data/tiktoken); then Mistral-7B's SentencePiece BPE, GPT-NeoX's
# byte-level BPE and bge-small's WordPiece. The bound is linear time: XLM-R
# loads in well under a second (the double array once took ~225 s).
# Env: SLUICE_BIN (default ./build/sluice), LOAD_BENCH_PYTHON (a Python with
# sentencepiece, tokenizers and tiktoken; default the venv /work/tok10-venv
# if present, else python3; missing peers are skipped).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
sluice=${SLUICE_BIN:-$root/build/sluice}
py=${LOAD_BENCH_PYTHON:-}
if [ -z "$py" ]; then
  if [ -x /work/tok10-venv/bin/python ]; then py=/work/tok10-venv/bin/python; else py=python3; fi
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-load-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
xz -dc "$root/tests/data/xlmr/xlmr.model.xz" > "$tmp/xlmr.model"
xz -dc "$root/tests/data/xlmr/xlmr.json.xz" > "$tmp/xlmr.json"
xz -dc "$root/tests/data/tiktoken/multilingual.tiktoken.xz" > "$tmp/multilingual.tiktoken"
"$py" "$here/load_bench.py" "$sluice" "$tmp" "$root/tests/data"

#!/usr/bin/env bash
# SentencePiece and other tokenizer.json families: sluice tokenize text on
# .model files (Mistral-7B v0.1's BPE, a Unigram model with an NFKC
# charsmap, tests/data/spm, and XLM-R's 250k-piece Unigram model,
# tests/data/xlmr) vs the `sentencepiece` library's encode, and on
# tokenizer.json files (that Unigram model converted, Mistral-7B v0.1's
# SentencePiece-style BPE, bge-small's WordPiece) vs Hugging Face
# `tokenizers`, on the same corpus as
# bench/bpe.sh (text already on the machine), 1 thread and 2 threads; then
# 1 MB without spaces (linear time). Ids are compared as well as timed.
# Env: SLUICE_BIN (default ./build/sluice), SPM_BENCH_MB (default 16),
# SPM_BENCH_PYTHON (a Python with sentencepiece and tokenizers; default the
# venv /work/tok10-venv if present, else python3; missing peers are skipped).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
sluice=${SLUICE_BIN:-$root/build/sluice}
py=${SPM_BENCH_PYTHON:-}
if [ -z "$py" ]; then
  if [ -x /work/tok10-venv/bin/python ]; then py=/work/tok10-venv/bin/python; else py=python3; fi
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-spm-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
# what the second core can give at all: the tokenizers' thread scaling is
# bounded by how this machine runs two memory-bound threads
cc -O2 -fopenmp -o "$tmp/mem_scaling" "$here/mem_scaling.c" && "$tmp/mem_scaling"
python3 "$here/bpe_corpus.py" "$tmp/corpus.jsonl" "${SPM_BENCH_MB:-16}"
"$py" "$here/spm_bench.py" "$sluice" "$tmp/corpus.jsonl"

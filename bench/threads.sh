#!/usr/bin/env bash
# Thread scaling of `sluice tokenize text` (issue 10: -@ 2 at least 1.8x the
# throughput of -@ 1 on a 2-core machine), one tokenizer file per family:
# SentencePiece .model BPE (Mistral-7B v0.1) and Unigram, the Unigram
# tokenizer.json, Mistral's SentencePiece-style BPE tokenizer.json, bge's
# WordPiece and GPT-NeoX's byte-level BPE, on the bpe.sh corpus (text
# already on the machine). See threads_bench.py for what is printed; the
# machine's own 2-thread scaling (mem_scaling.c) is printed before and after,
# as a shared host gives a second core's worth only in its quiet spells.
# Env: SLUICE_BIN (default ./build/sluice), THREADS_BENCH_MB (default 64),
# THREADS_BENCH_ROUNDS (default 5).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
sluice=${SLUICE_BIN:-$root/build/sluice}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-threads-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
cc -O2 -fopenmp -o "$tmp/mem_scaling" "$here/mem_scaling.c"
"$tmp/mem_scaling"
python3 "$here/bpe_corpus.py" "$tmp/corpus.jsonl" "${THREADS_BENCH_MB:-64}"
python3 "$here/threads_bench.py" "$sluice" "$tmp/corpus.jsonl" "${THREADS_BENCH_ROUNDS:-5}"
"$tmp/mem_scaling"

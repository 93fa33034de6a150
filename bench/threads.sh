#!/usr/bin/env bash
# Thread scaling of `sluice tokenize text` (the goal: -@ 2 at least 1.8x the
# throughput of -@ 1 on a 2-core machine), one tokenizer file per family:
# SentencePiece .model BPE (Mistral-7B v0.1) and Unigram, the Unigram
# tokenizer.json, Mistral's SentencePiece-style BPE tokenizer.json, bge's
# WordPiece and GPT-NeoX's byte-level BPE, on the bpe.sh corpus (text
# already on the machine). See threads_bench.py for what is printed; the
# machine's own 2-thread scaling (mem_scaling.c) is printed before and after,
# as a shared host gives a second core's worth only in its quiet spells.
# 256 MB by default: every run also pays a fixed, serial start and end
# (process start 4 ms and the OpenMP re-exec 3.5 ms, the tokenizer load
# 5-44 ms, the first read, teardown 4 ms), 3-9% of a -@ 2 run on 64 MB but a
# quarter of that on 256 MB, where what is measured is how the work scales.
# Env: SLUICE_BIN (default ./build/sluice), THREADS_BENCH_MB (default 256),
# THREADS_BENCH_ROUNDS (default 3).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
sluice=${SLUICE_BIN:-$root/build/sluice}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-threads-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
cc -O2 -fopenmp -o "$tmp/mem_scaling" "$here/mem_scaling.c"
"$tmp/mem_scaling"
python3 "$here/bpe_corpus.py" "$tmp/corpus.jsonl" "${THREADS_BENCH_MB:-256}"
python3 "$here/threads_bench.py" "$sluice" "$tmp/corpus.jsonl" "${THREADS_BENCH_ROUNDS:-3}"
"$tmp/mem_scaling"

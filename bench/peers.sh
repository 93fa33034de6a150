#!/usr/bin/env bash
# The fast exact tokenizers of PyPI side by side with sluice tokenize text, one
# thread each, on the same 50 MB mixed corpus as bench/bpe.sh (bpe_corpus.py),
# for GPT-2, GPT-NeoX-20B, cl100k_base and o200k_base: CPU seconds (medians of
# interleaved rounds), the peer/sluice ratio (of the medians, and the median of each
# round's own ratio, which the host's drift moves less) and whether the ids are equal.
# sluice is timed as a whole process, a peer's encode call alone, in a process of
# its own after it has encoded another PEERS_BENCH_MB of the same kinds of text
# (so that its caches and memo are warm, but not with the corpus's own pieces:
# peers that memoize every piece, like gigatok, encoding the corpus a second
# time measure only their lookups; that figure is the "repeat" column).
# sluice is also timed the peers' way ("steady"): the warm-up text then the
# corpus in one run, less a run of the warm-up alone.
# The peers live in a virtual environment of their own, made at the first run
# with pip (PyPI): fastokens, gigatok, tiktoken, riptoken, bpe-openai (which
# also ships the cl100k_base and o200k_base rank files), quicktok-v1,
# toktok-rs and rs-bpe (cl100k and o200k only: their encodings are built in)
# and tokenizers. A venv made before a peer was added lacks it: the peer is
# then left out of the table (pip install it there).
# Env: SLUICE_BIN, PEERS_BENCH_VENV (default /work/venv-bench-peers, or
# $HOME/.cache/sluice-bench-peers where /work is absent), PEERS_BENCH_MB
# (default 50), PEERS_BENCH_ROUNDS (default 5), PEERS_BENCH_ONLY
# (gpt2,neox,cl100k,o200k), PEERS_BENCH_HF=1 (HF tokenizers too, one round).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
sluice=${SLUICE_BIN:-$root/build/sluice}
venv=${PEERS_BENCH_VENV:-}
if [ -z "$venv" ]; then
  if [ -d /work ]; then venv=/work/venv-bench-peers; else venv=$HOME/.cache/sluice-bench-peers; fi
fi
if [ ! -x "$venv/bin/python" ]; then
  echo "making the peers' virtual environment $venv (pip, PyPI)"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check fastokens gigatok tiktoken riptoken bpe-openai quicktok-v1 toktok-rs rs-bpe tokenizers numpy ||
    echo "some peers did not install; they are skipped"
fi
if ! "$venv/bin/python" -c 'import numpy' 2>/dev/null; then
  echo "bench/peers.sh skipped: no numpy in $venv (pip could not install the peers)"
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-peers-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
isa=$(grep -m1 -o -w -E 'avx512f|avx2' /proc/cpuinfo | sort -r | head -1 || true)
echo "machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p') (family $(lscpu | sed -n 's/^CPU family: *//p') model $(lscpu | sed -n 's/^Model: *//p'), ${isa:-no AVX2}), $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
# the corpus, and as much text again from further on for the peers' warm-up
# (the corpus is the first PEERS_BENCH_MB of bpe_corpus.py's text, as before)
mb=${PEERS_BENCH_MB:-50}
python3 "$here/bpe_corpus.py" "$tmp/both.jsonl" "$(python3 -c "print(2 * float('$mb'))")"
python3 - "$tmp/both.jsonl" "$mb" "$tmp/corpus.jsonl" "$tmp/warm.jsonl" <<'PY'
import json, sys
src, mb, corpus, warm = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
size = 0
with open(src, encoding="utf-8") as f, open(corpus, "w", encoding="utf-8") as c, open(warm, "w", encoding="utf-8") as w:
    for line in f:
        (c if size < mb * 1e6 else w).write(line)
        size += len(json.loads(line)["text"].encode("utf-8"))
PY
rm "$tmp/both.jsonl"
"$venv/bin/python" "$here/peers_bench.py" "$sluice" "$tmp/corpus.jsonl" "$tmp" "$tmp/warm.jsonl"

#!/usr/bin/env bash
# Every stage at its default thread count against -@ 1 (defaults_bench.py):
# a default must not be slower than one thread. On the bpe.sh corpus (text
# already on the machine) and a random FASTA.
# Env: SLUICE_BIN (default ./build/sluice), DEFAULTS_BENCH_MB (default 64),
# DEFAULTS_BENCH_ROUNDS (default 5).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
sluice=${SLUICE_BIN:-$root/build/sluice}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-defaults-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
mb=${DEFAULTS_BENCH_MB:-64}
python3 "$here/bpe_corpus.py" "$tmp/docs.jsonl" "$mb"
python3 - "$tmp/seq.fa" "$mb" <<'PY'
import random, sys
r = random.Random(1)
with open(sys.argv[1], "w") as f:
    for i in range(int(sys.argv[2])):
        f.write(">seq%d\n" % i)
        s = "".join(r.choice("ACGT") for _ in range(1000000))
        f.writelines(s[j:j + 60] + "\n" for j in range(0, len(s), 60))
PY
python3 "$here/defaults_bench.py" "$sluice" "$tmp/docs.jsonl" "$tmp/seq.fa" "${DEFAULTS_BENCH_ROUNDS:-5}"

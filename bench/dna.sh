#!/usr/bin/env bash
# DNA tokenization throughput: `sluice tokenize dna` on >= 500 MB of generated
# FASTA (60-column lines, mixed case, N runs), single thread and all threads,
# side by side with a Python peer reading the same file (bench/dna_peer.py:
# bytes.translate per record, the fastest plain-Python way; and HyenaDNA's own
# per-character dict lookup on a prefix). Prints MB/s and ratios. The output
# goes to /dev/null; the input is read from the page cache after a warm-up.
# Env: SLUICE_BIN (binary), DNA_BENCH_MB (default 520), DNA_BENCH_DIR (default /tmp).
set -euo pipefail
S=${SLUICE_BIN:-$(dirname "$0")/../sluice}
HERE=$(cd "$(dirname "$0")" && pwd)
MB=${DNA_BENCH_MB:-520}
DIR=$(mktemp -d "${DNA_BENCH_DIR:-/tmp}/sluice-dna-bench.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
F=$DIR/genome.fa

# 10 MB record made from random bytes (deterministic), then MB/10 records.
python3 - "$DIR/chunk" <<'PY'
import random, sys
rng = random.Random(6)
alpha = b'ACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTacgtN'
seq = bytearray(rng.choice(alpha) for _ in range(1 << 20)) * 10
with open(sys.argv[1], 'wb') as f:
    for i in range(0, len(seq), 60):
        f.write(seq[i:i + 60] + b'\n')
PY
for i in $(seq 1 $((MB / 10))); do printf '>chr%d synthetic\n' "$i"; cat "$DIR/chunk"; done > "$F"
rm "$DIR/chunk"
bytes=$(stat -c %s "$F")
cat "$F" > /dev/null  # warm the page cache

now() { date +%s.%N; }
rate() { python3 -c "import sys; print('%.1f' % (float(sys.argv[1]) / 1e6 / float(sys.argv[2])))" "$1" "$2"; }
run_sluice() {
  local t0 t1
  t0=$(now); "$S" tokenize dna -q -@ "$1" "$F" > /dev/null; t1=$(now)
  python3 -c "print(float('$t1') - float('$t0'))"
}
threads=$(nproc)
s1=$(run_sluice 1)
sN=$(run_sluice "$threads")
read -r pb pt < <(python3 "$HERE/dna_peer.py" translate "$F")
read -r hb ht < <(python3 "$HERE/dna_peer.py" hyena "$F" 20)
r1=$(rate "$bytes" "$s1"); rN=$(rate "$bytes" "$sN"); rp=$(rate "$pb" "$pt"); rh=$(rate "$hb" "$ht")
echo "dna bench: $(date -u +%Y-%m-%dT%H:%MZ) $(nproc) cpus, $(lscpu | sed -n 's/^Model name: *//p'), load $(cut -d' ' -f1 /proc/loadavg)"
echo "input: $((bytes / 1000000)) MB FASTA, $((MB / 10)) records"
printf '%-44s %8s MB/s\n' "sluice tokenize dna, 1 thread" "$r1" "sluice tokenize dna, $threads threads" "$rN" \
  "python bytes.translate per record (peer)" "$rp" "python HyenaDNA per-char tokenizer (20 MB)" "$rh"
python3 -c "import sys; a,b,c,d=map(float,sys.argv[1:]); print('ratio sluice(1 thread)/translate peer: %.2fx; sluice(all)/translate peer: %.2fx; sluice(all)/HyenaDNA loop: %.0fx' % (a/c, b/c, b/d))" "$r1" "$rN" "$rp" "$rh"

#!/usr/bin/env bash
# DNA tokenization throughput: `sluice tokenize dna` on >= 500 MB of generated
# FASTA (60-column lines, mixed case, N runs), single thread and all threads,
# side by side with a Python peer reading the same file (bench/dna_peer.py:
# bytes.translate per record, the fastest plain-Python way; and HyenaDNA's own
# per-character dict lookup on a prefix). Prints MB/s and ratios. sluice runs
# three times per thread count and the median is shown. The output
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

# wall and CPU (user + sys) seconds of a command, with bash's `time`
timed() { local TIMEFORMAT='%R %U %S'; { time "$@" > /dev/null 2>&1; } 2>&1 | tail -1; }
mbps() { python3 -c "import sys; print('%.1f' % (float(sys.argv[1]) / 1e6 / float(sys.argv[2])))" "$1" "$2"; }
# the run with the median wall time of three (sluice runs take well under a
# second, so one run is at the mercy of other processes on a shared machine)
median3() { { timed "$@"; timed "$@"; timed "$@"; } | sort -n | sed -n 2p; }
threads=$(nproc)
read -r w1 u1 y1 < <(median3 "$S" tokenize dna -q -@ 1 "$F")
read -r wN uN yN < <(median3 "$S" tokenize dna -q -@ "$threads" "$F")
read -r wp up yp < <(timed python3 "$HERE/dna_peer.py" translate "$F")
hb=$((20 << 20))
read -r wh uh yh < <(timed python3 "$HERE/dna_peer.py" hyena "$F" 20)
row() { # name bytes wall user sys
  printf '| %-44s | %6.2f | %8s | %6.2f | %8s |\n' "$1" "$3" "$(mbps "$2" "$3")" \
    "$(python3 -c "print($4 + $5)")" "$(mbps "$2" "$(python3 -c "print($4 + $5)")")"
}
echo "dna bench: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cpus ($(lscpu | sed -n 's/^Model name: *//p')), load $(cut -d' ' -f1 /proc/loadavg)"
echo "input: $((bytes / 1000000)) MB FASTA, $((MB / 10)) records of 10 MB, output to /dev/null"
echo "| contender | wall s | MB/s wall | CPU s | MB/s per CPU-s |"
echo "|---|---|---|---|---|"
row "sluice tokenize dna, 1 thread" "$bytes" "$w1" "$u1" "$y1"
row "sluice tokenize dna, $threads threads" "$bytes" "$wN" "$uN" "$yN"
row "python bytes.translate per record (peer)" "$bytes" "$wp" "$up" "$yp"
row "python HyenaDNA per-char loop (first 20 MiB)" "$hb" "$wh" "$uh" "$yh"
python3 - "$bytes" "$w1" "$wN" "$wp" "$hb" "$wh" "$u1" "$y1" "$up" "$yp" <<'PY'
import sys
b, w1, wN, wp, hb, wh, u1, y1, up, yp = map(float, sys.argv[1:])
print('ratios (wall): sluice 1 thread / translate peer %.2fx, sluice all threads / translate peer %.2fx, '
      'sluice all threads / HyenaDNA loop %.0fx; (CPU) sluice 1 thread / translate peer %.2fx'
      % (wp / w1, wp / wN, (b / wN) / (hb / wh), (up + yp) / (u1 + y1)))
print('goal: >= 1000 MB/s on all cores: %.0f MB/s, %s' % (b / 1e6 / wN, 'met' if b / 1e6 / wN >= 1000 else 'NOT met'))
PY

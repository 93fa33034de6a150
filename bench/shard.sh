#!/usr/bin/env bash
# Benchmark: pack + shard >= 1 GB of token data (uint16, random document
# lengths 1..4095) into rows of 2048, side by side with a numpy packer doing
# the same work in memory (bench/shard_peer.py). Prints GB/s of token data and
# peak memory (/usr/bin/time -v). Env: SHARD_BENCH_GB (default 1.0),
# SHARD_BENCH_DIR (default: under /dev/shm when it has room, so the run is
# memory to memory; needs ~5x the size free). Wall times on a shared machine
# are noisy, so CPU seconds (user+sys) are printed too and the ratio uses them.
set -euo pipefail
S=${SLUICE_BIN:-$(dirname "$0")/../sluice}
HERE=$(cd "$(dirname "$0")" && pwd)
GB=${SHARD_BENCH_GB:-1.0}
PY=""
for p in /usr/bin/python3 python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || { echo "bench/shard.sh: python3 with numpy is required (scripts/install-deps)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench/shard.sh: /usr/bin/time is required (apt-get install time)" >&2; exit 1; }
if [ -z "${SHARD_BENCH_DIR:-}" ]; then
  base=${TMPDIR:-/tmp}
  need=$(awk -v g="$GB" 'BEGIN { printf "%d", g * 5 * 1024 * 1024 }') # KiB
  if [ -d /dev/shm ] && [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -gt "$need" ]; then base=/dev/shm; fi
  W=$(mktemp -d "$base/sluice-bench-shard.XXXXXX")
else
  W=$SHARD_BENCH_DIR
fi
trap 'rm -rf "$W"' EXIT
echo "shard bench: $(date -u +%FT%TZ), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
"$PY" "$HERE/shard_peer.py" gen "$W/data" "$GB"
"$S" import megatron --eos 0 --vocab-size 50277 -q "$W/data" -o "$W/in.tok"
bytes=$(stat -c %s "$W/data.bin")
echo "work directory: $W"
echo "input: $bytes bytes of uint16 tokens ($(( bytes / 2 )) tokens), $(stat -c %s "$W/in.tok") bytes as a token stream"

measure() { # label, command...: wall and CPU (user+sys) seconds, peak RSS
  local label=$1; shift
  sync; /usr/bin/time -v -o "$W/time" "$@" >/dev/null
  awk -F': ' -v l="$label" -v b="$bytes" '
    /Elapsed \(wall clock\)/ { n = split($2, t, ":"); w = 0; for (i = 1; i <= n; i++) w = w * 60 + t[i] }
    /User time/ { u = $2 } /System time/ { s = $2 } /Maximum resident set size/ { r = $2 / 1024 }
    END { c = u + s; if (c <= 0) c = 0.01
          printf "%-40s wall %6.2f s %5.2f GB/s | cpu %6.2f s %5.2f GB/s | peak %5d MiB\n", l, w, b / w / 1e9, c, b / c / 1e9, r
          print c > "/dev/stderr" }' "$W/time" 2>"$W/last"
}
measure "sluice shard (pack inside)" "$S" shard -q --seq-len 2048 "$W/in.tok" -o "$W/s1"
t1=$(cat "$W/last")
measure "sluice pack | sluice shard" sh -c "'$S' pack -q --seq-len 2048 '$W/in.tok' | '$S' shard -q -o '$W/s2'"
rm -rf "$W/s2"
measure "sluice shard --shuffle (256 MiB window)" "$S" shard -q --seq-len 2048 --shuffle --seed 1 "$W/in.tok" -o "$W/s3"
rm -rf "$W/s3"
measure "sluice export megatron" "$S" export megatron -q "$W/in.tok" -o "$W/m"
rm -f "$W/m.bin" "$W/m.idx"
measure "numpy peer (bench/shard_peer.py)" "$PY" "$HERE/shard_peer.py" pack "$W/data" 2048 "$W/peer"
t2=$(cat "$W/last")
# the peer's rows must equal ours (same EOS placement, same padding)
cmp "$W/s1/train-00000.tokens" "$W/peer/rows.u16" || { echo "bench/shard.sh: numpy rows differ from sluice's" >&2; exit 1; }
awk -v a="$t1" -v b="$t2" 'BEGIN { printf "ratio (CPU seconds, numpy peer / sluice shard): sluice is %.2fx the speed\n", b / a }'

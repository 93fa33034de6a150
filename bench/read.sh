#!/usr/bin/env bash
# Benchmark: `sluice read` against peers on the same JSON Lines input, plain
# and zstd-compressed: `jq -c .` (parse and re-print every object, like read
# does) and a CPython json.loads/json.dumps line loop. Prints MB/s (input
# megabytes per second of wall time, best of $RUNS) and each time as a
# multiple of `sluice read -@ 1` (the peers are single-threaded; the zstd
# peers are a two-process pipeline). On a loaded machine OpenMP threads spin
# while waiting; OMP_WAIT_POLICY=passive avoids that.
#
# The input is ~${MB:-200} MB of documents drawn from the real English text in
# examples/data/text (a seeded random walk over its words, so it compresses
# like text, ~3x, instead of like a repeated file); generated once per run.
set -euo pipefail
SLUICE=${SLUICE_BIN:-$(dirname "$0")/../sluice}
SRC=$(cd "$(dirname "$0")/.." && pwd)
MB=${MB:-200}
RUNS=${RUNS:-3}
W=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench-read.XXXXXX")
trap 'rm -rf "$W"' EXIT

# words of the real texts (quotes, backslashes and control characters
# dropped: the generator writes JSON directly)
cat "$SRC"/examples/data/text/*.txt | tr -s ' \t\n' '\n' | tr -d '"\\\000-\011\013-\037' | grep . > "$W/words"
awk -v target=$((MB * 1000000)) 'NR == FNR { w[n++] = $0; next }
  END {
    srand(20261122); size = 0; d = 0
    while (size < target) {
      len = 200 + int(rand() * 600); s = ""
      for (i = 0; i < len; i++) s = s w[int(rand() * n)] (rand() < 0.02 ? "\\n" : " ")
      line = sprintf("{\"id\":\"bench-%d\",\"text\":\"%s\",\"meta\":{\"source\":\"bench\",\"n\":%d}}", d, s, d)
      print line; size += length(line) + 1; d++
    }
  }' "$W/words" /dev/null > "$W/docs.jsonl"
zstd -q -T0 "$W/docs.jsonl" -o "$W/docs.jsonl.zst"
bytes=$(stat -c %s "$W/docs.jsonl")
echo "input: $(wc -l < "$W/docs.jsonl") documents, $((bytes / 1000000)) MB JSONL, $(( $(stat -c %s "$W/docs.jsonl.zst") / 1000000 )) MB zstd"
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%Y-%m-%dT%H:%MZ)"

# best of RUNS runs of a shell command (output to /dev/null): prints
# "wall_seconds cpu_seconds" (CPU = user + sys of the whole pipeline), from
# the run with the best wall time
best() {
  local b="" bc="" r out
  for ((r = 0; r < RUNS; r++)); do
    /usr/bin/time -o "$W/time" -f '%e %U %S' bash -o pipefail -c "$1" > /dev/null ||
      { echo "bench: failed: $1" >&2; exit 1; }
    read -r e u s < "$W/time"
    if [ -z "$b" ] || [ "$(echo "$e < $b" | bc -l)" = 1 ]; then b=$e; bc=$(echo "$u + $s" | bc -l); fi
  done
  echo "$b $bc"
}
PY='import json,sys
w=sys.stdout.write
for line in sys.stdin:
    if line.strip(): w(json.dumps(json.loads(line),ensure_ascii=False,separators=(",",":"))+"\n")'
echo "$PY" > "$W/peer.py"

# all three must print the same documents (same key order, compact JSON)
"$SLUICE" read "$W/docs.jsonl" | md5sum > "$W/sum.sluice"
python3 "$W/peer.py" < "$W/docs.jsonl" | md5sum | cmp -s - "$W/sum.sluice" || { echo "bench: python output differs" >&2; exit 1; }
if command -v jq > /dev/null; then
  jq -c . "$W/docs.jsonl" | md5sum | cmp -s - "$W/sum.sluice" || { echo "bench: jq output differs" >&2; exit 1; }
fi
echo "outputs: sluice, jq and python print identical documents"

row() { # row NAME "WALL CPU" "BASE_WALL BASE_CPU"
  set -- "$1" $2 $3
  printf '  %-36s %7.2f s %7.1f MB/s %6.2fx | CPU %6.2f s %7.1f MB/s %6.2fx\n' "$1" "$2" \
    "$(echo "$bytes / 1000000 / $2" | bc -l)" "$(echo "$2 / $4" | bc -l)" "$3" \
    "$(echo "$bytes / 1000000 / $3" | bc -l)" "$(echo "$3 / $5" | bc -l)"
}
echo "  (wall time, MB/s of input, time as a multiple of sluice -@ 1 | the same in CPU seconds)"
echo "  load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for kind in plain zstd; do
  f="$W/docs.jsonl"; cat_="cat"
  if [ $kind = zstd ]; then f="$W/docs.jsonl.zst"; cat_="zstd -dc"; fi
  echo "== $kind"
  s=$(best "'$SLUICE' read -@ 1 '$f'")
  row "sluice read -@ 1" "$s" "$s"
  row "sluice read (all $(nproc) cores)" "$(best "'$SLUICE' read '$f'")" "$s"
  row "  same, OMP_WAIT_POLICY=passive" "$(best "OMP_WAIT_POLICY=passive '$SLUICE' read '$f'")" "$s"
  if command -v jq > /dev/null; then row "$cat_ | jq -c ." "$(best "$cat_ '$f' | jq -c .")" "$s"
  else echo "  jq not installed: skipped"; fi
  row "$cat_ | python3 json loads/dumps" "$(best "$cat_ '$f' | python3 '$W/peer.py'")" "$s"
done
echo "  load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/usr/bin/env bash
# Benchmark: reading a FineWeb-shaped Parquet file (text, id, dump, url, date,
# file_path, language, language_score, token_count; ~${MB:-200} MB of text drawn
# from examples/data/text, SNAPPY and ZSTD in row groups of 20,000 rows, and ZSTD in
# row groups of 1,000 rows as FineWeb's files have) on one thread, side by side:
#   sluice read -@ 1 FILE            every column decoded, JSON Lines written
#   pyarrow read_table(columns=["text"])   the text column into Arrow memory only
#   pyarrow + to_pylist + json.dumps  the same JSON Lines as sluice, in Python
#   datatrove ParquetReader           (when installed) documents from the file
# then the same rows as Arrow IPC files (record batches of 1000 rows, plain and
# ZSTD): sluice read -@ 1 vs pyarrow + to_pylist + json.dumps; and
# `sluice read x.parquet | sluice tokenize text` against `sluice tokenize text` on the
# same documents as JSON Lines (MB/s of text, all threads, the GPT-NeoX tokenizer
# of tests/data/bpe). Needs a
# python with pyarrow: PY=/path/to/venv/bin/python (default python3); skipped
# without it. Prints MB/s of text and each peer's time as a multiple of sluice's.
set -euo pipefail
SLUICE=${SLUICE_BIN:-$(dirname "$0")/../sluice}
SRC=$(cd "$(dirname "$0")/.." && pwd)
PY=${PY:-python3}
MB=${MB:-200}
RUNS=${RUNS:-3}
if ! "$PY" -c 'import pyarrow' 2>/dev/null; then
  echo "parquet bench: skipped ($PY has no pyarrow; PY=/path/to/python with pyarrow runs it)"
  exit 0
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench-parquet.XXXXXX")
trap 'rm -rf "$W"' EXIT
cat "$SRC"/examples/data/text/*.txt | tr -s ' \t\n' '\n' | grep . > "$W/words"
"$PY" "$SRC/bench/parquet_peer.py" gen "$W/words" "$W/fw" "$MB"
text_mb=$("$PY" -c "import pyarrow.parquet as pq, pyarrow.compute as pc; t = pq.read_table('$W/fw.zstd.parquet', columns=['text']); print(pc.sum(pc.binary_length(t['text'])).as_py() / 1e6)")
echo "input: FineWeb-shaped, $text_mb MB of text; snappy $(( $(stat -c %s "$W/fw.snappy.parquet") / 1000000 )) MB, zstd $(( $(stat -c %s "$W/fw.zstd.parquet") / 1000000 )) MB"
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1 /proc/loadavg)"

# best of RUNS: "wall cpu" seconds
best() {
  local b="" c=""
  for _ in $(seq "$RUNS"); do
    local TIMEFORMAT='%R %U %S'
    local t
    t=$( { time bash -c "$1" > /dev/null 2>&1; } 2>&1 )
    read -r w u s <<< "$t"
    if [ -z "$b" ] || awk -v a="$w" -v b="$b" 'BEGIN { exit !(a < b) }'; then b=$w; c=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }'); fi
  done
  echo "$b $c"
}
row() { awk -v n="$1" -v w="$2" -v c="$3" -v mb="$text_mb" -v ref="$4" 'BEGIN { printf "  %-34s %7.2f s  %7.1f MB/s  (CPU %.2f s)  %s\n", n, w, mb / w, c, (ref > 0 ? sprintf("%.2fx sluice", w / ref) : "") }'; }
export OMP_WAIT_POLICY=passive
for codec in snappy zstd zstd-rg1k; do
  f="$W/fw.$codec.parquet"
  echo "$codec:"
  read -r sw sc <<< "$(best "'$SLUICE' read -q -@ 1 '$f'")"
  row "sluice read -@ 1" "$sw" "$sc" 0
  read -r pw pc <<< "$(best "'$PY' '$SRC/bench/parquet_peer.py' pyarrow '$f'")"
  row "pyarrow read_table(text), 1 thread" "$pw" "$pc" "$sw"
  read -r jw jc <<< "$(RUNS=1 best "'$PY' '$SRC/bench/parquet_peer.py' pyarrow-json '$f'")"
  row "pyarrow + to_pylist + json.dumps" "$jw" "$jc" "$sw"
  if "$PY" -c 'import datatrove' 2>/dev/null; then
    read -r dw dc <<< "$(RUNS=1 best "'$PY' '$SRC/bench/parquet_peer.py' datatrove '$f'")"
    row "datatrove ParquetReader" "$dw" "$dc" "$sw"
  else
    echo "  datatrove ParquetReader            not installed"
  fi
  read -r tw tc <<< "$(best "'$SLUICE' read -q '$f'")"
  row "sluice read (all threads)" "$tw" "$tc" "$sw"
done
echo "arrow ipc (record batches of 1000 rows):"
for codec in none zstd; do
  f="$W/fw.$codec.arrow"
  read -r sw sc <<< "$(best "'$SLUICE' read -q -@ 1 '$f'")"
  row "sluice read -@ 1 ($codec)" "$sw" "$sc" 0
  read -r jw jc <<< "$(RUNS=1 best "'$PY' '$SRC/bench/parquet_peer.py' ipc-json '$f'")"
  row "pyarrow + to_pylist + json.dumps" "$jw" "$jc" "$sw"
done
tok="$SRC/tests/data/bpe/neox-tokenizer.json"
if [ -f "$tok" ]; then
  echo "tokenize text (GPT-NeoX, all threads), MB/s of text:"
  "$SLUICE" read -q "$W/fw.zstd.parquet" > "$W/fw.jsonl"
  read -r jw jc <<< "$(best "'$SLUICE' tokenize text -q -t '$tok' -o /dev/null '$W/fw.jsonl'")"
  row "tokenize text fw.jsonl" "$jw" "$jc" 0
  read -r pw pc <<< "$(best "'$SLUICE' read -q '$W/fw.zstd.parquet' | '$SLUICE' tokenize text -q -t '$tok' -o /dev/null")"
  row "read fw.parquet | tokenize text" "$pw" "$pc" "$jw"
  read -r aw ac <<< "$(best "'$SLUICE' tokenize text -q -t '$tok' -o /dev/null '$W/fw.zstd.parquet'")"
  row "tokenize text fw.parquet" "$aw" "$ac" "$jw"
fi

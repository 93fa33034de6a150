#!/usr/bin/env bash
# MinHash dedup benchmark: `sluice dedup minhash` beside datatrove
# 0.10.1, rensa and datasketch on one synthetic corpus (bench/dedup_corpus.py:
# English-like text with 10% planted near-duplicates), 5-grams, 14 x 8
# permutations, seed 1.
#   1. signatures per core: CPU seconds (user + sys) of one thread for
#      the same SIG_MB of JSON Lines, and the ratios: sluice --step signatures
#      -@ 1 against datatrove's MinhashDedupSignature (1 task), rensa and
#      datasketch (word 5-grams of text.lower().split(): less work than the
#      simplify_text + spaCy tokenizer that sluice and datatrove run)
#   2. the whole dedup of MB of JSON Lines: wall time and peak RSS of sluice
#      (one process, -@ 2) beside datatrove's four stages (2 workers)
#   3. peak RSS of sluice at 1x and 4x RSS_MB of corpus with the same
#      --mem-budget RSS_MEM (the 1x corpus must already spill: its bucket
#      records, 1,120 bytes per document, beyond half the budget)
#   BIG_MB (unset: skipped): sluice alone on a corpus that large (1000: 1 GB)
# Env: SLUICE_BIN, DEDUP_BENCH_PYTHON (a Python with datatrove[processing]==0.10.1,
# spacy, orjson, rensa, datasketch; default the venv /work/venv-dedup when it
# exists; peers missing there are skipped), SIG_MB (default 8), MB (default 32),
# MEM (default 64M), RSS_MB (default 32), RSS_MEM (default 16M), THREADS (default 2).
# datatrove signs about 0.3 MB/s per core here: MB=32 takes it ~3 minutes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sluice=${SLUICE_BIN:-$here/../build/sluice}
py=${DEDUP_BENCH_PYTHON:-}
if [ -z "$py" ] && [ -x /work/venv-dedup/bin/python ]; then py=/work/venv-dedup/bin/python; fi
SIG_MB=${SIG_MB:-8} MB=${MB:-32} MEM=${MEM:-64M} TH=${THREADS:-2}
RSS_MB=${RSS_MB:-32} RSS_MEM=${RSS_MEM:-16M}
W=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench-dedup.XXXXXX")
trap 'rm -rf "$W"' EXIT
echo "machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
"$sluice" --version 2> /dev/null | head -n 1 || true
have() { [ -n "$py" ] && "$py" -c "import $1" 2> /dev/null; }
# run NAME CMD...: wall, CPU and peak RSS of the command into $W/NAME.t ("wall cpu rss_kb")
run() {
  local name=$1; shift
  # CPU to the microsecond (cputime.py); peak RSS from GNU time, which forks the command
  python3 "$here/cputime.py" "$W/$name.time" /usr/bin/time -f "%M" -o "$W/$name.rss" "$@" > "$W/$name.out" 2> "$W/$name.err" ||
    { echo "$name failed: $(tail -n 3 "$W/$name.err")" >&2; return 1; }
  awk -v rss="$(tail -n 1 "$W/$name.rss")" '{ printf "%s %.3f %d\n", $1, $2 + $3, rss }' "$W/$name.time" > "$W/$name.t"
}
cpu() { cut -d' ' -f2 "$W/$1.t"; }
wall() { cut -d' ' -f1 "$W/$1.t"; }
rss() { echo $(($(cut -d' ' -f3 "$W/$1.t") / 1024)); }

python3 "$here/dedup_corpus.py" "$W/sig.jsonl" "$SIG_MB" 7
echo
echo "== 1. signatures, one core, $SIG_MB MB (CPU s; ratio = peer CPU / sluice CPU)"
run sluice-sig "$sluice" dedup minhash -q -@ 1 --step signatures --signatures "$W/s" "$W/sig.jsonl"
s=$(cpu sluice-sig)
printf '  %-34s %7.3f s  %6.1f MB/s\n' "sluice --step signatures -@ 1" "$s" "$(echo "$SIG_MB / $s" | bc -l)"
peer() { # peer LABEL NAME ARGS...
  local label=$1 name=$2; shift 2
  if run "$name" "$py" "$here/dedup_peer.py" "$@"; then
    local c; c=$(cpu "$name")
    printf '  %-34s %7.3f s  %6.1f MB/s   sluice %.1fx faster\n' "$label" "$c" "$(echo "$SIG_MB / $c" | bc -l)" \
      "$(echo "$c / $s" | bc -l)"
  fi
}
if have datatrove; then peer "datatrove MinhashDedupSignature" dt-sig sign-datatrove "$W/sig.jsonl" "$W/dt-sig"
else echo "  datatrove: not installed in ${py:-(no venv)}; skipped"; fi
if have rensa; then peer "rensa RMinHash (whitespace words)" rensa sign-rensa "$W/sig.jsonl"
else echo "  rensa: not installed; skipped"; fi
if have datasketch; then peer "datasketch MinHash (whitespace)" datasketch sign-datasketch "$W/sig.jsonl"
else echo "  datasketch: not installed; skipped"; fi

echo
python3 "$here/dedup_corpus.py" "$W/c1.jsonl" "$MB" 1
echo "== 2. the whole dedup of $MB MB (wall s, peak RSS MB)"
run sluice-all "$sluice" dedup minhash -q -@ "$TH" --mem-budget "$MEM" "$W/c1.jsonl" -o "$W/kept.jsonl" --summary "$W/sum.json"
printf '  %-44s %7.1f s  %5d MB  (removed %s)\n' "sluice dedup minhash -@ $TH --mem-budget $MEM" "$(wall sluice-all)" \
  "$(rss sluice-all)" "$(sed 's/.*"removed":\([0-9]*\).*/\1/' "$W/sum.json")"
if have datatrove; then
  tot=0 mx=0
  for st in signature buckets cluster filter; do
    run "dt-$st" "$py" "$here/dedup_peer.py" dedup-datatrove "$W/c1.jsonl" "$W/dt" "$TH" "$st" || break
    printf '  %-44s %7.1f s  %5d MB\n' "datatrove $st ($TH workers)" "$(wall "dt-$st")" "$(rss "dt-$st")"
    tot=$(echo "$tot + $(wall "dt-$st")" | bc -l)
    [ "$(rss "dt-$st")" -gt "$mx" ] && mx=$(rss "dt-$st")
  done
  printf '  %-44s %7.1f s  %5d MB  (sluice %.1fx faster)\n' "datatrove, the four stages" "$tot" "$mx" \
    "$(echo "$tot / $(wall sluice-all)" | bc -l)"
fi

echo
if [ -n "${BIG_MB:-}" ]; then
  python3 "$here/dedup_corpus.py" "$W/big.jsonl" "$BIG_MB" 9
  run sluice-big "$sluice" dedup minhash -q -@ "$TH" --mem-budget "$MEM" "$W/big.jsonl" -o "$W/big-kept.jsonl" \
    --summary "$W/big.json"
  printf '  %-44s %7.1f s  %5d MB  (%s)\n' "sluice, $BIG_MB MB, -@ $TH --mem-budget $MEM" "$(wall sluice-big)" \
    "$(rss sluice-big)" "$(sed 's/.*"docs":\([0-9]*\).*"removed":\([0-9]*\).*/\1 documents, \2 removed/' "$W/big.json")"
  rm -f "$W/big.jsonl" "$W/big-kept.jsonl"
fi

echo
echo "== 3. peak RSS at 1x and 4x the corpus, --mem-budget $RSS_MEM"
for k in 1 2 3 4; do python3 "$here/dedup_corpus.py" "$W/r$k.jsonl" "$RSS_MB" "$((10 + k))"; done
run rss-1x "$sluice" dedup minhash -q -@ "$TH" --mem-budget "$RSS_MEM" "$W/r1.jsonl" -o /dev/null
run rss-4x "$sluice" dedup minhash -q -@ "$TH" --mem-budget "$RSS_MEM" "$W/r1.jsonl" "$W/r2.jsonl" "$W/r3.jsonl" \
  "$W/r4.jsonl" -o /dev/null
printf '  1x (%d MB): %5d MB in %.1f s   4x (%d MB): %5d MB in %.1f s   4x/1x %.2f\n' "$RSS_MB" "$(rss rss-1x)" \
  "$(wall rss-1x)" $((4 * RSS_MB)) "$(rss rss-4x)" "$(wall rss-4x)" "$(echo "$(rss rss-4x) / $(rss rss-1x)" | bc -l)"

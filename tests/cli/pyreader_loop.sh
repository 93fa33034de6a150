# python/sluice_data.py as a training-loop reader (ShardIterable / ShardDataset):
# rank x DataLoader-worker splitting, per-epoch order under a seed, O(1) resume,
# val without warmup, documents.idx / doc_meta, and memory that does not grow
# like a dict of ids. Runs python/test_sluice_loader.py on shards written by
# ./build/sluice. Needs python3 with numpy (scripts/install-deps).
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
PY=""
for p in /usr/bin/python3 python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || fail "python3 with numpy is required (apt-get install python3-numpy, see scripts/install-deps)"

# 400 documents of 0..149 ids (some empty), with a label and a source field
awk 'BEGIN { for (i = 0; i < 400; i++) { n = (i * 37) % 150; printf "{\"id\":\"doc-%d\",\"label\":\"c%d\",\"source\":\"s%d\",\"ids\":[", i, i % 7, i % 3;
      for (k = 0; k < n; k++) printf "%s%d", (k ? "," : ""), 2 + (i * 13 + k * 7) % 9000; print "]}" } }' >"$T/docs.jsonl"
$S tokenize ids --vocab-size 9100 --eos 1 "$T/docs.jsonl" -o "$T/in.tok"
# doubling warmup: batches 96/48/24 rows of 16/32/64 tokens (multiples of 1, 2, 3 and 8)
$S shard -q --warmup double:16..64,epochs=1,batch=24 --val-fraction 0.2 --shuffle --seed 3 --shuffle-window 7 \
  --max-file-bytes 3k "$T/in.tok" -o "$T/w"
# linear warmup: lengths that do not divide 64, an open-ended last stage, batches 10/8/6/5/4/4
$S shard -q --warmup linear:24..64,steps=40,tps=256 --max-file-bytes 1k "$T/in.tok" -o "$T/lin"
$S shard -q --seq-len 32 --layout recurrent --batch 6 "$T/in.tok" -o "$T/r"
# 200000 tiny documents (memory test)
awk 'BEGIN { for (i = 0; i < 200000; i++) printf "{\"id\":\"tiny-%07d\",\"ids\":[%d]}\n", i, 2 + i % 5000 }' >"$T/tiny.jsonl"
$S tokenize ids --vocab-size 9100 --eos 1 "$T/tiny.jsonl" -o "$T/tiny.tok"
$S shard -q --seq-len 64 "$T/tiny.tok" -o "$T/tiny"
rm -f "$T/tiny.jsonl" "$T/tiny.tok"

SLUICE_TEST_DOCS="$T/docs.jsonl" SLUICE_TEST_W="$T/w" SLUICE_TEST_LIN="$T/lin" SLUICE_TEST_R="$T/r" \
  SLUICE_TEST_TINY="$T/tiny" SLUICE_TEST_TMP="$T" \
  "$PY" "$SRC/python/test_sluice_loader.py" 2>&1 | tee "$T/py.log"
grep -q "^OK" "$T/py.log" || fail "python tests did not pass"

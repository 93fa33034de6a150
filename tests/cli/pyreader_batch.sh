# The global batch is chosen when training, not when sharding:
# runs python/test_sluice_batch.py on shards written by the binary.
# Needs python3 with numpy (scripts/install-deps).
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
PY=""
for p in /usr/bin/python3 python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || fail "python3 with numpy is required (apt-get install python3-numpy, see scripts/install-deps)"
awk 'BEGIN { for (i = 0; i < 400; i++) { n = (i * 37) % 150; printf "{\"id\":\"doc-%d\",\"ids\":[", i;
      for (k = 0; k < n; k++) printf "%s%d", (k ? "," : ""), 2 + (i * 13 + k * 7) % 9000; print "]}" } }' >"$T/docs.jsonl"
$S tokenize ids --vocab-size 9100 --eos 1 "$T/docs.jsonl" -o "$T/in.tok"
$S shard -q --seq-len 64 --max-file-bytes 3k "$T/in.tok" -o "$T/s"
$S shard -q --warmup double:16..64,epochs=1,batch=24 --max-file-bytes 3k "$T/in.tok" -o "$T/w"
$S shard -q --seq-len 32 --layout recurrent --batch 6 "$T/in.tok" -o "$T/r"
SLUICE_TEST_S="$T/s" SLUICE_TEST_W="$T/w" SLUICE_TEST_R="$T/r" "$PY" "$SRC/python/test_sluice_batch.py" 2>&1 | tee "$T/py.log"
grep -q "^OK" "$T/py.log" || fail "python tests did not pass"

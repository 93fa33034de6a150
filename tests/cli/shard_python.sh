# python/sluice_data.py (numpy) on shards written by sluice: runs
# python/test_sluice_data.py. Needs python3 with numpy (Debian: python3-numpy,
# installed by scripts/install-deps); fails loudly when missing.
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
PY=""
for p in /usr/bin/python3 python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || fail "python3 with numpy is required (apt-get install python3-numpy, see scripts/install-deps)"

awk 'BEGIN { for (i = 0; i < 200; i++) { n = (i * 53) % 150; printf "{\"id\":\"doc-%d\",\"ids\":[", i;
      for (k = 0; k < n; k++) printf "%s%d", (k ? "," : ""), 2 + (i * 17 + k * 11) % 9000; print "]}" } }' >"$T/docs.jsonl"
$S tokenize ids --vocab-size 9100 --eos 1 "$T/docs.jsonl" -o "$T/in.tok"
$S shard --warmup double:16..64,epochs=1,batch=2 --val-fraction 0.2 --shuffle --seed 3 --shuffle-window 9 \
  --max-file-bytes 2k "$T/in.tok" -o "$T/w"
$S shard --seq-len 32 --layout recurrent --batch 3 "$T/in.tok" -o "$T/r"
$S export megatron "$T/in.tok" -o "$T/m"
SLUICE_TEST_DOCS="$T/docs.jsonl" SLUICE_TEST_W="$T/w" SLUICE_TEST_R="$T/r" SLUICE_TEST_M="$T/m" \
  "$PY" "$SRC/python/test_sluice_data.py" 2>&1 | tee "$T/py.log"
grep -q "^OK" "$T/py.log" || fail "python tests did not pass"

# python/sluice_data.py under a real torch DataLoader (worker processes, fork
# and spawn, resume, the training loop of docs/shards.md 6.2): runs
# python/test_sluice_torch.py. Needs Debian's python3-torch (scripts/install-deps);
# fails loudly when missing.
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
PY=""
for p in /usr/bin/python3 python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy, torch' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || fail "python3 with numpy and torch is required (apt-get install python3-torch, see scripts/install-deps)"

awk 'BEGIN { for (i = 0; i < 400; i++) { n = (i * 37) % 150; printf "{\"id\":\"doc-%d\",\"ids\":[", i;
      for (k = 0; k < n; k++) printf "%s%d", (k ? "," : ""), 2 + (i * 13 + k * 7) % 9000; print "]}" } }' >"$T/docs.jsonl"
$S tokenize ids --vocab-size 9100 --eos 1 "$T/docs.jsonl" -o "$T/in.tok"
$S shard -q --warmup double:16..64,epochs=1,batch=24 --val-fraction 0.2 --shuffle --seed 3 --shuffle-window 7 \
  --max-file-bytes 3k "$T/in.tok" -o "$T/w"
SLUICE_TEST_W="$T/w" "$PY" "$SRC/python/test_sluice_torch.py" 2>&1 | tee "$T/py.log"
grep -q "^OK" "$T/py.log" || fail "python tests did not pass"

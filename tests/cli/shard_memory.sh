# Memory-token slots of the recurrent layout (--memory-tokens K --memory-id ID
# [--memory-write]; docs/shards.md section 2.2): python/test_sluice_memory.py
# checks every row's memory positions through the Python reader and the
# documents against the input and against `sluice cat` of the directories;
# here: stats figures, the packed-stream path, byte identity of directories
# without memory, and the errors.
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
PY=""
for p in /usr/bin/python3 python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || fail "python3 with numpy is required (apt-get install python3-numpy, see scripts/install-deps)"

awk 'BEGIN { for (i = 0; i < 120; i++) { n = (i * 53) % 170; printf "{\"id\":\"doc-%d\",\"ids\":[", i;
      for (k = 0; k < n; k++) printf "%s%d", (k ? "," : ""), 2 + (i * 17 + k * 11) % 9000; print "]}" } }' >"$T/docs.jsonl"
$S tokenize ids --vocab-size 9100 --eos 1 "$T/docs.jsonl" -o "$T/in.tok"
$S shard --seq-len 32 --layout recurrent --batch 3 "$T/in.tok" -o "$T/plain"
$S shard --seq-len 32 --layout recurrent --batch 3 --memory-tokens 4 --memory-id 9099 "$T/in.tok" -o "$T/m4"
$S shard --seq-len 40 --layout recurrent --batch 2 --memory-tokens 3 --memory-id 9098 --memory-write \
  "$T/in.tok" -o "$T/m3w"
# the same through a packed stream
$S pack --seq-len 40 --layout recurrent --batch 2 --memory-tokens 3 --memory-id 9098 --memory-write \
  "$T/in.tok" -o "$T/m3w.tok"
$S shard "$T/m3w.tok" -o "$T/m3wp"
cmp "$T/m3w/train-00000.tokens" "$T/m3wp/train-00000.tokens" || fail "pack | shard differs from shard"
cmp "$T/m3w/train-00000.bounds" "$T/m3wp/train-00000.bounds" || fail "pack | shard bounds differ"
for d in plain m4 m3w; do $S cat "$T/$d" >"$T/$d.cat"; done
SLUICE_TEST_DOCS="$T/docs.jsonl" SLUICE_TEST_PLAIN="$T/plain" \
  SLUICE_TEST_MEM="$T/m4:4:9099:0 $T/m3w:3:9098:1 $T/m3wp:3:9098:1" \
  SLUICE_TEST_CAT="$T/plain=$T/plain.cat $T/m4=$T/m4.cat $T/m3w=$T/m3w.cat" \
  "$PY" "$SRC/python/test_sluice_memory.py" 2>&1 | tee "$T/py.log"
grep -q "^OK" "$T/py.log" || fail "python tests did not pass"

# stats: memory counted apart from padding; overhead = both
rows=$(jq .splits.train.rows "$T/m3w/manifest.json")
$S stats "$T/m3w" >"$T/st.json"
[ "$(jq .splits.train.memory_tokens "$T/st.json")" = $((rows * 6)) ] || fail "memory_tokens"
used=$(jq -s 'map(.ids | length) | add' "$T/m3w.cat")
[ "$(jq .splits.train.pad_tokens "$T/st.json")" = $((rows * 40 - used - rows * 6)) ] || fail "pad_tokens excludes memory"
jq -e '.splits.train.overhead_fraction == (.splits.train.memory_tokens + .splits.train.pad_tokens) / .splits.train.tokens' \
  "$T/st.json" >/dev/null || fail "overhead_fraction"
$S stats "$T/m3w.tok" >"$T/sp.json"
jq -e --argjson r "$rows" '.memory_tokens == $r * 6 and .memory == {"tokens":3,"id":9098,"write":true}' \
  "$T/sp.json" >/dev/null || fail "stats of the packed stream"
[ "$(jq .pad_tokens "$T/sp.json")" = "$(jq .splits.train.pad_tokens "$T/st.json")" ] || fail "packed pad_tokens"
# without memory options nothing changes: no "memory" keys, stats without memory fields
! grep -q memory "$T/plain/manifest.json" || fail "memory key in a directory without memory"
$S stats "$T/plain" | grep -q memory && fail "memory fields in stats without memory" || true

# errors: one line, exit 2 for usage, nothing written
expect_fail 2 "--memory-tokens .*applies to --layout recurrent" -- $S shard --seq-len 32 --memory-tokens 4 --memory-id 9 "$T/in.tok" -o "$T/x"
expect_fail 2 "--memory-tokens 4 needs --memory-id" -- $S shard --seq-len 32 --layout recurrent --batch 2 --memory-tokens 4 "$T/in.tok" -o "$T/x"
expect_fail 2 "--memory-write needs --memory-tokens" -- $S pack --seq-len 32 --layout recurrent --batch 2 --memory-write "$T/in.tok"
expect_fail 1 "--memory-tokens 16 \(read and write\) leaves no room for data in rows of --seq-len 32" -- \
  $S shard --seq-len 32 --layout recurrent --batch 2 --memory-tokens 16 --memory-id 9 --memory-write "$T/in.tok" -o "$T/x"
expect_fail 1 "--memory-id 9100: not below the vocab size 9100" -- \
  $S shard --seq-len 32 --layout recurrent --batch 2 --memory-tokens 2 --memory-id 9100 "$T/in.tok" -o "$T/x"
no_file "$T/x"
expect_fail nz "already packed" -- $S shard --memory-tokens 2 --memory-id 9 --layout recurrent --batch 2 "$T/m3w.tok" -o "$T/x"
no_file "$T/x"
# a manifest whose memory is malformed is refused by both readers
cp -r "$T/m4" "$T/bad"
jq '.memory.tokens = 40' "$T/m4/manifest.json" >"$T/bad/manifest.json"
expect_fail 1 '"memory" must be' -- $S cat "$T/bad"
# merge keeps the memory slots, and refuses to mix directories with and without them
$S merge --concat-rows "$T/m4" "$T/m4" -o "$T/mm"
jq -e '.memory == {"tokens":4,"id":9099,"write":false} and .splits.train.memory_tokens == 2 * '"$(jq .splits.train.memory_tokens "$T/m4/manifest.json")" \
  "$T/mm/manifest.json" >/dev/null || fail "merge lost the memory slots"
[ "$(jq .splits.train.pad_tokens "$T/mm/manifest.json")" = $((2 * $(jq .splits.train.pad_tokens "$T/m4/manifest.json"))) ] || fail "merge pad_tokens"
# ... and by default merges as one stream: shard of the stream given twice
$S merge -q "$T/m4" "$T/m4" -o "$T/ms"
$S shard -q --seq-len 32 --layout recurrent --batch 3 --memory-tokens 4 --memory-id 9099 "$T/in.tok" "$T/in.tok" -o "$T/m4x2"
diff -r "$T/m4x2" "$T/ms" || fail "merge of memory-slot directories differs from shard of the stream twice"
expect_fail 1 "memory slots must be equal" -- $S merge "$T/m4" "$T/plain" -o "$T/x"
no_file "$T/x"

# sluice pack / shard / cat / stats end to end (docs/shards.md).
. "$SRC/tests/cli/lib.sh"
S=$SLUICE

# 300 documents with lengths 0..299 in a fixed mixed order (incl. empty and 1-token ones)
awk 'BEGIN { for (i = 0; i < 300; i++) { n = (i * 37) % 300; printf "{\"id\":\"d%d\",\"ids\":[", i;
      for (k = 0; k < n; k++) printf "%s%d", (k ? "," : ""), 2 + (i * 131 + k * 7) % 997; print "]}" } }' >"$T/docs.jsonl"
$S tokenize ids --vocab-size 1000 --eos 1 "$T/docs.jsonl" -o "$T/in.tok"

# pack + shard of the packed stream == shard of the documents
$S pack --seq-len 64 "$T/in.tok" -o "$T/packed.tok"
$S shard "$T/packed.tok" -o "$T/p"
$S shard --seq-len 64 "$T/in.tok" -o "$T/d"
for f in train-00000.tokens train-00000.bounds documents.jsonl; do cmp "$T/p/$f" "$T/d/$f" || fail "pack|shard differs from shard in $f"; done
# 300 docs of 0..299 tokens plus one EOS each = 45150 tokens -> 706 rows of 64
grep -q '"rows": 706,' "$T/d/manifest.json" || fail "expected 706 rows: $(cat "$T/d/manifest.json")"
[ "$(stat -c %s "$T/d/train-00000.tokens")" = $((706 * 64 * 2)) ] || fail "token file size"

# cat DIR: one line per piece; pieces with doc_offset 0 are the 300 document starts
$S cat "$T/d" >"$T/cat.jsonl"
pieces=$(grep -o '"pieces": [0-9]*' "$T/d/manifest.json" | head -1 | grep -o '[0-9]*$')
[ "$(wc -l <"$T/cat.jsonl")" = "$pieces" ] || fail "cat prints $(wc -l <"$T/cat.jsonl") pieces, manifest says $pieces"
[ "$(grep -c '"doc_offset":0,' "$T/cat.jsonl")" = 300 ] || fail "expected 300 document starts"
# the first document (d0, empty) is just the EOS; d1 has 37 tokens + EOS
head -1 "$T/cat.jsonl" | grep -q '^{"id":"d0","ids":\[1\],"stage":0,"row":0,"offset":0,"doc":0,"doc_offset":0' || fail "first piece: $(head -1 "$T/cat.jsonl")"

# warmup: every schedule stores the same tokens in the same order (only the view changes)
$S shard --warmup double:16..64,epochs=2,batch=2 "$T/in.tok" -o "$T/w1"
$S shard --warmup linear:16..64,steps=10 "$T/in.tok" -o "$T/w2"
$S shard --seq-len 64 --warmup stages:32x4@3steps,64x2@5steps "$T/in.tok" -o "$T/w3"
for w in w1 w2 w3; do
  for f in train-00000.tokens train-00000.bounds documents.jsonl; do cmp "$T/d/$f" "$T/$w/$f" || fail "$w: $f differs"; done
done
# tokens per step constant across the doubling stages (batch halves as length doubles)
$S stats "$T/w1" >"$T/w1.stats"
[ "$(grep -c '"tokens_per_step": 128,' "$T/w1.stats")" = 3 ] || fail "tokens per step: $(cat "$T/w1.stats")"
grep -q '"seq_len": 16, "batch": 8, "steps": 706,' "$T/w1.stats" || fail "stage 0: $(grep seq_len "$T/w1.stats")"
# stage views of one epoch cover the same tokens: cat --stage is not reachable through `sluice cat`
# option parsing yet, so compare the piece counts stats derives for each view
grep -q '"seq_len": 16, .*"epoch_rows": 2824,' "$T/w1.stats" || fail "16-token view rows"
# lengths must be multiples of 8, and --seq-len must agree with the warmup
expect_fail 1 'multiple of 8' -- $S shard --warmup double:12..48 "$T/in.tok" -o "$T/bad"
no_file "$T/bad"
expect_fail 1 'differs from the longest' -- $S shard --seq-len 32 --warmup double:16..64 "$T/in.tok" -o "$T/bad"
no_file "$T/bad"

# same seed -> byte-identical directory; another seed -> another order
$S shard --seq-len 64 --shuffle --seed 5 --shuffle-window 7 --max-file-bytes 4k "$T/in.tok" -o "$T/s1"
$S shard --seq-len 64 --shuffle --seed 5 --shuffle-window 7 --max-file-bytes 4k "$T/in.tok" -o "$T/s2"
$S shard --seq-len 64 --shuffle --seed 6 --shuffle-window 7 --max-file-bytes 4k "$T/in.tok" -o "$T/s3"
diff -r "$T/s1" "$T/s2" >/dev/null || fail "same seed gave different directories"
cmp -s "$T/s1/train-00000.tokens" "$T/s3/train-00000.tokens" && fail "another seed gave the same order"
# 4 KiB files of 128-byte rows: 32 rows each, 706 rows -> 23 files
[ "$(ls "$T/s1" | grep -c '^train-.*\.tokens$')" = 23 ] || fail "expected 23 token files: $(ls "$T/s1")"
# shuffled rows are a permutation of the unshuffled ones
cat "$T"/s1/train-*.tokens | od -An -v -tu2 -w128 | sort >"$T/rows.s"
od -An -v -tu2 -w128 "$T/d/train-00000.tokens" | sort >"$T/rows.d"
cmp "$T/rows.s" "$T/rows.d" || fail "shuffled rows are not a permutation"

# validation split by id hash: independent of order
$S shard --seq-len 64 --val-fraction 0.25 "$T/in.tok" -o "$T/v1"
tac "$T/docs.jsonl" | $S tokenize ids --vocab-size 1000 --eos 1 | $S shard --seq-len 64 --val-fraction 0.25 -o "$T/v2"
grep '"split":"val"' "$T/v1/documents.jsonl" | grep -o '"id":"[^"]*"' | sort >"$T/val1"
grep '"split":"val"' "$T/v2/documents.jsonl" | grep -o '"id":"[^"]*"' | sort >"$T/val2"
cmp "$T/val1" "$T/val2" || fail "val split depends on order"
n=$(wc -l <"$T/val1"); [ "$n" -gt 40 ] && [ "$n" -lt 110 ] || fail "val fraction 0.25 gave $n of 300"
[ -s "$T/v1/val-00000.tokens" ] || fail "no val token file"

# recurrent layout: whole steps of B rows; merge --concat-rows of two shards concatenates them
$S shard --seq-len 64 --layout recurrent --batch 3 "$T/in.tok" -o "$T/r"
rows=$(grep -o '"rows": [0-9]*' "$T/r/manifest.json" | head -1 | grep -o '[0-9]*$')
[ $((rows % 3)) = 0 ] || fail "recurrent rows $rows not a multiple of 3"
$S merge --concat-rows "$T/d" "$T/d" -o "$T/m"
grep -q '"rows": 1412,' "$T/m/manifest.json" || fail "merged rows"
cat "$T/d/train-00000.tokens" "$T/d/train-00000.tokens" | cmp - "$T/m/train-00000.tokens" || fail "merged tokens"
[ "$(grep -c . "$T/m/documents.jsonl")" = 600 ] || fail "merged documents"
# the default merge is one stream: the same directory as shard of the stream given twice
$S merge "$T/d" "$T/d" -o "$T/m1" 2>"$T/m1.err"
$S shard -q --seq-len 64 "$T/in.tok" "$T/in.tok" -o "$T/d2"
diff -r "$T/d2" "$T/m1" || fail "merge of d twice differs from shard of the stream twice"
grep -q "warning: 300 document(s) repeat an earlier id; the first is document 300" "$T/m1.err" || fail "merge dup ids: $(cat "$T/m1.err")"
$S merge "$T/r" "$T/r" -o "$T/rm"
$S shard -q --seq-len 64 --layout recurrent --batch 3 "$T/in.tok" "$T/in.tok" -o "$T/r2"
diff -r "$T/r2" "$T/rm" || fail "recurrent: merge differs from shard of the stream twice"

# bad input: clear one-line errors, non-zero exit, nothing left behind
expect_fail 2 'multiple of 8' -- $S shard --seq-len 0 "$T/in.tok" -o "$T/bad"
expect_fail 2 'multiple of 8' -- $S pack --seq-len 12 "$T/in.tok" -o "$T/bad.tok"
no_file "$T/bad"; no_file "$T/bad.tok"
head -c 5000 "$T/in.tok" >"$T/trunc.tok"
expect_fail 1 'trunc.tok' -- $S shard --seq-len 64 "$T/trunc.tok" -o "$T/bad"
no_file "$T/bad"; ! ls -d "$T"/bad.tmp.* >/dev/null 2>&1 || fail "temporary directory left behind"
expect_fail 1 'trunc.tok' -- $S pack --seq-len 64 "$T/trunc.tok" -o "$T/bad.tok"
no_file "$T/bad.tok"
expect_fail 1 'already exists' -- $S shard --seq-len 64 "$T/in.tok" -o "$T/d"
$S shard --seq-len 64 --force "$T/in.tok" -o "$T/d"
expect_fail 1 'already packed' -- $S pack --seq-len 64 "$T/packed.tok" -o "$T/bad.tok"
expect_fail 1 'packing options do not apply' -- $S shard --seq-len 64 "$T/packed.tok" -o "$T/bad"
expect_fail 2 'recurrent' -- $S shard --seq-len 64 --layout recurrent --batch 2 --shuffle "$T/in.tok" -o "$T/bad"
expect_fail 1 'not below the vocab size' -- $S shard --seq-len 64 --pad 5000 "$T/in.tok" -o "$T/bad"
printf '{"id":"x","ids":[69999]}\n' | $S tokenize ids --vocab-size 70000 --eos 0 -o "$T/big.tok"
expect_fail 1 'does not fit --dtype uint16' -- $S shard --seq-len 8 --dtype uint16 "$T/big.tok" -o "$T/bad"
$S shard --seq-len 8 "$T/big.tok" -o "$T/big"
grep -q '"dtype": "uint32"' "$T/big/manifest.json" || fail "vocab 70000 should give uint32"
no_file "$T/bad"
# a corrupted shard file is found by its checksum
cp -r "$T/d" "$T/c"
printf '\377' | dd of="$T/c/train-00000.tokens" bs=1 seek=100 conv=notrunc 2>/dev/null
expect_fail 1 'train-00000.tokens: checksum mismatch' -- $S cat "$T/c"
expect_fail 1 'checksum mismatch' -- $S stats "$T/c"
expect_fail 1 'checksum mismatch' -- $S merge "$T/c" "$T/d" -o "$T/bad"
no_file "$T/bad"
cp "$T/d/train-00000.tokens" "$T/c/"
truncate -s 64 "$T/c/train-00000.bounds"
expect_fail 1 'train-00000.bounds: size 64 bytes' -- $S cat "$T/c"

# pack --warmup records the SPEC; shard of the packed stream resolves the same stages
$S pack --warmup double:16..64,epochs=2,batch=2 "$T/in.tok" -o "$T/pw.tok"
$S shard "$T/pw.tok" -o "$T/pw"
cmp "$T/pw/manifest.json" "$T/w1/manifest.json" || fail "pack --warmup | shard differs from shard --warmup"
# recurrent rows through a packed stream keep their order and continuation
$S pack --seq-len 64 --layout recurrent --batch 3 "$T/in.tok" -o "$T/pr.tok"
$S shard "$T/pr.tok" -o "$T/pr"
for f in train-00000.tokens train-00000.bounds; do cmp "$T/r/$f" "$T/pr/$f" || fail "recurrent via pack: $f"; done
# missing parent directories of -o are created (mkdir -p), and the result equals a flat one
$S shard --seq-len 64 "$T/in.tok" -o "$T/nested/a/b"
for f in train-00000.tokens train-00000.bounds; do cmp "$T/d/$f" "$T/nested/a/b/$f" || fail "nested -o: $f"; done

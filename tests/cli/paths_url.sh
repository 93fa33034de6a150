# Paths with a URL scheme: sluice reads and writes local
# paths only, so "s3://...", "gs://...", "hf://...", "http(s)://..." and any
# "scheme://" are refused in one line, as inputs and as outputs, before
# anything is read or written; never a local folder named "s3:".
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
cd "$T"
printf '{"id":"a","ids":[1,2,3]}\n' >d.jsonl
$S tokenize ids --vocab-size 10 --eos 0 d.jsonl -o c.tok

for url in s3://bucket/shards gs://b/p hf://datasets/x https://example.com/x.tok http://h/x x-y.z://h/r; do
  scheme=${url%%://*}
  expect_fail 1 "$url: a URL \($scheme://\).*local paths only" -- $S shard --seq-len 8 c.tok -o "$url"
  expect_fail 1 "$url: a URL" -- $S shard --seq-len 8 c.tok --output="$url"
  expect_fail 1 "$url: a URL" -- $S export megatron c.tok -o "$url"
  expect_fail 1 "$url: a URL" -- $S cat "$url"
  expect_fail 1 "$url: a URL" -- $S read "$url"
  expect_fail 1 "$url: a URL" -- $S shard --seq-len 8 "$url" -o local
  expect_fail 1 "$url: a URL" -- $S tokenize bpe -t "$url" d.jsonl
  [ "$(wc -l <"$T/err")" -eq 1 ] || fail "more than one line: $(cat "$T/err")"
done
# nothing was created: no "s3:" (or any other) folder, no output
[ -z "$(ls -A | grep -v '^d.jsonl$\|^c.tok$\|^out$\|^err$')" ] || fail "left behind: $(ls -A)"
# a local name with a colon but no "//" is a path like any other
$S shard --seq-len 8 c.tok -o 's3:local'
[ -f 's3:local/manifest.json' ] || fail "a plain name with a colon must still work"

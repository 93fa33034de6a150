# --skip-existing (docs/scale-out.md): an output that exists and
# verifies is left alone (same bytes, same mtime) with a line on stderr, and
# the input is not read; a truncated or corrupted one is made again; a shard
# directory whose checksums fail is replaced; a directory that is not a shard
# directory is never replaced.
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
B=$DATA/bpe
TOK=$B/neox-tokenizer.json
mtime() { stat -c %Y.%y "$1"; }

# token streams: tokenize bpe (also on a pipe: the input is not read), ids, dna
"$S" tokenize bpe -q -t "$TOK" "$B/corpus.jsonl" -o "$T/a.tok"
cp "$T/a.tok" "$T/a.ref"
touch -d '2001-01-01' "$T/a.tok"; m=$(mtime "$T/a.tok")
"$S" tokenize bpe --skip-existing -t "$TOK" "$B/corpus.jsonl" -o "$T/a.tok" 2> "$T/err"
grep -q 'a.tok exists and verifies; nothing to do' "$T/err" || fail "no skip message: $(cat "$T/err")"
[ "$(mtime "$T/a.tok")" = "$m" ] || fail "a verified output was rewritten"
# on a pipe: exits at once without reading standard input (a fifo that stays
# open and empty: reading it would block until the timeout)
mkfifo "$T/fifo"; exec 3<> "$T/fifo"
timeout 10 "$S" tokenize bpe --skip-existing -t "$TOK" -o "$T/a.tok" <&3 2> "$T/err" ||
  fail "skip with a pipe that never ends: $(cat "$T/err")"
exec 3>&-
# truncated at every few hundred bytes, or one byte flipped: made again, identical to the reference
size=$(stat -c %s "$T/a.ref")
for cut in 0 1 17 $((size / 3)) $((size - 9)) $((size - 1)); do
  head -c "$cut" "$T/a.ref" > "$T/a.tok"
  "$S" tokenize bpe --skip-existing -t "$TOK" "$B/corpus.jsonl" -o "$T/a.tok" 2> "$T/err"
  grep -q 'does not verify' "$T/err" || fail "truncated at $cut: no message that it is redone: $(cat "$T/err")"
  cmp "$T/a.tok" "$T/a.ref" || fail "truncated at $cut: not made again"
done
cp "$T/a.ref" "$T/a.tok"
printf '\377' | dd of="$T/a.tok" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
cmp -s "$T/a.tok" "$T/a.ref" && fail "fixture: the flip changed nothing"
"$S" tokenize bpe --skip-existing -t "$TOK" "$B/corpus.jsonl" -o "$T/a.tok" 2> "$T/err"
grep -q 'does not verify' "$T/err" || fail "a corrupted stream was kept: $(cat "$T/err")"
cmp "$T/a.tok" "$T/a.ref" || fail "corrupted output not made again"
expect_fail 2 'needs an output file' -- "$S" tokenize bpe --skip-existing -t "$TOK" "$B/corpus.jsonl"

for stage in "tokenize ids --vocab-size 1000" "tokenize dna" "dna species --window 64 --samples 9" "tokenize audio --pad-to 16000"; do
  case $stage in
    "tokenize ids"*) in=$T/ids.jsonl; echo '{"id":"a","ids":[1,2,3]}' > "$in" ;;
    "tokenize dna") in=$DATA/dna/lambda_virus.fa ;;
    "dna species"*) in=$DATA/dna/lambda_virus.fa ;;
    *) in=$DATA/audio/sc09_like_espeak ;;
  esac
  # shellcheck disable=SC2086
  "$S" $stage -q "$in" -o "$T/s.tok"
  cp "$T/s.tok" "$T/s.ref"; touch -d '2001-01-01' "$T/s.tok"; m=$(mtime "$T/s.tok")
  # shellcheck disable=SC2086
  "$S" $stage --skip-existing "$in" -o "$T/s.tok" 2> "$T/err"
  grep -q 'nothing to do' "$T/err" && [ "$(mtime "$T/s.tok")" = "$m" ] || fail "$stage: not skipped: $(cat "$T/err")"
  head -c 40 "$T/s.ref" > "$T/s.tok"
  # shellcheck disable=SC2086
  "$S" $stage -q --skip-existing "$in" -o "$T/s.tok" 2> /dev/null
  cmp "$T/s.tok" "$T/s.ref" || fail "$stage: truncated output not made again"
done

# read: JSON Lines; a last line without its newline is not whole
"$S" read "$B/corpus.jsonl" -o "$T/d.jsonl"
cp "$T/d.jsonl" "$T/d.ref"
"$S" read --skip-existing "$B/corpus.jsonl" -o "$T/d.jsonl" 2> "$T/err"
grep -q 'nothing to do' "$T/err" || fail "read: not skipped"
head -c -1 "$T/d.ref" > "$T/d.jsonl"
"$S" read --skip-existing "$B/corpus.jsonl" -o "$T/d.jsonl" 2> "$T/err"
grep -q 'does not verify' "$T/err" && cmp "$T/d.jsonl" "$T/d.ref" || fail "read: a cut line was kept"

# shard: manifest checksums
"$S" shard -q --seq-len 32 "$T/a.ref" -o "$T/sh"
cp -r "$T/sh" "$T/sh.ref"
"$S" shard --skip-existing --seq-len 32 "$T/a.ref" -o "$T/sh" 2> "$T/err"
grep -q 'sh exists and verifies; nothing to do' "$T/err" || fail "shard: not skipped: $(cat "$T/err")"
f=$(ls "$T/sh"/train-*.tokens | head -n 1)
printf '\377\377' | dd of="$f" bs=1 seek=6 conv=notrunc 2>/dev/null
"$S" shard --skip-existing --seq-len 32 "$T/a.ref" -o "$T/sh" 2> "$T/err"
grep -q 'checksum' "$T/err" || fail "shard: the corruption is not named: $(cat "$T/err")"
diff -r "$T/sh" "$T/sh.ref" || fail "shard: a corrupted directory was not made again"
mkdir "$T/mine"; echo keep > "$T/mine/notes.txt"
expect_fail 1 'already exists' -- "$S" shard --skip-existing --seq-len 32 "$T/a.ref" -o "$T/mine"
[ "$(cat "$T/mine/notes.txt")" = keep ] || fail "a directory that is not a shard directory was touched"
echo "scale_skip: ok"

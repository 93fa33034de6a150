# tokenize ids | cat round trip; truncation at every offset; bad input; atomic output.
. "$SRC/tests/cli/lib.sh"

cat > "$T/in.jsonl" <<'J'
{"id":"a","ids":[1,2,3],"lang":"en"}
{"ids":[]}

{"id":"b\u00e9","ids":[65535,0,7],"src_bytes":12,"meta":{"k":[1,2]}}
J
"$SLUICE" tokenize ids --vocab-size 65536 --eos 0 "$T/in.jsonl" -o "$T/a.tok"
"$SLUICE" cat "$T/a.tok" > "$T/out.jsonl"
cat > "$T/want.jsonl" <<J
{"id":"a","ids":[1,2,3],"lang":"en"}
{"id":"$T/in.jsonl:2","ids":[]}
{"id":"bé","ids":[65535,0,7],"src_bytes":12,"meta":{"k":[1,2]}}
J
diff "$T/want.jsonl" "$T/out.jsonl" || fail "round trip differs"

# cat output is itself valid input: a second round trip is byte-identical
"$SLUICE" tokenize ids --vocab-size 65536 --eos 0 "$T/out.jsonl" -o "$T/b.tok"
"$SLUICE" cat "$T/b.tok" | diff - "$T/out.jsonl"

# stdin/stdout and '-'
"$SLUICE" tokenize ids --vocab-size 65536 --eos 0 < "$T/in.jsonl" | "$SLUICE" cat - | diff - <(sed "s#$T/in.jsonl#<stdin>#" "$T/want.jsonl")

# header
"$SLUICE" cat --header "$T/a.tok" | grep -q '"vocab_size":65536,"token_bytes":2,"eos":0' || fail "header"

# truncation at every byte offset: always an error with a message, never a clean end
n=$(stat -c %s "$T/a.tok")
for ((i = 0; i < n; i++)); do
  head -c $i "$T/a.tok" > "$T/cut.tok"
  expect_fail 1 'truncated|empty input|too short' -- "$SLUICE" cat "$T/cut.tok" -o "$T/cut.jsonl"
  no_file "$T/cut.jsonl"
done
# corrupt one byte in the middle
cp "$T/a.tok" "$T/bad.tok"; printf '\x01' | dd of="$T/bad.tok" bs=1 seek=$((n - 40)) conv=notrunc 2>/dev/null
expect_fail 1 'checksum|corrupt|truncated|vocab|metadata' -- "$SLUICE" cat "$T/bad.tok"

# bad input to tokenize ids
expect_fail 2 'vocab-size is required' -- "$SLUICE" tokenize ids "$T/in.jsonl"
expect_fail 2 "unknown option.*--bogus" -- "$SLUICE" tokenize ids --bogus
expect_fail 1 'in.jsonl:4: .*token 0: id 65535 is not below the vocab size 1000' -- "$SLUICE" tokenize ids --vocab-size 1000 "$T/in.jsonl" -o "$T/x.tok"
no_file "$T/x.tok"
printf '{"ids":[1,2,-3]}\n' > "$T/neg.jsonl"
expect_fail 1 'neg.jsonl:1: "ids"\[2\] is not a token id' -- "$SLUICE" tokenize ids --vocab-size 10 "$T/neg.jsonl"
printf '{"ids":[1,2\n' > "$T/broken.jsonl"
expect_fail 1 'broken.jsonl:1: offset [0-9]+' -- "$SLUICE" tokenize ids --vocab-size 10 "$T/broken.jsonl"
head -c 3000 /dev/urandom > "$T/garbage.bin"
expect_fail 1 'garbage.bin' -- "$SLUICE" cat "$T/garbage.bin"
expect_fail 1 'garbage.bin' -- "$SLUICE" tokenize ids --vocab-size 10 "$T/garbage.bin"
expect_fail 1 'nope.tok: cannot open' -- "$SLUICE" cat "$T/nope.tok"
: > "$T/empty.tok"
expect_fail 1 'empty input' -- "$SLUICE" cat "$T/empty.tok"
# an empty JSONL file is an empty (valid) stream
: > "$T/empty.jsonl"
"$SLUICE" tokenize ids --vocab-size 10 "$T/empty.jsonl" | "$SLUICE" cat | diff - /dev/null
# a line longer than --max-doc-bytes
printf '{"ids":[%s1]}\n' "$(printf '1,%.0s' $(seq 1 600))" > "$T/long.jsonl"
expect_fail 1 'long.jsonl: offset 0: line longer than 1000 bytes' -- "$SLUICE" tokenize ids --vocab-size 10 --max-doc-bytes 1000 "$T/long.jsonl"

# compressed input is detected by content, not name
zstd -q -c "$T/in.jsonl" > "$T/in.data"; gzip -c "$T/in.jsonl" > "$T/in2.data"; xz -c "$T/in.jsonl" > "$T/in3.data"; bzip2 -c "$T/in.jsonl" > "$T/in4.data"
for f in in.data in2.data in3.data in4.data; do
  "$SLUICE" tokenize ids --vocab-size 65536 --eos 0 "$T/$f" | "$SLUICE" cat | sed "s#$T/$f#X#" > "$T/c.jsonl"
  sed "s#$T/in.jsonl#X#" "$T/want.jsonl" | diff - "$T/c.jsonl" || fail "compressed $f"
done
# truncated zstd
head -c 20 "$T/in.data" > "$T/trunc.zst"
expect_fail 1 'trunc.zst: (corrupt or )?truncated zstd' -- "$SLUICE" tokenize ids --vocab-size 65536 "$T/trunc.zst" -o "$T/t.tok"
no_file "$T/t.tok"

# a full disk: a tiny tmpfs (needs root; /dev/full stands in otherwise)
mkdir -p "$T/full"
if mount -t tmpfs -o size=64k tmpfs "$T/full" 2>/dev/null; then
  trap 'umount "$T/full"' EXIT
  seq 1 20000 | sed 's/.*/{"ids":[&,1,2,3,4,5,6,7]}/' > "$T/big.jsonl"
  expect_fail 1 'full/o.tok: write failed: No space left on device' -- "$SLUICE" tokenize ids --vocab-size 30000 "$T/big.jsonl" -o "$T/full/o.tok"
  no_file "$T/full/o.tok"
  [ -z "$(ls -A "$T/full")" ] || fail "files left on the full disk: $(ls -A "$T/full")"
else
  echo "note: cannot mount tmpfs here; testing /dev/full on stdout instead"
fi
expect_fail 1 'error writing|write failed' -- sh -c "\"$SLUICE\" cat \"$T/a.tok\" > /dev/full"

# devices and FIFOs are written in place, never replaced by a renamed file
"$SLUICE" cat "$T/a.tok" -o /dev/null
[ -c /dev/null ] || fail "/dev/null is no longer a character device"
mkfifo "$T/fifo"
( cat "$T/fifo" > "$T/from-fifo" ) &
"$SLUICE" cat "$T/a.tok" -o "$T/fifo"
wait
[ -p "$T/fifo" ] || fail "the FIFO was replaced"
diff "$T/from-fifo" "$T/want.jsonl"
expect_fail 1 'is a directory' -- "$SLUICE" cat "$T/a.tok" -o "$T"

# a document id with a newline and control bytes stays on one line in messages
printf '{"id":"a\\nb\\u0001c","ids":[99]}\n' > "$T/nl.jsonl"
expect_fail 1 "id 99 is not below" -- "$SLUICE" tokenize ids --vocab-size 10 "$T/nl.jsonl"
[ "$(wc -l < "$T/err")" -eq 1 ] || fail "multi-line error: $(cat "$T/err")"
grep -q 'a\\x0ab\\x01c' "$T/err" || fail "id not quoted: $(cat "$T/err")"

# Input decoding by content: every codec, concatenation, empty streams,
# truncation and corruption (integrity checks), short files and pipes.
. "$SRC/tests/cli/lib.sh"

seq 1 30000 | sed 's/.*/{"ids":[&,1,2]}/' > "$T/in.jsonl"
"$SLUICE" tokenize ids --vocab-size 40000 "$T/in.jsonl" | "$SLUICE" cat | sed 's/"id":"[^"]*",//' > "$T/want"
check() { # file: decoded documents must equal the input's
  "$SLUICE" tokenize ids --vocab-size 40000 "$1" | "$SLUICE" cat | sed 's/"id":"[^"]*",//' | cmp -s - "$T/want" || fail "$1 decodes differently"
}
gzip -c "$T/in.jsonl" > "$T/a.gz";   check "$T/a.gz"
zstd -q -c "$T/in.jsonl" > "$T/a.zst"; check "$T/a.zst"
xz -c "$T/in.jsonl" > "$T/a.xz";     check "$T/a.xz"
bzip2 -c "$T/in.jsonl" > "$T/a.bz2"; check "$T/a.bz2"
# concatenated members / frames (BGZF-like) and trailing NUL padding
head -n 10000 "$T/in.jsonl" | gzip -c > "$T/m.gz"; tail -n +10001 "$T/in.jsonl" | gzip -c >> "$T/m.gz"; check "$T/m.gz"
head -n 10000 "$T/in.jsonl" | zstd -q -c > "$T/m.zst"; tail -n +10001 "$T/in.jsonl" | zstd -q -c >> "$T/m.zst"; check "$T/m.zst"
cp "$T/a.gz" "$T/pad.gz"; head -c 512 /dev/zero >> "$T/pad.gz"; check "$T/pad.gz"
# through a pipe, in small pieces
cat "$T/a.zst" | "$SLUICE" tokenize ids --vocab-size 40000 | "$SLUICE" cat | sed 's/"id":"[^"]*",//' | cmp -s - "$T/want" || fail "zstd from a pipe"

# empty compressed inputs are empty inputs
for z in "gzip -c" "zstd -q -c" "xz -c" "bzip2 -c"; do
  $z < /dev/null > "$T/empty.z"
  "$SLUICE" tokenize ids --vocab-size 10 "$T/empty.z" | "$SLUICE" cat | cmp -s - /dev/null || fail "empty input through '$z'"
done

# files shorter than the 8 magic bytes, from a file and from a pipe
printf '{"ids":[1]}' > "$T/short.jsonl"   # 11 bytes, no newline
printf '{"ids":[' > "$T/s1"; printf '1]}\n' > "$T/s2"
want='{"ids":[1]}'
[ "$("$SLUICE" tokenize ids --vocab-size 10 "$T/short.jsonl" | "$SLUICE" cat | sed 's/"id":"[^"]*",//')" = "$want" ] || fail "short file"
[ "$( (cat "$T/s1"; sleep 0.2; cat "$T/s2") | "$SLUICE" tokenize ids --vocab-size 10 | "$SLUICE" cat | sed 's/"id":"[^"]*",//')" = "$want" ] || fail "short first read from a pipe"

# truncation is an error for every codec, never a silent short read
for f in a.gz a.zst a.xz a.bz2; do
  n=$(stat -c %s "$T/$f")
  for cut in 10 $((n / 2)) $((n - 4)) $((n - 1)); do
    head -c $cut "$T/$f" > "$T/cut"
    expect_fail 1 'cut: (corrupt|truncated|corrupt or truncated) ' -- "$SLUICE" tokenize ids --vocab-size 40000 "$T/cut" -o "$T/o.tok"
    no_file "$T/o.tok"
  done
done
# a flipped byte in the middle of the data: the CRC / checksum catches it
for f in a.gz a.zst a.xz a.bz2; do
  n=$(stat -c %s "$T/$f"); cp "$T/$f" "$T/bad"
  b=$(od -An -tu1 -j $((n / 2)) -N1 "$T/bad" | tr -d ' '); printf "$(printf '\\%03o' $(( (b + 1) % 256 )))" | dd of="$T/bad" bs=1 seek=$((n / 2)) conv=notrunc 2>/dev/null
  expect_fail 1 'bad: ' -- "$SLUICE" tokenize ids --vocab-size 40000 "$T/bad" -o "$T/o.tok"
  no_file "$T/o.tok"
done
# garbage after a gzip member
cp "$T/a.gz" "$T/tail.gz"; echo "junk" >> "$T/tail.gz"
expect_fail 1 'tail.gz: unexpected data after gzip data' -- "$SLUICE" tokenize ids --vocab-size 40000 "$T/tail.gz"

# sluice read on bad input: each case must fail with a one-line error naming
# the file and position, exit non-zero, never crash, and leave no output file.
. "$SRC/tests/cli/lib.sh"
cd "$T"
seq 1 30000 | sed 's/.*/{"id":&,"text":"document number & of a test corpus"}/' > big.jsonl

# binary garbage (a piece of an ELF executable: has NUL bytes), also on stdin
head -c 5000 "$SLUICE" > garbage.bin
expect_fail 1 '^sluice: read: garbage\.bin:[0-9]+: binary data \(NUL byte at offset [0-9]+\)' -- "$SLUICE" read garbage.bin -o out.jsonl
no_file out.jsonl
set +e; "$SLUICE" read < garbage.bin > out.stdin 2> err; rc=$?; set -e
[ $rc -eq 1 ] && grep -q '^sluice: read: <stdin>:[0-9]*: binary data' err || fail "garbage on stdin: $rc $(cat err)"
# garbage that starts like JSON
{ printf '{'; head -c 3000 "$SLUICE"; } > garbage.jsonl
expect_fail 1 '^sluice: read: garbage\.jsonl:1: offset [0-9]+' -- "$SLUICE" read garbage.jsonl -o out.jsonl
no_file out.jsonl

# truncated zstd: a .jsonl.zst and a .tar.zst cut in the middle
zstd -q -c big.jsonl > big.jsonl.zst
head -c $(( $(stat -c %s big.jsonl.zst) / 2 )) big.jsonl.zst > cut.jsonl.zst
expect_fail 1 '^sluice: read: cut\.jsonl\.zst: .*(truncated|Truncated)' -- "$SLUICE" read cut.jsonl.zst -o out.jsonl
no_file out.jsonl
tar -cf - big.jsonl | zstd -q -c > big.tar.zst
head -c $(( $(stat -c %s big.tar.zst) / 2 )) big.tar.zst > cut.tar.zst
expect_fail 1 '^sluice: read: cut\.tar\.zst' -- "$SLUICE" read cut.tar.zst -o out.jsonl
no_file out.jsonl
# a tar cut inside a member (uncompressed: the archive layer must notice)
tar -cf big.tar big.jsonl
head -c 300000 big.tar > cut.tar
expect_fail 1 '^sluice: read: cut\.tar:big\.jsonl: .*(runcated|premature)' -- "$SLUICE" read cut.tar -o out.jsonl
no_file out.jsonl
# corrupted gzip: one byte flipped in the deflate data (the garbage it
# decodes to is caught as a malformed line, or by the decompressor)
gzip -c big.jsonl > bad.gz
printf '\xff' | dd of=bad.gz bs=1 seek=2000 conv=notrunc 2>/dev/null
expect_fail 1 '^sluice: read: bad\.gz(:[0-9]+)?: ' -- "$SLUICE" read bad.gz -o out.jsonl
no_file out.jsonl

# a line longer than --max-doc-bytes: a small limit (lines 1-9 have 52 bytes, line 10 has 54),
# and the 64 MiB default
expect_fail 1 '^sluice: read: big\.jsonl:10: line longer than --max-doc-bytes \(53 bytes\)$' -- \
  "$SLUICE" read --max-doc-bytes 53 big.jsonl -o out.jsonl
no_file out.jsonl
{ printf '{"text":"short"}\n{"text":"'; head -c $((64 << 20)) /dev/zero | tr '\0' a; printf '"}\n'; } > huge.jsonl
expect_fail 1 '^sluice: read: huge\.jsonl:2: line longer than --max-doc-bytes \(67108864 bytes\)$' -- \
  "$SLUICE" read huge.jsonl -o out.jsonl
no_file out.jsonl
{ head -c $((64 << 20)) /dev/zero | tr '\0' a; printf 'b'; } > huge.txt
expect_fail 1 '^sluice: read: huge\.txt: document longer than --max-doc-bytes' -- "$SLUICE" read huge.txt -o out.jsonl
no_file out.jsonl
rm -f huge.jsonl huge.txt

# invalid UTF-8 in each mode (a truncated euro sign, a lone continuation byte)
printf '{"text":"ok"}\n{"text":"price 5\xe2\x82 and \x80"}\n' > inv.jsonl
"$SLUICE" read inv.jsonl -o out.jsonl 2> err
printf '{"id":"inv.jsonl:1","text":"ok"}\n{"id":"inv.jsonl:2","text":"price 5\xef\xbf\xbd and \xef\xbf\xbd"}\n' | diff - out.jsonl
grep -q '^sluice: read: warning: 2 invalid UTF-8 sequence(s) replaced by U+FFFD$' err || fail "no repair summary: $(cat err)"
"$SLUICE" read --invalid skip inv.jsonl 2> err | diff - <(printf '{"id":"inv.jsonl:1","text":"ok"}\n{"id":"inv.jsonl:2","text":"price 5 and "}\n')
grep -q '2 invalid UTF-8 sequence(s) dropped' err || fail "no skip summary: $(cat err)"
"$SLUICE" read -q inv.jsonl 2> err > /dev/null
[ ! -s err ] || fail "--quiet printed: $(cat err)"
expect_fail 1 '^sluice: read: inv\.jsonl:2: invalid UTF-8 \(byte 16 of the line\)$' -- "$SLUICE" read --invalid error inv.jsonl -o out2.jsonl
no_file out2.jsonl
printf 'plain\n\xff text\n' > inv.txt
expect_fail 1 '^sluice: read: inv\.txt:2: invalid UTF-8 \(byte 6 of the file\)$' -- "$SLUICE" read --invalid error inv.txt -o out2.jsonl
no_file out2.jsonl

# malformed JSON lines: fatal by default, skipped and counted with --on-error skip
printf '{"text":"a"}\n{"text":"b",}\n{"text":"c"}\n{"txt":"d"}\n' > bad.jsonl
expect_fail 1 '^sluice: read: bad\.jsonl:2: offset [0-9]+: ' -- "$SLUICE" read bad.jsonl -o out2.jsonl
no_file out2.jsonl
"$SLUICE" read --on-error skip bad.jsonl 2> err | diff - <(printf '{"id":"bad.jsonl:1","text":"a"}\n{"id":"bad.jsonl:2","text":"c"}\n')
grep -q 'bad\.jsonl:2: .*(line skipped)' err && grep -q 'bad\.jsonl:4: no "text" field (fields: txt); --field names the text.s (line skipped)' err \
  && grep -q '^sluice: read: warning: 2 malformed line(s) skipped$' err || fail "skip warnings: $(cat err)"
# a source of white space only, read whole at once: its lines are bounded too (diff_jsonl.py seed 3004 case 31)
printf ' \r\n' > ws.txt
expect_fail 1 '^sluice: read: ws\.txt:1: line longer than --max-doc-bytes \(1 bytes\)$' -- "$SLUICE" read --max-doc-bytes 1 ws.txt
printf '  \n' > ws2.txt
"$SLUICE" read --max-doc-bytes 2 ws2.txt > /dev/null 2> err && grep -q "ws2.txt: empty, no documents" err || fail "a blank line at the limit"
# JSON Lines whose first line was cut (split -b): read as text, but said so
printf 'xt":"cut"}\n{"text":"b"}\n{"text":"c"}\n' > cut.jsonl
"$SLUICE" read cut.jsonl > out.cut 2> err || fail "a cut JSON Lines file failed"
grep -q "^sluice: warning: cut.jsonl: read as plain text, but the lines after its first are JSON objects (JSON Lines cut inside a line?); --format jsonl reads it as JSON Lines$" err ||
  fail "no warning for a JSON Lines file cut inside its first line: $(cat err)"
[ "$(wc -l < out.cut)" = 1 ] || fail "the cut file was not one plain-text document"
"$SLUICE" read -q --format jsonl --on-error skip cut.jsonl | grep -c '"text":"[bc]"' | grep -qx 2 || fail "--format jsonl of a cut file"
printf 'def f():\n    return {}\n' > code.py
"$SLUICE" read code.py > /dev/null 2> err && [ ! -s err ] || fail "a warning for plain text: $(cat err)"
# no text field: the line's fields are named (8 at most, 32 bytes each, control bytes as '?')
printf '{}\n' > e0.jsonl
expect_fail 1 '^sluice: read: e0\.jsonl:1: no "text" field \(an empty object\)$' -- "$SLUICE" read e0.jsonl
printf '{"a":1,"b\\n":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9}\n' > many.jsonl
expect_fail 1 '^sluice: read: many\.jsonl:1: no "text" field \(fields: a, b\?, c, d, e, f, g, h, \.\.\.\); --field names the text.s$' \
  -- "$SLUICE" read many.jsonl
printf '{"%s%s":1}\n' 0123456789abcdefghijklmnopqrstu é > long.jsonl # the 33rd byte inside "é"
expect_fail 1 '^sluice: read: long\.jsonl:1: no "text" field \(fields: 0123456789abcdefghijklmnopqrstu\); ' \
  -- "$SLUICE" read long.jsonl

# empty inputs are valid and give no documents (with a warning): plain, an
# empty archive, an empty member. (A compressed empty file, `gzip < /dev/null`,
# is left out until stream/io.c accepts it: it reports "Unrecognized archive
# format" today.)
: > empty.txt
tar -cf empty.tar -T /dev/null
mkdir e && : > e/nothing.jsonl && tar -C e -cf emptymember.tar nothing.jsonl
"$SLUICE" read empty.txt empty.tar emptymember.tar -o out.jsonl 2> err
[ -f out.jsonl ] && [ ! -s out.jsonl ] || fail "empty inputs: output not an empty file"
grep -q 'empty\.txt: empty, no documents' err && grep -q 'emptymember\.tar:nothing\.jsonl: empty' err || fail "no empty warnings: $(cat err)"
"$SLUICE" read < /dev/null > out.stdin 2> /dev/null && [ ! -s out.stdin ] || fail "empty stdin"

# a missing file (even after a good one), a folder with nothing to read
expect_fail 1 '^sluice: read: missing\.jsonl: No such file or directory$' -- "$SLUICE" read big.jsonl missing.jsonl -o out2.jsonl
no_file out2.jsonl
[ ! -s "$T/out" ] || fail "documents printed before the missing-file error"
mkdir -p edir/.cache && echo x > edir/.cache/lock # a folder is its files (tests/cli/read_folder.sh): none here
expect_fail 1 "^sluice: read: edir: a folder without files to read \\(names starting with '.' or '_' are left out\\)$" \
  -- "$SLUICE" read edir -o out2.jsonl
no_file out2.jsonl

# usage errors: exit 2
expect_fail 2 'invalid' -- "$SLUICE" read --invalid maybe big.jsonl
expect_fail 2 'on-error' -- "$SLUICE" read --on-error ignore big.jsonl
expect_fail 2 'max-doc-bytes' -- "$SLUICE" read --max-doc-bytes 0 big.jsonl
expect_fail 2 'field' -- "$SLUICE" read --field '' big.jsonl

# a full disk: a small tmpfs when we may mount one, and /dev/full for stdout
expect_fail 1 '^sluice: read: <stdout>: write failed: No space left on device$' -- sh -c "'$SLUICE' read big.jsonl > /dev/full"
mkdir mnt
if mount -t tmpfs -o size=64k tmpfs mnt 2> mount.err; then
  trap 'umount "$T/mnt" 2>/dev/null || true' EXIT
  expect_fail 1 '^sluice: read: mnt/out\.jsonl: write failed: No space left on device$' -- "$SLUICE" read big.jsonl -o mnt/out.jsonl
  no_file mnt/out.jsonl
  [ -z "$(ls -A mnt)" ] || fail "files left on the full tmpfs: $(ls -A mnt)"
  umount mnt
  trap - EXIT
else
  echo "skipping the tmpfs full-disk case: cannot mount tmpfs ($(cat mount.err)); /dev/full covered it" >&2
fi

# a member name with a newline (archive data is untrusted) in a truncated
# cpio: the error stays one line
{ printf '070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X' 1 $((0100644)) 0 0 1 0 100 0 0 0 0 9 0
  printf 'bad\nname\0'; printf '\0\0\0'; printf 'short'; } > nl.cpio
expect_fail 1 '^sluice: read: nl\.cpio:bad\?name: ' -- "$SLUICE" read nl.cpio -o out3.jsonl
[ "$(wc -l < "$T/err")" -eq 1 ] || fail "error is not one line: $(cat "$T/err")"
no_file out3.jsonl

# --format forces the kind of a source
printf '{not json, just text}\n' > "$T/brace.txt"
expect_fail 1 'brace.txt:1' -- "$SLUICE" read "$T/brace.txt"
"$SLUICE" read --format text "$T/brace.txt" | grep -q '"text":"{not json, just text}\\n"' || fail "--format text"
printf '  \n{"text":"a"}\n' > "$T/j.txt"
"$SLUICE" read --format jsonl "$T/j.txt" | grep -q '"text":"a"' || fail "--format jsonl"
printf 'plain\n' > "$T/p.txt"
expect_fail 1 'p.txt:1' -- "$SLUICE" read --format jsonl "$T/p.txt"
expect_fail 2 "--format: 'xml' is not one of auto\|jsonl\|text" -- "$SLUICE" read --format xml "$T/p.txt"

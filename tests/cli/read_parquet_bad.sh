# Bad Parquet input: one line naming the file (and the row group, column and page
# where there is one), exit 1, no output file; never a crash or a hang. The damaged
# files come from tests/data/parquet/make_bad.py (a stdlib-only Parquet writer) and
# from byte patches of a pyarrow fixture.
. "$SRC/tests/cli/lib.sh"
cd "$T"
python3 "$DATA/parquet/make_bad.py" bad >/dev/null
"$SLUICE" read -q bad/good.parquet > good.jsonl
printf '%s\n' '{"id":"bad/good.parquet:1","text":"alpha"}' '{"id":"bad/good.parquet:2","text":"béta"}' \
  '{"id":"bad/good.parquet:3","text":"gamma"}' | cmp -s - good.jsonl || fail "the hand-made file reads wrong: $(cat good.jsonl)"
# a BYTE_ARRAY decimal: the values pyarrow 26's to_pylist gives (str of its Decimals)
"$SLUICE" read -q bad/bytedec.parquet > dec.jsonl
printf '%s\n' '{"id":"bad/bytedec.parquet:1","text":"alpha","d":"123.456"}' \
  '{"id":"bad/bytedec.parquet:2","text":"beta","d":"-0.005"}' \
  '{"id":"bad/bytedec.parquet:3","text":"gamma","d":"-9999999999999999999999999999999999999.993"}' \
  '{"id":"bad/bytedec.parquet:4","text":"delta","d":"0.000"}' | cmp -s - dec.jsonl ||
  fail "the BYTE_ARRAY decimals read wrong: $(cat dec.jsonl)"
expect_fail 1 '^sluice: read: bad/bytedec_wide.parquet: row 3, column d: a decimal wider than 32 bytes$' -- "$SLUICE" read bad/bytedec_wide.parquet -o out.jsonl
no_file out.jsonl
expect_fail 1 '^sluice: read: bad/page_too_big.parquet: row group 0, column text, page 0 \(offset 4\): page of 1027 bytes is larger than what is left of its column chunk' -- "$SLUICE" read bad/page_too_big.parquet -o out.jsonl
no_file out.jsonl
expect_fail 1 'bad/snappy_bad.parquet: row group 0, column text, page 0 \(offset 4\): SNAPPY decompression error' -- "$SLUICE" read bad/snappy_bad.parquet
expect_fail 1 'bad/dict_index.parquet: row group 0, column text, page 1 \(offset 27\): dictionary index 7, the dictionary has 2 values' -- "$SLUICE" read bad/dict_index.parquet
expect_fail 1 'bad/short_values.parquet: row group 0, column text, page 0 \(offset 4\): PLAIN value of 5 bytes runs past the page' -- "$SLUICE" read bad/short_values.parquet
expect_fail 1 'bad/def_too_high.parquet: row group 0, column text, page 0 \(offset 4\): definition levels' -- "$SLUICE" read bad/def_too_high.parquet
# a TIME value of 25:00 (pyarrow's to_pylist wraps it to 01:00): refused, as Arrow IPC's
expect_fail 1 '^sluice: read: bad/time_range.parquet: row 3, column t: a time of day out of range$' -- "$SLUICE" read bad/time_range.parquet -o out.jsonl
expect_fail 1 '^sluice: read: bad/date_range.parquet: row 3, column d: a date out of range \(years 1 to 9999\)$' -- "$SLUICE" read bad/date_range.parquet -o out.jsonl
expect_fail 1 '^sluice: read: bad/ts_range.parquet: row 3, column ts: a timestamp out of range \(years 1 to 9999\)$' -- "$SLUICE" read bad/ts_range.parquet -o out.jsonl
no_file out.jsonl
# a row group broken after good ones: on three threads the error is the first one in
# the file's order, as on one; and every damaged file reads the same (output, message,
# exit status) on three threads as on one
expect_fail 1 '^sluice: read: bad/rg3_last_bad.parquet: row group 2, column text, page 0 \(offset 86\): PLAIN value of 5 bytes runs past the page$' -- "$SLUICE" read -@ 3 bad/rg3_last_bad.parquet -o out.jsonl
no_file out.jsonl
expect_fail 1 '^sluice: read: bad/rg3_two_bad.parquet: row group 1, column text, page 1 \(offset 68\): dictionary index 7, the dictionary has 2 values$' -- "$SLUICE" read -@ 3 bad/rg3_two_bad.parquet
for g in bad/*.parquet; do
  for t in 1 3; do
    set +e; "$SLUICE" read -q -@ $t "$g" > "thr$t.out" 2> "thr$t.err"; echo $? > "thr$t.rc"; set -e
  done
  cmp -s thr1.out thr3.out && cmp -s thr1.err thr3.err && cmp -s thr1.rc thr3.rc ||
    fail "$g: -@ 3 reads it otherwise than -@ 1: $(cat thr1.err thr3.err)"
done
# a repetition-level bomb: 2^31 - 1 list elements in a few bytes; refused within the budget
/usr/bin/time -f %M -o rss "$SLUICE" read bad/rep_bomb.parquet >/dev/null 2>err && fail "the bomb was read"
grep -q 'rep_bomb.parquet: row group 0, column l.list.element, page 0 (offset 32): more than [0-9]* values in 1 rows' err || fail "bomb: $(cat err)"
[ "$(tail -1 rss)" -lt 300000 ] || fail "the bomb took $(tail -1 rss) KB"

f="$DATA/parquet/fw_none_plain_v2.parquet"
size=$(stat -c %s "$f")
# truncated (no footer)
head -c 3000 "$f" > trunc.parquet
expect_fail 1 '^sluice: read: trunc.parquet: truncated Parquet file \(no PAR1 footer magic at the end\)$' -- "$SLUICE" read trunc.parquet
printf 'PAR1' > tiny.parquet
expect_fail 1 'tiny.parquet: truncated Parquet file \(4 bytes, no footer\)' -- "$SLUICE" read tiny.parquet
# a footer whose length lies: larger than the file, and shorter than it is
python3 - "$f" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
n = struct.unpack("<I", d[-8:-4])[0]
open("long_footer.parquet", "wb").write(d[:-8] + struct.pack("<I", 0x7FFFFFF0) + b"PAR1")
open("short_footer.parquet", "wb").write(d[:-8] + struct.pack("<I", n // 2) + b"PAR1")
bad = d[:]
for i in range(len(d) - 8 - n + 20, len(d) - 8 - n + 60):
    bad[i] = 0xFF
open("thrift.parquet", "wb").write(bad)
PY
expect_fail 1 'long_footer.parquet: footer length 2147483632 exceeds the file' -- "$SLUICE" read long_footer.parquet
expect_fail 1 'short_footer.parquet: footer( offset [0-9]+: corrupt metadata|: metadata without)' -- "$SLUICE" read short_footer.parquet
expect_fail 1 'thrift.parquet: footer( offset [0-9]+: corrupt metadata|: metadata without)' -- "$SLUICE" read thrift.parquet
# an encrypted footer is refused by name
{ head -c $((size - 4)) "$f"; printf 'PARE'; } > enc.parquet
expect_fail 1 'enc.parquet: encrypted Parquet file \(encrypted footer\): not supported' -- "$SLUICE" read enc.parquet
# damage anywhere: each run either reads or fails with one line naming the file
python3 - "$f" <<'PY'
import random, sys
d = open(sys.argv[1], "rb").read()
rng = random.Random(7)
for k in range(60):
    b = bytearray(d)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(4, len(b) - 8)
        b[i] = rng.randrange(256)
    open(f"dmg{k:02d}.parquet", "wb").write(b)
PY
for g in dmg*.parquet; do
  set +e; timeout 20 "$SLUICE" read -q "$g" > /dev/null 2> err; rc=$?; set -e
  [ $rc -eq 0 ] || [ $rc -eq 1 ] || fail "$g: exit $rc: $(cat err)"
  [ $rc -eq 0 ] || { [ "$(wc -l < err)" -eq 1 ] && grep -q "^sluice: read: $g" err; } || fail "$g: $(cat err)"
done

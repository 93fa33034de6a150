# sluice read on Arrow IPC files and streams (pyarrow; uncompressed, LZ4_FRAME,
# ZSTD; dictionaries, replaced and delta dictionaries; nested columns; every
# scalar type; the view types Utf8View and BinaryView; polars' own files and
# streams, whose files hold an unframed Schema message that pyarrow, reading
# by the footer, never reads) and datasets.save_to_disk folders (a Dataset in
# shards, a DatasetDict) against what pyarrow itself reads from them:
# tests/data/arrow/make_fixtures.py wrote each one's expected JSON Lines from
# pa.ipc.open_file/open_stream(...).read_all().to_pylist() (manifest.tsv: file or
# folder, --field, expected output, options), and the bad inputs in bad/.
. "$SRC/tests/cli/lib.sh"
cd "$DATA/arrow"
n=0
while IFS=$'\t' read -r file field expected opts; do
  # shellcheck disable=SC2086
  "$SLUICE" read -q --field "$field" $opts "$file" > "$T/out.jsonl" || fail "$file: sluice read failed"
  cmp -s "$T/out.jsonl" "$expected" || { diff "$T/out.jsonl" "$expected" | head -c 1500 >&2; fail "$file reads differently from pyarrow ($expected)"; }
  n=$((n + 1))
done < manifest.tsv
[ "$n" -ge 20 ] || fail "only $n fixtures in manifest.tsv"
# one thread; from standard input (held in memory; ids name <stdin>); compressed; in a tar
"$SLUICE" read -q -@ 1 types_stream_zstd.arrow | cmp -s - types_file.expected.jsonl || fail "-@ 1 differs"
"$SLUICE" read -q < fw_stream_lz4.arrow | cmp -s - fw.expected.jsonl || fail "a stream on stdin differs"
"$SLUICE" read -q < fw_file_zstd.arrow | cmp -s - fw.expected.jsonl || fail "a file on stdin differs"
"$SLUICE" read -q < polars_file.arrow | cmp -s - polars_file.expected.jsonl || fail "polars' file on stdin differs"
# through a pipe, the first bytes arriving alone (detection waits for the schema message)
{ head -c 6 fw_stream_none.arrow; sleep 0.3; tail -c +7 fw_stream_none.arrow; } | "$SLUICE" read -q | cmp -s - fw.expected.jsonl || fail "a stream through a slow pipe differs"
zstd -qc fw_dict_stream.arrow > "$T/fw.arrow.zst"
"$SLUICE" read -q "$T/fw.arrow.zst" | cmp -s - fw.expected.jsonl || fail "a zstd-compressed Arrow stream differs"
tar -cf "$T/fw.tar" fw_file_none.arrow ids.arrow
"$SLUICE" read -q "$T/fw.tar" > "$T/tar.jsonl"
{ cat fw.expected.jsonl; sed 's/"id":"ids.arrow:/"id":"'"${T//\//\\/}"'\/fw.tar:ids.arrow:/' ids.expected.jsonl; } | cmp -s - "$T/tar.jsonl" || fail "Arrow members of a tar differ"
# every stage reads it: tokenize char over the folder equals tokenize char over its JSON Lines
"$SLUICE" tokenize char -q -o "$T/a.tok" hf_dataset || fail "tokenize char over a folder failed"
"$SLUICE" tokenize char -q -o "$T/b.tok" fw.expected.jsonl || fail "tokenize char over JSON Lines failed"
cmp -s "$T/a.tok" "$T/b.tok" || fail "tokenize char over a save_to_disk folder differs from its JSON Lines"
# a null text is an error naming the row, unless skipped; a missing column names those there are
expect_fail 1 'nulltext.arrow: row 2: the text column "text" is null' -- "$SLUICE" read nulltext.arrow
expect_fail 1 'no column "body" for the text \(columns: text, id, dump' -- "$SLUICE" read --field body fw_file_none.arrow
expect_fail 1 'column "token_count" is not a string column' -- "$SLUICE" read --field token_count fw_file_none.arrow
# bad input: one line naming the file, the record batch, the column and the offset; no output
while IFS='|' read -r file pat; do
  expect_fail 1 "^sluice: read: bad/$file: $pat" -- "$SLUICE" read "bad/$file"
  [ "$(wc -l < "$T/err")" -eq 1 ] || fail "bad/$file: more than one line: $(cat "$T/err")"
  [ ! -s "$T/out" ] || fail "bad/$file: partial output"
done <<'LIST'
truncated_file.arrow|truncated Arrow file \(no ARROW1 magic at the end\)
bad_footer_len.arrow|footer length 2147483632 exceeds the file \(1730 bytes\)
truncated_stream.arrow|message at offset 504: body of 120 bytes exceeds the data \(10 bytes left\)
bad_meta_len.arrow|message at offset 504: metadata length 2147483632 exceeds the limit
bad_flatbuffer.arrow|message at offset 504: corrupt metadata
bad_offsets.arrow|record batch 1 \(message at offset 504\), column text: offset 2 of 4 is 9, below the one before
bad_zstd.arrow|record batch 1 \(message at offset [0-9]+\), column text: ZSTD decompression error
bad_dict_index.arrow|record batch 0 \(message at offset [0-9]+\), row 3, column k: dictionary index 7 out of range
bad_time.arrow|record batch 0 \(message at offset [0-9]+\), row 3, column t: a time of day out of range
bad_date.arrow|record batch 0 \(message at offset [0-9]+\), row 3, column d: a date out of range \(years 1 to 9999\)
bad_timestamp.arrow|record batch 0 \(message at offset [0-9]+\), row 3, column ts: a timestamp out of range \(years 1 to 9999\)
bad_timestamp_tz.arrow|record batch 0 \(message at offset [0-9]+\), row 3, column ts: a timestamp out of range \(years 1 to 9999\)
bool8_id.arrow|column "id" is not a string or a number column
bad_view_buffer.arrow|record batch 0 \(message at offset [0-9]+\), column text: view 2: data buffer 3 of 1$
bad_view_range.arrow|record batch 0 \(message at offset [0-9]+\), column text: view 2: 20 bytes at offset 30 run past data buffer 0 \(36 bytes\)
bad_footer_block.arrow|footer at offset [0-9]+: record batch block 1 at offset 1099511627776 lies outside the messages
dict_replace_file.arrow|dictionary batch \(message at offset [0-9]+\): a second dictionary for id 0 that is no delta
LIST
# random damage: never a crash, a hang or more than one line of error
for i in $(seq 1 40); do
  f=$(sed -n "$(( (i % 16) + 1 ))p" manifest.tsv | cut -f1)
  [ -f "$f" ] || continue
  size=$(stat -c %s "$f")
  cp "$f" "$T/dmg.arrow"
  off=$(( (i * 7919) % size ))
  printf "$(printf '\\%03o' $(( (i * 37) % 256 )) $(( (i * 91) % 256 )))" | dd of="$T/dmg.arrow" bs=1 seek="$off" conv=notrunc status=none
  set +e; timeout 20 "$SLUICE" read -q --field text "$T/dmg.arrow" > /dev/null 2> "$T/dmg.err"; rc=$?; set -e
  [ $rc -le 1 ] || fail "damaged $f (offset $off): exit $rc: $(cat "$T/dmg.err")"
  [ "$(wc -l < "$T/dmg.err")" -le 1 ] || fail "damaged $f: more than one line: $(cat "$T/dmg.err")"
done
# --part R/N by record batches: parts in order give exactly the output of one run
cd "$T"
cp -r "$DATA/arrow/fw_file_zstd.arrow" "$DATA/arrow/fw_dict_stream.arrow" "$DATA/arrow/dict_delta.arrow" "$DATA/arrow/hf_dataset" .
cp "$DATA/arrow/views_file.arrow" "$DATA/arrow/polars_file.arrow" .
printf '{"id":"j1","text":"between"}\n' > mid.jsonl
set -- fw_file_zstd.arrow mid.jsonl fw_dict_stream.arrow dict_delta.arrow hf_dataset views_file.arrow polars_file.arrow
"$SLUICE" read -q "$@" > whole.jsonl
for n in 2 3 5 8; do
  : > parts.jsonl
  for r in $(seq 0 $((n - 1))); do "$SLUICE" read -q --part "$r/$n" "$@" >> parts.jsonl; done
  cmp -s parts.jsonl whole.jsonl || fail "--part */$n differs from one run"
done
[ "$("$SLUICE" read -q --part 0/2 "$@" | wc -l)" -gt 0 ] && [ "$("$SLUICE" read -q --part 1/2 "$@" | wc -l)" -gt 0 ] || fail "a part is empty"
# a part of a single file is some of its record batches, not all or none
[ "$("$SLUICE" read -q --part 1/3 fw_file_zstd.arrow | wc -l)" -lt 70 ] || fail "part 1/3 of one file read it whole"

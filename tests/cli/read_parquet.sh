# sluice read on Parquet files from four writers (pyarrow in a matrix of codecs,
# dictionary on/off, data page v1/v2, small pages, statistics; fastparquet, polars,
# duckdb) against what pyarrow itself reads from them: tests/data/parquet/make_fixtures.py
# wrote each file's expected JSON Lines from pyarrow.parquet.read_table().to_pylist()
# (manifest.tsv: file, --field, expected output, options).
. "$SRC/tests/cli/lib.sh"
cd "$DATA/parquet"
n=0
while IFS=$'\t' read -r file field expected opts; do
  # shellcheck disable=SC2086
  "$SLUICE" read -q --field "$field" $opts "$file" > "$T/out.jsonl" || fail "$file: sluice read failed: $(cat "$T/out.jsonl" | head -c 300)"
  case "$expected" in
  *.zst) zstd -qdc "$expected" > "$T/exp.jsonl" ;;
  *) cp "$expected" "$T/exp.jsonl" ;;
  esac
  cmp -s "$T/out.jsonl" "$T/exp.jsonl" || { diff "$T/out.jsonl" "$T/exp.jsonl" | head -c 1500 >&2; fail "$file reads differently from pyarrow ($expected)"; }
  n=$((n + 1))
done < manifest.tsv
[ "$n" -ge 40 ] || fail "only $n fixtures in manifest.tsv"
# one thread, and from standard input (the file is then held in memory; ids name <stdin>)
"$SLUICE" read -q -@ 1 fw_zstd_dict_v2_small.parquet | cmp -s - fw.expected.jsonl || fail "-@ 1 differs"
# the files of three (or two) row groups on two and three threads, and a part's share on
# three, read as pyarrow reads them and as one thread does
while IFS=$'\t' read -r file field expected opts; do
  case "$file" in fw_*) ;; *) continue ;; esac
  for t in 2 3; do
    # shellcheck disable=SC2086
    "$SLUICE" read -q -@ $t --field "$field" $opts "$file" | cmp -s - "$expected" || fail "$file: -@ $t differs"
  done
done < manifest.tsv
"$SLUICE" read -q -@ 3 --part 1/2 fw_zstd_plain_v1.parquet > "$T/p2.jsonl"
"$SLUICE" read -q -@ 1 --part 1/2 fw_zstd_plain_v1.parquet | cmp -s - "$T/p2.jsonl" || fail "--part 1/2 with -@ 3 differs"
"$SLUICE" read -q < fw_snappy_plain_v1.parquet | cmp -s - fw.expected.jsonl || fail "stdin differs"
# compressed, and inside an archive
zstd -qc fw_gzip_dict_v1_small.parquet > "$T/fw.parquet.zst"
"$SLUICE" read -q "$T/fw.parquet.zst" | cmp -s - fw.expected.jsonl || fail "a zstd-compressed Parquet file differs"
tar -cf "$T/fw.tar" fw_brotli_dict_v1_small.parquet ids.parquet
"$SLUICE" read -q "$T/fw.tar" > "$T/tar.jsonl"
{ cat fw.expected.jsonl; sed 's/"id":"ids.parquet:/"id":"'"${T//\//\\/}"'\/fw.tar:ids.parquet:/' ids.expected.jsonl; } | cmp -s - "$T/tar.jsonl" || fail "Parquet members of a tar differ"
# a null text is an error naming the row, unless skipped
expect_fail 1 'nulltext.parquet: row 2: the text column "text" is null' -- "$SLUICE" read nulltext.parquet
# a missing text column names the columns there are
expect_fail 1 'no column "body" for the text \(columns: text, id, dump' -- "$SLUICE" read --field body fw_none_dict_v1_small.parquet
# --part R/N by row groups: parts in order give exactly the output of one run
cd "$T"
cp "$DATA/parquet/fw_zstd_dict_v1_stats.parquet" "$DATA/parquet/stack.parquet" "$DATA/parquet/fw_duckdb.parquet" .
printf '{"id":"j1","text":"between"}\n' > mid.jsonl
set -- fw_zstd_dict_v1_stats.parquet mid.jsonl fw_duckdb.parquet fw_zstd_dict_v1_stats.parquet
"$SLUICE" read -q "$@" > whole.jsonl
for n in 2 3 5 8; do
  : > parts.jsonl
  for r in $(seq 0 $((n - 1))); do "$SLUICE" read -q --part "$r/$n" "$@" >> parts.jsonl; done
  cmp -s parts.jsonl whole.jsonl || fail "--part */$n differs from one run"
done
[ "$("$SLUICE" read -q --part 0/2 "$@" | wc -l)" -gt 0 ] && [ "$("$SLUICE" read -q --part 1/2 "$@" | wc -l)" -gt 0 ] || fail "a part is empty"

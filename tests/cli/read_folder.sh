# A plain folder given to a document-reading stage stands for the files under
# it, found as pyarrow.dataset finds a folder's files: recursively, in byte
# order of their paths, names starting with '.' or '_' left out (.cache,
# .gitattributes, Spark's _SUCCESS), symbolic links followed. The order was
# checked against pyarrow 26.0.1: ds.dataset("tree", format="parquet").files
# lists tree/Z.parquet, tree/a/000.parquet, tree/a/001.parquet,
# tree/a/sub/x.parquet, tree/b/000.parquet for the same layout of names.
# Each file's rows are pyarrow's (tests/data/parquet/fw.expected.jsonl, from
# make_fixtures.py), so the folder must read as that file five times over.
. "$SRC/tests/cli/lib.sh"
P="$DATA/parquet"
cd "$T"
mkdir -p tree/a/sub tree/b tree/.cache/huggingface tree/_tmp ext
cp "$P/fw_brotli_plain_v2.parquet" tree/Z.parquet
cp "$P/fw_duckdb.parquet" tree/a/000.parquet
cp "$P/fw_delta.parquet" tree/a/001.parquet
cp "$P/fw_delta_v2.parquet" tree/a/sub/x.parquet
cp "$P/fw_duckdb_snappy.parquet" tree/b/000.parquet
cp "$P/fw_brotli_dict_v2_stats.parquet" ext/linked.parquet
ln -s ../ext tree/c                              # a linked folder is read
echo "lock" > tree/.cache/huggingface/x.lock     # hidden: left out
echo "*.parquet filter=lfs" > tree/.gitattributes
: > tree/_SUCCESS                                # Spark's marker: left out
echo "not a corpus" > tree/_tmp/notes.txt

for _ in 1 2 3 4 5 6; do cat "$P/fw.expected.jsonl"; done > expected.jsonl
"$SLUICE" read -q tree > out.jsonl || fail "read of a folder failed"
cmp -s out.jsonl expected.jsonl || fail "read of a folder differs from its files' rows in path order"
"$SLUICE" read -q tree/Z.parquet tree/a/000.parquet tree/a/001.parquet tree/a/sub/x.parquet tree/b/000.parquet \
  tree/c/linked.parquet > named.jsonl
cmp -s out.jsonl named.jsonl || fail "read of a folder differs from read of its files named in order"
"$SLUICE" read -q tree/ | cmp -s - out.jsonl || fail "a trailing slash changed the output"

# the order is that of the whole paths' bytes, not folder by folder: pyarrow
# 26.0.1 lists ord/a-.parquet, ord/a-b/y.parquet, ord/a.c/z.parquet,
# ord/a/x.parquet, ord/a0.parquet ('-' and '.' are below '/')
mkdir -p ord/a ord/a-b ord/a.c
for f in a/x a-b/y a.c/z a0 a-; do
  printf '{"text":"%s"}\n' "$f" > "ord/$f.jsonl"
done
"$SLUICE" read -q ord | grep -o '"text":"[^"]*"' | tr '\n' ' ' > order.txt
[ "$(cat order.txt)" = '"text":"a-" "text":"a-b/y" "text":"a.c/z" "text":"a/x" "text":"a0" ' ] ||
  fail "folder order: $(cat order.txt)"
# a datasets.save_to_disk folder inside is its data files, in their order, where it stands
mkdir -p mixed
cp -r "$DATA/arrow/hf_dataset" mixed/m_ds
printf '{"text":"first"}\n' > mixed/a.jsonl
printf '{"text":"last"}\n' > mixed/z.jsonl
"$SLUICE" read -q mixed > mixed.jsonl || fail "a folder with a datasets folder inside"
{ "$SLUICE" read -q mixed/a.jsonl; "$SLUICE" read -q mixed/m_ds; "$SLUICE" read -q mixed/z.jsonl; } > want_mixed.jsonl
cmp -s mixed.jsonl want_mixed.jsonl || fail "a datasets folder inside a folder: not its files in order where it stands"

# parts of a folder give the whole in order
for r in 0 1 2; do "$SLUICE" read -q --part $r/3 tree; done > parts.jsonl
cmp -s parts.jsonl out.jsonl || fail "--part R/3 of a folder do not add up to the folder"

# every stage that reads documents takes a folder
"$SLUICE" tokenize char -q -o a.tok tree || fail "tokenize char over a folder failed"
"$SLUICE" tokenize char -q -o b.tok named.jsonl
cmp -s a.tok b.tok || fail "tokenize char over a folder differs from its JSON Lines"

# a dataset card beside the data would become a document: an error, no output
echo "# FineWeb sample" > tree/README.md
expect_fail 1 "read: tree: tree/README.md would be read as a plain-text document beside 6 Parquet file\(s\); name the files to read" \
  -- "$SLUICE" read -q tree -o card.jsonl
no_file card.jsonl
# ... but a folder of plain text is plain text, README or not
mkdir -p texts/sub
printf 'one\n' > texts/b.txt
printf 'two\n' > texts/sub/a.txt
printf '# notes\n' > texts/README.md
"$SLUICE" read -q texts | grep -o '"id":"[^"]*"' | tr '\n' ' ' > ids.txt
[ "$(cat ids.txt)" = '"id":"texts/README.md:1" "id":"texts/b.txt:1" "id":"texts/sub/a.txt:1" ' ] ||
  fail "a folder of plain text: $(cat ids.txt)"
# files named as nothing are judged by their first bytes, a BOM and JSON white space skipped as the reader does
mkdir -p bom
printf '\xef\xbb\xbf \r\n{"text":"a"}\n' > bom/part-0
cp "$P/fw_duckdb.parquet" bom/part-1
"$SLUICE" read -q bom | wc -l | grep -qx 61 || fail "a BOM before JSON Lines taken for plain text"
# JSON Lines beside compressed JSON Lines
mkdir -p jl
head -n 3 "$P/fw.expected.jsonl" > jl/0.jsonl
tail -n 2 "$P/fw.expected.jsonl" | zstd -q > jl/1.jsonl.zst
"$SLUICE" read -q jl | wc -l | grep -qx 5 || fail "a folder of .jsonl and .jsonl.zst files"

# a run's own output inside the folder: not read back on a second run
mkdir -p own
cp "$P/fw_duckdb.parquet" own/a.parquet
"$SLUICE" read -q own -o own/all.jsonl || fail "read of a folder into a file in it failed"
cmp -s own/all.jsonl "$P/fw.expected.jsonl" || fail "the first run into the folder"
expect_fail 1 "^sluice: read: own: the folder holds own/all.jsonl, an output of this run \(an earlier run's\?\); write it elsewhere or name the files to read$" \
  -- "$SLUICE" read -q own -o own/all.jsonl
cmp -s own/all.jsonl "$P/fw.expected.jsonl" || fail "the refused second run changed its output"
# ... nor a side output (--rejected, --removed, --summary)
mkdir -p side
cp "$P/fw_duckdb.parquet" side/a.parquet
"$SLUICE" filter -q --rules c4 --rejected side/rejected.jsonl side -o kept.jsonl || fail "filter into a side output in the folder"
[ -s side/rejected.jsonl ] || fail "no rejected documents to test with"
expect_fail 1 "^sluice: filter: side: the folder holds side/rejected.jsonl, an output of this run " \
  -- "$SLUICE" filter -q --rules c4 --rejected side/rejected.jsonl side -o kept.jsonl
rm side/rejected.jsonl
"$SLUICE" dedup exact -q --summary side/s.json side -o /dev/null || fail "dedup with its summary in the folder"
expect_fail 1 "^sluice: dedup exact: side: the folder holds side/s.json, an output of this run " \
  -- "$SLUICE" dedup exact -q --summary side/s.json side -o /dev/null
rm side/s.json
"$SLUICE" tokenize char -q --save-vocab side/vocab.json side -o a.tok || fail "tokenize char with its vocabulary in the folder"
expect_fail 1 "^sluice: tokenize char: side: the folder holds side/vocab.json, an output of this run " \
  -- "$SLUICE" tokenize char -q --save-vocab side/vocab.json side -o a.tok
# the standard output redirected into an input (as cat refuses it)
expect_fail 1 "^sluice: read: own/x.jsonl: input file is the output file \(the standard output\)$" \
  -- bash -c "exec '$SLUICE' read -q own > own/x.jsonl"
rm -f own/x.jsonl
cp own/all.jsonl grow.jsonl
expect_fail 1 "^sluice: read: grow.jsonl: input file is the output file \(the standard output\)$" \
  -- bash -c "exec '$SLUICE' read -q grow.jsonl >> grow.jsonl"
cmp -s grow.jsonl own/all.jsonl || fail "a refused '>>' run changed its input"
"$SLUICE" read -q grow.jsonl -o grow.jsonl || fail "-o naming the input (written beside, renamed) was refused"

# what cannot be read is named
rm tree/README.md
ln -s .. tree/a/loop
expect_fail 1 "read: tree/a/loop: a symbolic link loop" -- "$SLUICE" read -q tree
rm tree/a/loop
mkdir -p empty/.hidden
echo x > empty/.hidden/f.txt
expect_fail 1 "read: empty: a folder without files to read \(names starting with '.' or '_' are left out\)" \
  -- "$SLUICE" read -q empty
mkfifo tree/a/pipe
expect_fail 1 "read: tree/a/pipe: not a regular file or a folder" -- "$SLUICE" read -q tree
rm tree/a/pipe
true

# Concatenated token streams and several inputs:
# `cat a.tok b.tok` reads as one stream; stages given several files or a
# directory of part files give exactly what they give on one stream of the
# same documents (made independently, by tokenizing the concatenated JSONL);
# headers that differ, missing/duplicate/foreign parts are clear errors.
. "$SRC/tests/cli/lib.sh"
S=$SLUICE

# 300 documents with ids, token ids and a score field, cut into 3 JSONL files
awk 'BEGIN { srand(7); for (i = 0; i < 300; i++) { n = int(rand() * 90);
  printf "{\"id\":\"d%03d\",\"ids\":[", i; for (j = 0; j < n; j++) printf "%s%d", j ? "," : "", 2 + int(rand() * 997);
  printf "],\"nll\":%.3f}\n", rand() * 100 } }' > "$T/all.jsonl"
sed -n '1,90p' "$T/all.jsonl" > "$T/p0.jsonl"
sed -n '91,91p' "$T/all.jsonl" > "$T/p1.jsonl"
sed -n '92,300p' "$T/all.jsonl" > "$T/p2.jsonl"
: > "$T/empty.jsonl"
tok() { "$S" tokenize ids --vocab-size 1000 --eos 1 "$@"; }
tok "$T/all.jsonl" -o "$T/all.tok"
mkdir "$T/parts"
tok "$T/p0.jsonl" -o "$T/parts/part-0-of-4.tok"
tok "$T/p1.jsonl" -o "$T/parts/part-1-of-4.tok"
tok "$T/empty.jsonl" -o "$T/parts/part-2-of-4.tok"   # an empty part is a valid part
tok "$T/p2.jsonl" -o "$T/parts/part-3-of-4.tok"
P=("$T/parts/part-0-of-4.tok" "$T/parts/part-1-of-4.tok" "$T/parts/part-2-of-4.tok" "$T/parts/part-3-of-4.tok")
[ "$("$S" cat "$T/all.tok" | wc -l)" = 300 ] || fail "reference stream"

# the byte concatenation reads as one stream, through a pipe and from a file
cat "${P[@]}" > "$T/cat.tok"
"$S" cat "$T/all.tok" > "$T/want.jsonl"
cat "$T/cat.tok" | "$S" cat | diff - "$T/want.jsonl" || fail "cat of concatenated streams"
"$S" cat "$T/cat.tok" | diff - "$T/want.jsonl" || fail "cat of a concatenated file"
zstd -q -c "$T/cat.tok" | "$S" cat | diff - "$T/want.jsonl" || fail "compressed concatenation"
"$S" cat "${P[0]}" "${P[1]}" "${P[2]}" "${P[3]}" | diff - "$T/want.jsonl" || fail "cat of several files"
"$S" cat "$T/parts" | diff - "$T/want.jsonl" || fail "cat of a directory of parts"
"$S" cat "$T/parts/" | diff - "$T/want.jsonl" || fail "cat of DIR/"

# every stage: several inputs == the concatenation == one stream of the same documents
st() { "$S" stats "$@" | grep -v '"input"'; }
st "$T/all.tok" > "$T/st.want"
cat "$T/cat.tok" | st | diff - "$T/st.want" || fail "stats on the concatenation"
st "${P[@]}" | diff - "$T/st.want" || fail "stats of several inputs"
st "$T/parts" | diff - "$T/st.want" || fail "stats of a directory"
"$S" pack --seq-len 64 "$T/all.tok" -o "$T/pack.want"
"$S" pack --seq-len 64 "${P[@]}" -o "$T/pack.got"
cmp "$T/pack.want" "$T/pack.got" || fail "pack of several inputs"
cat "$T/cat.tok" | "$S" pack --seq-len 64 | cmp - "$T/pack.want" || fail "pack of the concatenation"
for opts in "--seq-len 64" "--seq-len 32 --shuffle --seed 3 --val-fraction 0.2 --max-file-bytes 512" \
            "--seq-len 64 --no-split --long split --warmup double:16..64"; do
  rm -rf "$T/sh.want" "$T/sh.got" "$T/sh.dir" "$T/sh.pipe"
  "$S" shard $opts "$T/all.tok" -o "$T/sh.want"
  "$S" shard $opts "${P[@]}" -o "$T/sh.got"
  "$S" shard $opts "$T/parts" -o "$T/sh.dir"
  cat "$T/cat.tok" | "$S" shard $opts -o "$T/sh.pipe"
  diff -r "$T/sh.want" "$T/sh.got" || fail "shard $opts: several inputs differ"
  diff -r "$T/sh.want" "$T/sh.dir" || fail "shard $opts: directory of parts differs"
  diff -r "$T/sh.want" "$T/sh.pipe" || fail "shard $opts: concatenation differs"
done
"$S" export megatron "$T/all.tok" -o "$T/mg.want"
"$S" export megatron "$T/parts" -o "$T/mg.got"
cmp "$T/mg.want.bin" "$T/mg.got.bin" && cmp "$T/mg.want.idx" "$T/mg.got.idx" || fail "export megatron"
for sel in "--keep-pct 10:70 --field nll" "--max-ppl 50 --field nll" "--bucket middle --field nll"; do
  "$S" filter $sel "$T/all.tok" -o "$T/f.want" 2>/dev/null
  "$S" filter $sel "${P[@]}" -o "$T/f.got" 2>/dev/null
  cmp "$T/f.want" "$T/f.got" || fail "filter $sel of several inputs"
  cat "$T/cat.tok" | "$S" filter $sel -o "$T/f.pipe" 2>/dev/null
  cmp "$T/f.want" "$T/f.pipe" || fail "filter $sel of the concatenation"
done
M=$DATA/model/ssm_f32
v=$(sed -n 's/.*"vocab_size": \([0-9]*\).*/\1/p' "$M/config.json")
head -n 20 "$T/all.jsonl" | sed "s/,\"nll\".*/}/" | awk -v v="$v" -F'[][]' '{ n = split($2, a, ","); s = "";
  for (i = 1; i <= n; i++) s = s (i > 1 ? "," : "") a[i] % v; print $1 "[" s "]" $3 }' > "$T/m.jsonl"
"$S" tokenize ids --vocab-size "$v" "$T/m.jsonl" -o "$T/m.tok"
head -n 7 "$T/m.jsonl" | "$S" tokenize ids --vocab-size "$v" -o "$T/m0.tok"
tail -n +8 "$T/m.jsonl" | "$S" tokenize ids --vocab-size "$v" -o "$T/m1.tok"
"$S" score -m "$M" "$T/m.tok" -o "$T/sc.want"
"$S" score -m "$M" "$T/m0.tok" "$T/m1.tok" -o "$T/sc.got"
cmp "$T/sc.want" "$T/sc.got" || fail "score of several inputs"

# truncation anywhere in the second stream of a concatenation is an error (at
# its very start the input is just the first stream, which is complete)
a=$(stat -c %s "${P[1]}"); cat "${P[1]}" "${P[2]}" > "$T/two.tok"; n=$(stat -c %s "$T/two.tok")
for ((i = a + 1; i < n; i++)); do
  head -c $i "$T/two.tok" > "$T/cut.tok"
  expect_fail 1 'truncated|not a token stream|after the end' -- "$S" cat "$T/cut.tok" -o "$T/cut.jsonl"
  no_file "$T/cut.jsonl"
done
head -c "$a" "$T/two.tok" | "$S" cat | diff - <("$S" cat "${P[1]}")
(cat "${P[1]}"; printf 'x') > "$T/junk.tok"
expect_fail 1 'offset [0-9]+: unexpected data after the end of the stream' -- "$S" cat "$T/junk.tok"

# headers that differ: the first difference is named
chk() { local pat=$1; shift; "$S" tokenize ids "$@" "$T/p1.jsonl" -o "$T/o.tok"
  cat "${P[0]}" "$T/o.tok" > "$T/bad.tok"
  expect_fail 1 "offset [0-9]+: .*different header \\($pat\\)" -- "$S" stats "$T/bad.tok"
  expect_fail 1 "o.tok: its header differs from that of .*part-0-of-4.tok \\($pat\\)" -- "$S" shard --seq-len 8 "${P[0]}" "$T/o.tok" -o "$T/x"
  no_file "$T/x"; }
chk 'vocab size 1000 vs 1001' --vocab-size 1001 --eos 1
chk 'eos id 1 vs 2' --vocab-size 1000 --eos 2
chk 'eos id 1 vs none' --vocab-size 1000
chk 'modality ids vs text' --vocab-size 1000 --eos 1 --modality text
# a packed stream after a document stream
"$S" pack --seq-len 64 "${P[1]}" -o "$T/pk.tok"
expect_fail 1 'differs .*(pad id|extra header fields|eos id)' -- "$S" cat "${P[0]}" "$T/pk.tok"
# several packed streams cannot be sharded as one (their document numbers restart)
expect_fail 1 'several packed streams' -- "$S" shard "$T/pk.tok" "$T/pk.tok" -o "$T/x"
no_file "$T/x"

# directories of parts: missing, duplicated, of different N, foreign files
mk() { rm -rf "$T/d"; mkdir "$T/d"; for f in "$@"; do cp "${P[0]}" "$T/d/$f"; done; }
mk part-0-of-4.tok part-1-of-4.tok part-3-of-4.tok
expect_fail 1 'part 2 of 4 is missing' -- "$S" shard --seq-len 8 "$T/d" -o "$T/x"; no_file "$T/x"
mk part-0-of-2.tok part-1-of-2.tok part-01-of-2.tok
expect_fail 1 'part 1 of 2 is there twice' -- "$S" stats "$T/d"
mk part-0-of-2.tok part-1-of-3.tok
expect_fail 1 'parts of different N' -- "$S" stats "$T/d"
mk part-0-of-1.tok notes.txt
expect_fail 1 "'notes.txt' is not a part file" -- "$S" stats "$T/d"
mk a-0-of-2.tok b-1-of-2.tok
expect_fail 1 'parts of different outputs' -- "$S" stats "$T/d"
mk part-2-of-2.tok
expect_fail 1 'out of range' -- "$S" stats "$T/d"
mk; expect_fail 1 'no part files' -- "$S" stats "$T/d"
# hidden files and temporaries of unfinished outputs are not parts
mk part-0-of-1.tok .hidden part-0-of-1.tok.tmp.123.0
"$S" stats "$T/d" > /dev/null || fail "hidden files or temporaries were taken for parts"

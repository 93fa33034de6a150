# merge of per-part shard directories == shard of the whole stream
# (docs/scale-out.md, "Many inputs, one result"): for N in 1 2 3 7, the parts of the test corpora
# (tokenize --part R/N) each sharded, then `sluice merge`, give byte for byte
# (manifest included) the directory `sluice shard` writes from the whole
# token stream, for the default layout, a val split, shuffle with a seed, a
# warmup schedule, the recurrent layout with memory slots, --no-split (long
# documents truncated / dropped / split), BOS markers and capped token files;
# inconsistent parts and parts made by an older --no-split are refused with
# one-line errors and no output. (64 parts: one option set.)
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
B=$DATA/bpe
NS="1 2 3 7"

# corpora: text (tiny BPE, the bpe corpus plus README, metadata kept) and
# pre-tokenized ids with long and empty documents and metadata
awk 'BEGIN { srand(11); for (i = 0; i < 500; i++) { n = (i % 23 == 0) ? 0 : int(rand() * (i % 17 == 0 ? 400 : 60));
  printf "{\"id\":\"d%d\",\"meta\":{\"k\":%d,\"s\":\"x%d\"},\"ids\":[", i, i % 5, i; for (j = 0; j < n; j++) printf "%s%d", j ? "," : "", 2 + int(rand() * 997);
  printf "]}\n" } }' > "$T/ids.jsonl"
ids() { "$S" tokenize ids -q --vocab-size 1000 --eos 1 "$@"; }
bpe() { "$S" tokenize bpe -q -t "$B/tiny-tokenizer.json" --append-eos "$@"; }
tokens() { # NAME TOKENIZE-FN INPUT...: $T/NAME.tok and $T/NAME.N/part-R.tok
  local name=$1 fn=$2; shift 2
  "$fn" "$@" -o "$T/$name.tok"
  for N in $NS; do
    mkdir -p "$T/$name.$N"
    for ((r = 0; r < N; r++)); do "$fn" --part "$r/$N" "$@" -o "$T/$name.$N/part-$r.tok"; done
  done
}
tokens ids ids "$T/ids.jsonl"
tokens text bpe "$B/corpus.jsonl" "$SRC/README.md"
[ "$("$S" cat "$T/text.tok" | wc -l)" -gt 50 ] || fail "fixture: text corpus too small"

checked=0
same() { # CORPUS SHARD-OPTIONS...
  local c=$1; shift
  rm -rf "$T/W"
  "$S" shard -q "$@" "$T/$c.tok" -o "$T/W" || fail "$c $*: shard of the whole failed"
  for N in $NS; do
    local dirs=()
    for ((r = 0; r < N; r++)); do
      rm -rf "$T/P$r"
      "$S" shard -q "$@" "$T/$c.$N/part-$r.tok" -o "$T/P$r" || fail "$c $*: part $r/$N failed"
      dirs+=("$T/P$r")
    done
    rm -rf "$T/M"
    "$S" merge -q "${dirs[@]}" -o "$T/M" || fail "$c $*: merge of $N parts failed"
    diff -r "$T/W" "$T/M" >/dev/null || fail "$c $*: merge of $N parts differs from shard of the whole"
    checked=$((checked + 1))
  done
}
for c in ids text; do
  same $c --seq-len 64
  same $c --seq-len 64 --val-fraction 0.2
  same $c --seq-len 64 --shuffle --seed 7 --val-fraction 0.1 --shuffle-window 5
  same $c --seq-len 32 --shuffle --seed 3
  same $c --warmup double:16..64,epochs=2,batch=2
  same $c --seq-len 64 --layout recurrent --batch 3
  same $c --seq-len 64 --layout recurrent --batch 3 --memory-tokens 4 --memory-id 600 --memory-write
  same $c --seq-len 64 --no-split
  same $c --seq-len 64 --no-split --long drop --val-fraction 0.3
  same $c --seq-len 64 --no-split --long split
  same $c --seq-len 64 --bos 0 --no-eos --pad 0
  same $c --seq-len 64 --max-file-bytes 1000 --val-fraction 0.2
done
# the fixtures really exercise what they claim: several parts hold documents,
# long documents were truncated/dropped, the whole has val rows, several files
"$S" shard -q --seq-len 64 --no-split "$T/ids.tok" -o "$T/tr"
grep -q '"long":"truncated"' "$T/tr/documents.jsonl" || fail "fixture: no truncated document"
[ -n "$("$S" cat "$T/ids.7/part-6.tok" | head -n 1)" ] || fail "fixture: part 6/7 is empty"
[ -e "$T/W/train-00001.tokens" ] && [ -e "$T/W/val-00000.tokens" ] || fail "fixture: capped files / val split"
# 64 parts (some of them empty), shuffled with a val split
NS=64 tokens ids64 ids "$T/ids.jsonl"
mv "$T/ids64.64" "$T/ids.64"
NS=64 same ids --seq-len 64 --shuffle --seed 9 --val-fraction 0.2 --shuffle-window 3
echo "merge_identity: $checked merges identical to one shard"

# ---- refusals: one line, non-zero exit, no output
"$S" shard -q --seq-len 64 "$T/ids.2/part-0.tok" -o "$T/a"
"$S" shard -q --seq-len 64 "$T/ids.2/part-1.tok" -o "$T/b"
"$S" shard -q --seq-len 32 "$T/ids.2/part-1.tok" -o "$T/b32"
"$S" shard -q --seq-len 64 --val-fraction 0.1 "$T/ids.2/part-1.tok" -o "$T/bval"
"$S" shard -q --seq-len 64 --shuffle --seed 1 "$T/ids.2/part-1.tok" -o "$T/bshuf"
"$S" shard -q --seq-len 64 --no-split "$T/ids.2/part-1.tok" -o "$T/bns"
one_line() { [ "$(wc -l < "$T/err")" = 1 ] || fail "not one line: $(cat "$T/err")"; }
expect_fail 1 'b32: does not match .*a \(seq_len' -- "$S" merge "$T/a" "$T/b32" -o "$T/x"; one_line
expect_fail 1 'bval: does not match .*val_fraction.*--concat-rows' -- "$S" merge "$T/a" "$T/bval" -o "$T/x"; one_line
expect_fail 1 'bshuf: does not match .*shuffle' -- "$S" merge "$T/a" "$T/bshuf" -o "$T/x"; one_line
expect_fail 1 'bns: does not match .*no_split' -- "$S" merge "$T/a" "$T/bns" -o "$T/x"; one_line
cp -r "$T/b" "$T/bname"
sed -i 's/"name": "[^"]*"/"name": "other"/' "$T/bname/manifest.json"
grep -q '"name": "other"' "$T/bname/manifest.json" || fail "fixture: tokenizer name not changed"
expect_fail 1 'bname: does not match .*tokenizer name' -- "$S" merge "$T/a" "$T/bname" -o "$T/x"; one_line
[ ! -e "$T/x" ] || fail "a refused merge left output"
# --concat-rows does not need them to agree (the old concatenation: rows as they are)
"$S" merge -q --concat-rows "$T/a" "$T/bval" -o "$T/cr"
cat "$T/a/train-00000.tokens" "$T/bval/train-00000.tokens" | cmp - "$T/cr/train-00000.tokens" || fail "--concat-rows rows"
# a directory made with --no-split by a sluice that did not record it (no
# "no_split" in the manifest): its padded rows or dropped documents give it away
"$S" shard -q --seq-len 64 --no-split "$T/ids.2/part-1.tok" -o "$T/old"
grep -q '"no_split": {"long": "truncate"}' "$T/old/manifest.json" || fail "the manifest does not record --no-split"
sed -i '/"no_split"/d' "$T/old/manifest.json"
"$S" cat "$T/old" > /dev/null || fail "a directory without \"no_split\" must still open"
expect_fail 1 'old: [0-9]+ train rows are padded .*--no-split.*--concat-rows' -- "$S" merge "$T/a" "$T/old" -o "$T/x"; one_line
"$S" shard -q --seq-len 64 --no-split --long drop "$T/ids.2/part-1.tok" -o "$T/oldd"
sed -i '/"no_split"/d' "$T/oldd/manifest.json"
expect_fail 1 'oldd: .*(padded|dropped).*--no-split' -- "$S" merge "$T/a" "$T/oldd" -o "$T/x"; one_line
[ ! -e "$T/x" ] || fail "a refused merge left output"
"$S" merge -q --concat-rows "$T/a" "$T/old" -o "$T/cr2" || fail "--concat-rows of an old --no-split directory"
# one padded row only, but a dropped document: also an older --no-split
awk 'BEGIN { printf "{\"id\":\"s1\",\"ids\":[5,6]}\n{\"id\":\"long\",\"ids\":["; for (j = 0; j < 600; j++) printf "%s7", j ? "," : "";
  printf "]}\n{\"id\":\"s2\",\"ids\":[8]}\n" }' | "$S" tokenize ids -q --vocab-size 1000 --eos 1 -o "$T/drop.tok"
"$S" shard -q --seq-len 512 --no-split --long drop "$T/drop.tok" -o "$T/old1"
grep -q '"long":"dropped"' "$T/old1/documents.jsonl" || fail "fixture: no dropped document"
sed -i '/"no_split"/d' "$T/old1/manifest.json"
expect_fail 1 'old1: a document was dropped: packed with --no-split by an older sluice' -- "$S" merge "$T/old1" -o "$T/x"; one_line
# a directory made by --concat-rows of several sources has padded rows inside a
# split: refused the same way (naming both causes); its sources merge
expect_fail 1 'cr: 2 train rows are padded .*--concat-rows' -- "$S" merge "$T/cr" -o "$T/x"; one_line
[ ! -e "$T/x" ] || fail "a refused merge left output"
# a packed stream records --no-split too, and shard of it records it in the manifest
"$S" pack -q --seq-len 64 --no-split --long drop "$T/ids.2/part-1.tok" -o "$T/pk.tok"
"$S" shard -q "$T/pk.tok" -o "$T/pk"
grep -q '"no_split": {"long": "drop"}' "$T/pk/manifest.json" || fail "shard of a --no-split packed stream"
"$S" shard -q --seq-len 64 --no-split --long drop "$T/ids.2/part-1.tok" -o "$T/pkw"
diff -r "$T/pk" "$T/pkw" >/dev/null || fail "pack --no-split | shard differs from shard --no-split"
# a directory of part shard directories (<R>-of-<N> names) stands for its
# parts in part order; a missing or repeated part is an error naming it
rm -rf "$T/pd" "$T/W"
mkdir "$T/pd"
"$S" shard -q --seq-len 64 "$T/ids.tok" -o "$T/W"
for r in 2 0 1; do "$S" shard -q --seq-len 64 "$T/ids.3/part-$r.tok" -o "$T/pd/shards-$r-of-3"; done
"$S" merge -q "$T/pd" -o "$T/pdm" || fail "merge of a parts directory"
diff -r "$T/W" "$T/pdm" >/dev/null || fail "merge of a parts directory differs from shard of the whole"
mv "$T/pd/shards-1-of-3" "$T/pd1"
expect_fail 1 'pd: part 1 of 3 is missing' -- "$S" merge "$T/pd" -o "$T/x"; one_line
cp -r "$T/pd1" "$T/pd/shards-01-of-3"
cp -r "$T/pd1" "$T/pd/shards-1-of-3"
expect_fail 1 'pd: part 1 of 3 is there twice' -- "$S" merge "$T/pd" -o "$T/x"; one_line
[ ! -e "$T/x" ] || fail "a refused merge left output"
echo "merge_identity: refusals ok"

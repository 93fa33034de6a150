# Special tokens written as text (<|endoftext|>) through `tokenize text | export megatron`,
# against Megatron-style references (tests/bpe/make_megatron_special.py: Hugging Face
# tokenizers' ids, as Megatron-LM's preprocess_data.py and datatrove take them, in the
# .bin/.idx layout of megatron-core's IndexedDatasetBuilder with the EOD appended) on
# tests/data/bpe/corpus.jsonl, 72 of whose 189 documents hold <|endoftext|> or <|padding|>:
#  - --special parse: byte-identical to the HF/Megatron/datatrove reference;
#  - the default (plain): byte-identical to HF with encode_special_tokens=True, and one
#    warning line at the end counting those documents and naming --special parse.
. "$SRC/tests/cli/lib.sh"
B=$DATA/bpe
NEOX=$B/neox-tokenizer.json

"$SLUICE" tokenize text -t "$NEOX" --special parse "$B/corpus.jsonl" 2> "$T/parse.err" | "$SLUICE" export megatron -o "$T/parse"
cmp "$T/parse.bin" "$B/megatron-neox-parse.bin" || fail "--special parse: .bin differs from the Megatron-style reference"
cmp "$T/parse.idx" "$B/megatron-neox-parse.idx" || fail "--special parse: .idx differs from the Megatron-style reference"
[ ! -s "$T/parse.err" ] || fail "--special parse printed: $(cat "$T/parse.err")"

"$SLUICE" tokenize text -t "$NEOX" "$B/corpus.jsonl" -o "$T/plain.tok" 2> "$T/plain.err"
"$SLUICE" export megatron "$T/plain.tok" -o "$T/plain"
cmp "$T/plain.bin" "$B/megatron-neox-plain.bin" || fail "default: .bin differs from HF with encode_special_tokens=True"
cmp "$T/plain.idx" "$B/megatron-neox-plain.idx" || fail "default: .idx differs"
! cmp -s "$T/plain.bin" "$T/parse.bin" || fail "the corpus does not tell the modes apart"

# the warning: one line; the count, first document and byte offset from the corpus itself
want=$(python3 - "$B/corpus.jsonl" <<'PY'
import json, sys
n, first = 0, None
for k, line in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    t = json.loads(line)["text"].encode("utf-8")
    hits = [(t.find(s), s) for s in (b"<|endoftext|>", b"<|padding|>") if s in t]
    if hits:
        n += 1
        first = first or (k, min(hits))
k, (at, s) = first
print("%d document(s) contain a special token's text, encoded as ordinary text (--special plain, the default; "
      "first: '%s' in %s:%d at byte %d); --special parse gives the token's id there, as Hugging Face tokenizers, "
      "Megatron-LM and datatrove do" % (n, s.decode(), sys.argv[1], k, at))
PY
)
[ "$(cat "$T/plain.err")" = "sluice: tokenize text: warning: $want" ] || fail "warning: '$(cat "$T/plain.err")', want '$want'"
case $want in 72\ document*) ;; *) fail "the corpus changed: $want" ;; esac
# the older name, several threads and small batches: the same line; -q: none
"$SLUICE" tokenize bpe -@ 3 --mem-budget 1M -t "$NEOX" "$B/corpus.jsonl" 2> "$T/bpe.err" | cmp -s - "$T/plain.tok" || fail "-@ 3"
[ "$(cat "$T/bpe.err")" = "sluice: tokenize bpe: warning: $want" ] || fail "tokenize bpe -@ 3: $(cat "$T/bpe.err")"
"$SLUICE" tokenize text -q -t "$NEOX" "$B/corpus.jsonl" 2> "$T/q.err" > /dev/null
[ ! -s "$T/q.err" ] || fail "-q printed: $(cat "$T/q.err")"
# no special token's text: no warning; a plain-text document (no line) is named by its file
grep -v -e '<|endoftext|>' -e '<|padding|>' "$B/corpus.jsonl" > "$T/clean.jsonl"
"$SLUICE" tokenize text -t "$NEOX" "$T/clean.jsonl" 2> "$T/clean.err" > /dev/null
[ ! -s "$T/clean.err" ] || fail "a corpus without special tokens' text warned: $(cat "$T/clean.err")"
printf 'x\n\nab [x] <|padding|>\n' > "$T/doc.txt"
"$SLUICE" tokenize text -t "$NEOX" --format text "$T/doc.txt" 2> "$T/txt.err" > /dev/null
grep -q "warning: 1 document(s) contain .*first: '<|padding|>' in $T/doc.txt at byte 10);" "$T/txt.err" ||
  fail "plain text: $(cat "$T/txt.err")"
# other families: a BERT tokenizer's [SEP]; a SentencePiece .model never parses: no warning
printf '{"text":"a [SEP] b"}\n{"text":"[sep]"}\n' > "$T/bert.jsonl"
"$SLUICE" tokenize text -t "$DATA/tok/bert-bge.json" "$T/bert.jsonl" 2> "$T/bert.err" > /dev/null
grep -q "warning: 1 document(s) .*first: '\[SEP\]' in $T/bert.jsonl:1 at byte 2)" "$T/bert.err" || fail "bert: $(cat "$T/bert.err")"
printf '{"text":"<s> a </s> <|endoftext|>"}\n' > "$T/spm.jsonl"
"$SLUICE" tokenize text -t "$DATA/spm/bpe-bf.model" "$T/spm.jsonl" 2> "$T/spm.err" > /dev/null
[ ! -s "$T/spm.err" ] || fail "a .model warned: $(cat "$T/spm.err")"
# --special error stops at the first such document
line=${want#*corpus.jsonl:}; line=${line%% at byte*}
expect_fail 1 "corpus.jsonl:$line: byte [0-9]+: special token '<\\|endoftext\\|>' in the text" -- \
  "$SLUICE" tokenize text -t "$NEOX" --special error "$B/corpus.jsonl" -o "$T/err.tok"
no_file "$T/err.tok"

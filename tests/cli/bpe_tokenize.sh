# sluice tokenize bpe / detokenize: ids equal to Hugging Face tokenizers' on the
# test corpus (fixtures from tests/bpe/gen_expected.py), header fields, round
# trip, --special modes, --append-eos/--prepend-bos, thread-count independence,
# and clean failures.
. "$SRC/tests/cli/lib.sh"
B="$DATA/bpe"
NEOX="$B/neox-tokenizer.json"

# ids vs the HF fixtures, both tokenizers, both --special modes
check_ids() { # tokenizer expected-file mode
  "$SLUICE" tokenize bpe -q -t "$1" --special "$3" "$B/corpus.jsonl" -o "$T/x.tok"
  "$SLUICE" cat "$T/x.tok" > "$T/x.jsonl"
  python3 - "$T/x.jsonl" "$2" "$3" <<'PY' || fail "ids differ from HF ($2, $3)"
import json, sys
got = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
want = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
assert len(got) == len(want), (len(got), len(want))
bad = [w["id"] for g, w in zip(got, want) if g["id"] != w["id"] or g["ids"] != w[sys.argv[3]]]
assert not bad, bad[:5]
PY
}
check_ids "$NEOX" "$B/expected-neox.jsonl" parse
check_ids "$NEOX" "$B/expected-neox.jsonl" plain
check_ids "$B/gpt2" "$B/expected-gpt2.jsonl" parse
check_ids "$B/gpt2/vocab.json" "$B/expected-gpt2.jsonl" plain

# header: text modality, vocab size, eos/pad ids, fingerprint = sha256 of the file
"$SLUICE" tokenize bpe -t "$NEOX" "$B/corpus.jsonl" -o "$T/n.tok"
fp=$(sha256sum "$NEOX" | cut -d' ' -f1)
"$SLUICE" cat --header "$T/n.tok" > "$T/h.json"
grep -q '"modality":"text","vocab_size":50277,"token_bytes":2,"eos":0' "$T/h.json" || fail "header: $(cat "$T/h.json")"
grep -q "\"fingerprint\":\"sha256:$fp\"" "$T/h.json" || fail "fingerprint: $(cat "$T/h.json")"
"$SLUICE" tokenize bpe -t "$B/gpt2" "$B/corpus.jsonl" | "$SLUICE" cat --header | grep -q '"vocab_size":50257,"token_bytes":2,"eos":50256' || fail "gpt2 header"

# `tokenize text` is the same command under its newer name: the same bytes
"$SLUICE" tokenize text -t "$NEOX" "$B/corpus.jsonl" -o "$T/t.tok"
cmp -s "$T/n.tok" "$T/t.tok" || fail "tokenize text and tokenize bpe differ"
"$SLUICE" tokenize --help | grep -q '^ *text ' || "$SLUICE" --help | grep -q 'tokenize text' || fail "tokenize text not listed"

# round trip: read | tokenize | detokenize == HF's decode (the NFC form of the text)
"$SLUICE" read "$B/corpus.jsonl" | "$SLUICE" tokenize bpe -t "$NEOX" | "$SLUICE" detokenize -t "$NEOX" > "$T/rt.jsonl"
python3 - "$T/rt.jsonl" "$B/expected-neox.jsonl" <<'PY' || fail "round trip differs from HF decode"
import json, sys
got = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
want = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
assert len(got) == len(want)
bad = [w["id"] for g, w in zip(got, want) if g["text"] != w["decoded"]]
assert not bad, bad[:5]
PY
# ... and sluice cat --text uses the same decoder
"$SLUICE" cat --text --no-ids --tokenizer "$NEOX" "$T/n.tok" | head -1 | grep -q '"text":"Hello world"' || fail "cat --text"

# src_bytes = UTF-8 bytes of the text; --append-eos / --prepend-bos
printf '{"id":"d","text":"h\\u00e9llo"}\n' > "$T/one.jsonl"
"$SLUICE" tokenize bpe -t "$NEOX" --append-eos --prepend-bos "$T/one.jsonl" | "$SLUICE" cat > "$T/o.jsonl"
grep -q '"ids":\[0,.*,0\],"src_bytes":6' "$T/o.jsonl" || fail "eos/bos/src_bytes: $(cat "$T/o.jsonl")"
"$SLUICE" tokenize bpe -t "$NEOX" --append-eos=1 "$T/one.jsonl" | "$SLUICE" cat | grep -q ',1\],' || fail "--append-eos=ID"
expect_fail 2 "out of range" -- "$SLUICE" tokenize bpe -t "$NEOX" --append-eos=50277 "$T/one.jsonl"

# output does not depend on the thread count (byte-identical streams)
"$SLUICE" tokenize bpe -t "$NEOX" -@ 1 "$B/corpus.jsonl" -o "$T/t1.tok"
"$SLUICE" tokenize bpe -t "$NEOX" -@ 3 "$B/corpus.jsonl" -o "$T/t3.tok"
cmp "$T/t1.tok" "$T/t3.tok" || fail "thread count changes the output"

# --special=error: a one-line error naming file, line and byte; no output file
printf '{"text":"ok"}\n{"text":"a <|endoftext|> b"}\n' > "$T/sp.jsonl"
expect_fail 1 "sp.jsonl:2: byte 2: special token '<\|endoftext\|>'" -- "$SLUICE" tokenize bpe -t "$NEOX" --special error "$T/sp.jsonl" -o "$T/sp.tok"
no_file "$T/sp.tok"
"$SLUICE" tokenize bpe -t "$NEOX" --special parse "$T/sp.jsonl" | "$SLUICE" cat | grep -q '"ids":\[66,209,0,270\]' || fail "--special parse"

# bad tokenizers and options
expect_fail 1 "nope.json" -- "$SLUICE" tokenize bpe -t "$T/nope.json" "$T/one.jsonl" -o "$T/z.tok"
no_file "$T/z.tok"
printf '{"model":{"type":"WordPiece","vocab":{}}}' > "$T/wp.json"
expect_fail 1 "wp.json: model.vocab is empty" -- "$SLUICE" tokenize bpe -t "$T/wp.json" "$T/one.jsonl"
printf '{"model":{"type":"Foo","vocab":{}}}' > "$T/foo.json"
expect_fail 1 "foo.json: model type 'Foo' is not supported" -- "$SLUICE" tokenize bpe -t "$T/foo.json" "$T/one.jsonl"
printf '{"model":' > "$T/trunc.json"
expect_fail 1 "trunc.json" -- "$SLUICE" tokenize bpe -t "$T/trunc.json" "$T/one.jsonl"
expect_fail 2 "--tokenizer PATH is required" -- "$SLUICE" tokenize bpe "$T/one.jsonl"
expect_fail 2 "not one of plain\|parse\|error" -- "$SLUICE" tokenize bpe -t "$NEOX" --special maybe "$T/one.jsonl"
printf '{"text":"x"}\n{"text":\n' > "$T/badjson.jsonl"
expect_fail 1 "badjson.jsonl:2" -- "$SLUICE" tokenize bpe -t "$NEOX" "$T/badjson.jsonl" -o "$T/bj.tok"
no_file "$T/bj.tok"

# detokenize refuses a stream made with another tokenizer file (here the same
# tokenizer with one more byte); --force decodes anyway
expect_fail 1 "made with tokenizer sha256:$fp" -- "$SLUICE" detokenize -t "$B/gpt2" "$T/n.tok"
{ cat "$NEOX"; echo; } > "$T/neox2.json"
expect_fail 1 "made with tokenizer" -- "$SLUICE" detokenize -t "$T/neox2.json" "$T/n.tok"
"$SLUICE" detokenize --force -t "$T/neox2.json" "$T/n.tok" | head -1 | grep -q '"text":"Hello world"' || fail "--force"
# an id outside the tokenizer's vocabulary is an error naming the document
expect_fail 1 "document 'c002': token 3: id 50276 is not in the vocabulary" -- "$SLUICE" detokenize --force -t "$B/gpt2" "$T/n.tok" -o "$T/d.jsonl"
no_file "$T/d.jsonl"

# Split + ByteLevel pipelines: Llama-3 (with ignore_merges) and Qwen2 (single digits, NFC): HF's ids
# in both modes (fixtures from tests/bpe/make_split.py); Llama-3's eos/bos default to
# <|end_of_text|>/<|begin_of_text|>
for m in parse plain; do
  check_ids "$B/llama3-tiny-tokenizer.json" "$B/expected-llama3.jsonl" $m
  check_ids "$B/qwen2-tiny-tokenizer.json" "$B/expected-qwen2.jsonl" $m
done
"$SLUICE" tokenize bpe -t "$B/llama3-tiny-tokenizer.json" --append-eos --prepend-bos "$T/one.jsonl" | "$SLUICE" cat > "$T/l3.jsonl"
grep -q '"ids":\[0,.*,1\],"src_bytes":6' "$T/l3.jsonl" || fail "llama3 bos/eos: $(cat "$T/l3.jsonl")"
"$SLUICE" tokenize bpe -t "$B/llama3-tiny-tokenizer.json" "$T/one.jsonl" | "$SLUICE" cat --header | grep -q '"vocab_size":841,"token_bytes":2,"eos":1,"bos":0,"pad":null' || fail "llama3 header"
"$SLUICE" read "$B/corpus.jsonl" | "$SLUICE" tokenize bpe -t "$B/llama3-tiny-tokenizer.json" | "$SLUICE" detokenize -t "$B/llama3-tiny-tokenizer.json" | cmp - <("$SLUICE" read "$B/corpus.jsonl") || fail "llama3 round trip"

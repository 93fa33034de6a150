# sluice tokenize bpe with a SentencePiece-style BPE tokenizer.json (Mistral-7B
# v0.1 as transformers converts it): ids and decoded text equal Hugging Face
# tokenizers' (expected-mistral-v1.jsonl, made by tests/data/tok/make_fixtures.py),
# for any thread count; --append-eos/--prepend-bos use </s> and <s>; a file with
# a component this family does not run is refused with one line naming it.
. "$SRC/tests/cli/lib.sh"
D="$DATA/tok"
TOK="$D/mistral-v1.json"

# documents with ids: the fixture texts
python3 -c "
import json, sys
for i, l in enumerate(open(sys.argv[1], encoding='utf-8')):
    print(json.dumps({'id': 'd%d' % i, 'text': json.loads(l)['text']}))" "$D/texts.jsonl" > "$T/docs.jsonl"

# ids: plain (default) and parse, against HF
check_ids() { # MODE OUT
  python3 - "$D/expected-mistral-v1.jsonl" "$2" "$1" <<'PY' || fail "ids of --special $1 differ from HF"
import json, sys
want = [json.loads(l) for l in open(sys.argv[1], encoding='utf-8')]
got = [json.loads(l) for l in open(sys.argv[2], encoding='utf-8')]
assert len(got) == len(want) > 3200, (len(got), len(want))
bad = [i for i, (w, g) in enumerate(zip(want, got))
       if g['ids'] != (w.get('plain', w['parse']) if sys.argv[3] == 'plain' else w['parse']) or g['id'] != 'd%d' % i]
assert not bad, bad[:10]
PY
}
"$SLUICE" tokenize bpe --tokenizer "$TOK" "$T/docs.jsonl" -o "$T/plain.tok"
"$SLUICE" cat "$T/plain.tok" > "$T/plain.jsonl"
check_ids plain "$T/plain.jsonl"
"$SLUICE" tokenize bpe -t "$TOK" --special parse -@ 2 "$T/docs.jsonl" -o "$T/parse.tok"
"$SLUICE" cat "$T/parse.tok" > "$T/parse.jsonl"
check_ids parse "$T/parse.jsonl"
"$SLUICE" tokenize bpe -t "$TOK" -@ 2 "$T/docs.jsonl" | cmp - "$T/plain.tok" || fail "output depends on the thread count"

# decoding: detokenize gives HF's decode of the same ids
"$SLUICE" detokenize -t "$TOK" "$T/parse.tok" > "$T/dec.jsonl"
python3 - "$D/expected-mistral-v1.jsonl" "$T/dec.jsonl" <<'PY' || fail "decoded text differs from HF decode"
import json, sys
want = [json.loads(l)['decoded'] for l in open(sys.argv[1], encoding='utf-8')]
got = [json.loads(l)['text'] for l in open(sys.argv[2], encoding='utf-8')]
bad = [i for i, (w, g) in enumerate(zip(want, got)) if w != g]
assert len(got) == len(want) and not bad, bad[:10]
PY

# header and the document boundary ids
printf '{"id":"a","text":"Hello world"}\n' > "$T/one.jsonl"
"$SLUICE" tokenize bpe -t "$TOK" --append-eos --prepend-bos "$T/one.jsonl" -o "$T/one.tok"
"$SLUICE" cat "$T/one.tok" | grep -q '"ids":\[1,22557,1526,2\]' || fail "bos/eos ids: $("$SLUICE" cat "$T/one.tok")"
"$SLUICE" cat --header "$T/one.tok" | grep -q '"vocab_size":32000,.*"eos":2,"bos":1,.*"unk":0' ||
  fail "header: $("$SLUICE" cat --header "$T/one.tok")"
"$SLUICE" cat --header "$T/one.tok" | grep -q '"tokenizer":"bpe:mistral-v1.json"' || fail "tokenizer name in the header"

# refused: dropout, an unknown component; one line naming the file, no output
sed 's/"dropout": null/"dropout": 0.1/' "$TOK" > "$T/drop.json"
expect_fail 1 "drop.json: model.dropout is not supported" -- "$SLUICE" tokenize bpe -t "$T/drop.json" "$T/one.jsonl" -o "$T/z.tok"
no_file "$T/z.tok"
sed '0,/"type": "Fuse"/s//"type": "CTC"/' "$TOK" > "$T/ctc.json"
expect_fail 1 "ctc.json: decoder 'CTC' is not supported" -- "$SLUICE" tokenize bpe -t "$T/ctc.json" "$T/one.jsonl" -o "$T/z.tok"
no_file "$T/z.tok"
[ "$(wc -l < "$T/err")" -eq 1 ] || fail "more than one line: $(cat "$T/err")"

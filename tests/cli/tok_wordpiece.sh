# sluice tokenize bpe with WordPiece / WordLevel tokenizer.json files built by
# HF (tests/data/tok/make_wp_fixtures.py: the real BGE / bert-base-uncased
# tokenizer as BertTokenizerFast writes it, whose HF ids equal llama.cpp's test
# vectors, also checked here; a BERT uncased with a trained vocabulary, a cased one
# with a Sequence of pre-tokenizers, two WordLevel pipelines with the other
# normalizers, Split behaviors and post-processors): ids with and without
# --add-special-tokens and decoded text equal HF's over texts.jsonl plus
# wp-texts.jsonl; --add-special-tokens on a SentencePiece-style file adds its
# <s>, on a byte-level Llama-3-style file its <|begin_of_text|>; bad components
# are refused with one line naming the file.
. "$SRC/tests/cli/lib.sh"
D="$DATA/tok"

python3 -c "
import json, sys
n = 0
for p in sys.argv[1:]:
    for l in open(p, encoding='utf-8'):
        print(json.dumps({'id': 'd%d' % n, 'text': json.loads(l)['text']}))
        n += 1" "$D/texts.jsonl" "$D/wp-texts.jsonl" > "$T/docs.jsonl"
# bert-bge (the real BGE / bert-base-uncased vocabulary): also llama.cpp's test inputs
python3 -c "
import json, sys
n = sum(1 for _ in open(sys.argv[1], encoding='utf-8'))
for i, t in enumerate(open(sys.argv[2], encoding='utf-8').read().split('\n__ggml_vocab_test__\n')):
    print(json.dumps({'id': 'd%d' % (n + i), 'text': t}))" "$T/docs.jsonl" "$D/llama.cpp-ggml-vocab-bert-bge.gguf.inp" |
  cat "$T/docs.jsonl" - > "$T/docs-bge.jsonl"

check() { # EXPECTED KEY OUT
  python3 - "$1" "$2" "$3" <<'PY' || fail "$2 ids of $1 differ from HF"
import json, sys
want = [json.loads(l) for l in open(sys.argv[1], encoding='utf-8')]
got = [json.loads(l) for l in open(sys.argv[3], encoding='utf-8')]
key = sys.argv[2]
assert len(got) == len(want) > 3200, (len(got), len(want))
def w(r):
    return r.get('plain', r['parse']) if key == 'plain' else r[key]
bad = [i for i, (x, g) in enumerate(zip(want, got)) if g['ids'] != w(x) or g['id'] != 'd%d' % i]
assert not bad, [(i, want[i], got[i]['ids']) for i in bad[:3]]
PY
}

for name in bert-bge bert-lower bert-cased wordlevel-a wordlevel-b; do
  TOK="$D/$name.json"
  DOCS="$T/docs.jsonl"
  [ $name = bert-bge ] && DOCS="$T/docs-bge.jsonl"
  "$SLUICE" tokenize bpe -t "$TOK" "$DOCS" -o "$T/plain.tok"
  "$SLUICE" cat "$T/plain.tok" > "$T/plain.jsonl"
  check "$D/expected-$name.jsonl" plain "$T/plain.jsonl"
  [ $name = bert-bge ] && cp "$T/plain.jsonl" "$T/plain-bge.jsonl"
  "$SLUICE" tokenize bpe -t "$TOK" --special parse -@ 2 "$DOCS" -o "$T/parse.tok"
  "$SLUICE" cat "$T/parse.tok" > "$T/parse.jsonl"
  check "$D/expected-$name.jsonl" parse "$T/parse.jsonl"
  "$SLUICE" tokenize bpe -t "$TOK" --special parse --add-special-tokens "$DOCS" -o "$T/ws.tok"
  "$SLUICE" cat "$T/ws.tok" > "$T/ws.jsonl"
  check "$D/expected-$name.jsonl" with_special "$T/ws.jsonl"
  "$SLUICE" tokenize bpe -t "$TOK" -@ 2 "$DOCS" | cmp - "$T/plain.tok" || fail "$name: output depends on the thread count"

  # decoding: HF's decode of the parse ids (random id lists: test_tokenize_wordpiece)
  "$SLUICE" detokenize -t "$TOK" "$T/parse.tok" > "$T/dec.jsonl"
  python3 - "$D/expected-$name.jsonl" "$T/dec.jsonl" <<'PY' || fail "$name: decoded text differs from HF decode"
import json, sys
want = [json.loads(l)['decoded'] for l in open(sys.argv[1], encoding='utf-8')]
got = [json.loads(l)['text'] for l in open(sys.argv[2], encoding='utf-8')]
bad = [i for i, (w, g) in enumerate(zip(want, got)) if w != g]
assert len(got) == len(want) and not bad, [(i, want[i], got[i]) for i in bad[:3]]
PY
done

# --add-special-tokens on a SentencePiece-style file: its TemplateProcessing adds <s>
"$SLUICE" tokenize bpe -t "$D/v1-small-norm.json" --special parse --add-special-tokens "$T/docs.jsonl" -o "$T/v1.tok"
"$SLUICE" cat "$T/v1.tok" > "$T/v1.jsonl"
python3 - "$D/expected-v1-small-norm-special.jsonl" "$T/v1.jsonl" <<'PY' || fail "v1-small-norm with special tokens differs from HF"
import json, sys
want = [json.loads(l)['with_special'] for l in open(sys.argv[1], encoding='utf-8')]
got = [json.loads(l)['ids'] for l in open(sys.argv[2], encoding='utf-8')]
bad = [i for i, (w, g) in enumerate(zip(want, got)) if w != g]
assert len(got) == len(want) and not bad, bad[:5]
PY

# bert-bge: the last 47 documents are llama.cpp's inputs; its ids are HF's (checked above) and llama.cpp's
python3 - "$D/llama.cpp-ggml-vocab-bert-bge.gguf.out" "$T/plain-bge.jsonl" <<'PY' || fail "bert-bge ids differ from llama.cpp's vectors"
import json, sys
want = [[int(x) for x in l.split()] for l in open(sys.argv[1], encoding='utf-8').read().split('\n')]
got = [json.loads(l)['ids'] for l in open(sys.argv[2], encoding='utf-8')][-len(want):]
assert len(want) == 47 and got == want, [i for i, (w, g) in enumerate(zip(want, got)) if w != g]
PY

# header: the BERT special ids, the name
printf '{"id":"a","text":"Hello world"}\n' > "$T/one.jsonl"
"$SLUICE" tokenize bpe -t "$D/bert-lower.json" --append-eos "$T/one.jsonl" -o "$T/one.tok"
"$SLUICE" cat --header "$T/one.tok" | grep -q '"tokenizer":"bpe:bert-lower.json"' || fail "tokenizer name in the header"

# refused: one line naming the file and the component, no output
refuse() { # FILE-SUFFIX MESSAGE SED-EXPR
  sed "$3" "$D/bert-lower.json" > "$T/bad-$1.json"
  expect_fail 1 "bad-$1.json: $2" -- "$SLUICE" tokenize bpe -t "$T/bad-$1.json" "$T/one.jsonl" -o "$T/z.tok"
  no_file "$T/z.tok"
  [ "$(wc -l < "$T/err")" -eq 1 ] || fail "more than one line: $(cat "$T/err")"
}
refuse norm "normalizer 'Precompiledx' is not supported" 's/"type": "BertNormalizer"/"type": "Precompiledx"/'
refuse pre "pre_tokenizer 'Metaspacex' is not supported" 's/"type": "BertPreTokenizer"/"type": "Metaspacex"/'
refuse post "post_processor 'Foo' is not supported" '0,/"type": "TemplateProcessing"/s//"type": "Foo"/'
refuse dec "decoder 'CTC' is not supported" '0,/"type": "WordPiece"/s//"type": "CTC"/'
sed 's/"type": "BertPreTokenizer"/"type": "Split", "pattern": {"Regex": "(a"}, "behavior": "Isolated", "invert": false/' \
  "$D/bert-lower.json" > "$T/bad-rx.json"
expect_fail 1 "bad-rx.json: pre_tokenizer Split: invalid regex at offset 2" -- "$SLUICE" tokenize bpe -t "$T/bad-rx.json" "$T/one.jsonl" -o "$T/z.tok"
# Oniguruma syntax PCRE2 cannot say is refused, not run differently
sed 's/"type": "BertPreTokenizer"/"type": "Split", "pattern": {"Regex": "[a-z\&\&[^aeiou]]"}, "behavior": "Isolated", "invert": false/' \
  "$D/bert-lower.json" > "$T/bad-and.json"
expect_fail 1 "bad-and.json: pre_tokenizer Split: regex at offset 4: class intersection .&&. is not supported" -- \
  "$SLUICE" tokenize bpe -t "$T/bad-and.json" "$T/one.jsonl" -o "$T/z.tok"
sed 's/"type": "BertPreTokenizer"/"type": "Split", "pattern": {"Regex": "[[:alpha:]]"}, "behavior": "Isolated", "invert": false/' \
  "$D/bert-lower.json" > "$T/bad-posix.json"
expect_fail 1 "bad-posix.json: pre_tokenizer Split: regex at offset 1: a nested or POSIX" -- \
  "$SLUICE" tokenize bpe -t "$T/bad-posix.json" "$T/one.jsonl" -o "$T/z.tok"
# a GPT-2 vocab.json has no post-processor to add
expect_fail 1 "adding special tokens needs a tokenizer.json" -- "$SLUICE" tokenize bpe -t "$DATA/bpe/gpt2/vocab.json" --add-special-tokens "$T/one.jsonl" -o "$T/z.tok"

# --add-special-tokens on a byte-level BPE file: Llama-3's TemplateProcessing adds <|begin_of_text|>
python3 -c "
import json, sys
for i, l in enumerate(open(sys.argv[1], encoding='utf-8')):
    print(json.dumps({'id': 'd%d' % i, 'text': json.loads(l)['text']}))" "$DATA/bpe/corpus.jsonl" > "$T/bdocs.jsonl"
"$SLUICE" tokenize bpe -t "$DATA/bpe/llama3-tiny-tokenizer.json" --special parse --add-special-tokens "$T/bdocs.jsonl" -o "$T/l3.tok"
"$SLUICE" cat "$T/l3.tok" > "$T/l3.jsonl"
python3 - "$D/expected-llama3-tiny-special.jsonl" "$T/l3.jsonl" <<'PY' || fail "llama3-tiny with special tokens differs from HF"
import json, sys
want = [json.loads(l)['with_special'] for l in open(sys.argv[1], encoding='utf-8')]
got = [json.loads(l)['ids'] for l in open(sys.argv[2], encoding='utf-8')]
bad = [i for i, (w, g) in enumerate(zip(want, got)) if w != g]
assert len(got) == len(want) > 100 and not bad, bad[:5]
PY

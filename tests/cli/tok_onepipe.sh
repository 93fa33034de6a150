# The shared pre-tokenizers (tokenize/pre_tokenizers/pretokenizer.c, Metaspace included) and
# post-processors (postproc.c) in the SentencePiece-style BPE, Unigram and
# WordPiece/WordLevel families (tests/data/onepipe/make_fixtures.py: small
# models trained by HF `tokenizers` 0.23.3): Unigram under WhitespaceSplit +
# Punctuation + Digits, Split + Metaspace "first", Whitespace +
# BertPreTokenizer; SentencePiece-style BPE (byte_fallback) under Split +
# Metaspace, WhitespaceSplit + Metaspace with continuing_subword_prefix and
# fuse_unk, Digits + Punctuation + Metaspace with end_of_word_suffix;
# WordPiece and WordLevel under Metaspace; BertProcessing, RobertaProcessing,
# TemplateProcessing and Sequence [ByteLevel, TemplateProcessing]. Ids (plain
# and --add-special-tokens) and decoded text equal HF's over the texts of
# tests/data/tiktoken/texts.jsonl (but its random strings) and
# tests/data/tok/wp-texts.jsonl, for any thread count; a pre-tokenizer or
# post-processor sluice lacks is refused with one line naming it.
. "$SRC/tests/cli/lib.sh"
D="$DATA/onepipe"

python3 - "$DATA/tok/texts.jsonl" "$DATA/tiktoken/texts.jsonl" "$DATA/tok/wp-texts.jsonl" > "$T/docs.jsonl" <<'PY'
import json, sys
n_tok = sum(1 for _ in open(sys.argv[1], encoding='utf-8'))
t = [json.loads(l)['text'] for l in open(sys.argv[2], encoding='utf-8')]
t = t[:n_tok + 35] + [json.loads(l)['text'] for l in open(sys.argv[3], encoding='utf-8')]
for i, x in enumerate(t):
    print(json.dumps({'id': 'd%d' % i, 'text': x}))
PY
python3 -c "
import gzip, sys
sys.stdout.write(gzip.open(sys.argv[1], 'rt', encoding='utf-8').read())" "$D/expected.jsonl.gz" > "$T/expected.jsonl"

for spec in uni-punct:unigram uni-split:unigram uni-ws:unigram sp-split:bpe sp-prefix:bpe sp-suffix:bpe \
  wp-meta:bpe wl-meta:bpe; do
  name=${spec%%:*} fam=${spec#*:}
  TOK="$D/$name.json"
  "$SLUICE" tokenize bpe -q -t "$TOK" --special parse "$T/docs.jsonl" -o "$T/$name.tok"
  "$SLUICE" tokenize bpe -q -t "$TOK" --special parse -@ 3 "$T/docs.jsonl" | cmp - "$T/$name.tok" ||
    fail "$name: output depends on the thread count"
  "$SLUICE" cat --header "$T/$name.tok" | grep -q "\"tokenizer\":\"$fam:$name.json\"" ||
    fail "$name: not loaded by the $fam family: $("$SLUICE" cat --header "$T/$name.tok")"
  "$SLUICE" tokenize bpe -q -t "$TOK" --special parse --add-special-tokens "$T/docs.jsonl" -o "$T/$name.ws.tok"
  "$SLUICE" cat "$T/$name.tok" > "$T/$name.jsonl"
  "$SLUICE" cat "$T/$name.ws.tok" > "$T/$name.ws.jsonl"
  "$SLUICE" detokenize -q -t "$TOK" "$T/$name.tok" > "$T/$name.dec.jsonl"
  python3 - "$name" "$T/expected.jsonl" "$T/$name.jsonl" "$T/$name.ws.jsonl" "$T/$name.dec.jsonl" "$T/docs.jsonl" <<'PY' || fail "$name: ids or decoded text differ from HF"
import json, sys
name = sys.argv[1]
want = [json.loads(l) for l in open(sys.argv[2], encoding='utf-8')]
got, ws, dec, texts = ([json.loads(l) for l in open(f, encoding='utf-8')] for f in sys.argv[3:7])
assert len(want) == len(got) == len(ws) == len(dec) == len(texts) == 3305, (len(want), len(got), len(dec))
assert all(g['id'] == 'd%d' % i for i, g in enumerate(got))
bad = [i for i, (w, g) in enumerate(zip(want, got)) if w[name] != g['ids']]
assert not bad, ('ids', [(i, texts[i]['text'][:80], want[i][name][:20], got[i]['ids'][:20]) for i in bad[:3]], len(bad))
bad = [i for i, (w, g) in enumerate(zip(want, ws)) if w[name + '.ws'] != g['ids']]
assert not bad, ('ids with special tokens', [(i, want[i][name + '.ws'][:20], ws[i]['ids'][:20]) for i in bad[:3]])
bad = [i for i, (w, d, t) in enumerate(zip(want, dec, texts)) if w.get(name + '.dec', t['text']) != d['text']]
assert not bad, ('decode', [(i, want[i].get(name + '.dec', texts[i]['text'])[:80], dec[i]['text'][:80]) for i in bad[:3]], len(bad))
PY
done

# a pre-tokenizer or post-processor sluice does not run: one line naming it, no output
printf '{"id":"a","text":"Hello world"}\n' > "$T/one.jsonl"
sed 's/"type":"Punctuation"/"type":"UnicodeScripts"/' "$D/uni-punct.json" > "$T/scripts.json"
expect_fail 1 "scripts.json: pre_tokenizer 'UnicodeScripts' is not supported" -- "$SLUICE" tokenize bpe -t "$T/scripts.json" "$T/one.jsonl" -o "$T/z.tok"
no_file "$T/z.tok"
[ "$(wc -l < "$T/err")" -eq 1 ] || fail "more than one line: $(cat "$T/err")"
sed 's/"type":"WhitespaceSplit"/"type":"CharDelimiterSplit","delimiter":"x"/' "$D/sp-prefix.json" > "$T/cds.json"
expect_fail 1 "cds.json: pre_tokenizer 'CharDelimiterSplit' is not supported" -- "$SLUICE" tokenize bpe -t "$T/cds.json" "$T/one.jsonl" -o "$T/z.tok"
no_file "$T/z.tok"
sed 's/"type":"BertProcessing"/"type":"FancyProcessing"/' "$D/wp-meta.json" > "$T/pp.json"
expect_fail 1 "pp.json: post_processor 'FancyProcessing' is not supported" -- "$SLUICE" tokenize bpe -t "$T/pp.json" "$T/one.jsonl" -o "$T/z.tok"
no_file "$T/z.tok"
sed 's/"type":"RobertaProcessing"/"type":"FancyProcessing"/' "$D/uni-ws.json" > "$T/pp2.json"
expect_fail 1 "pp2.json: post_processor 'FancyProcessing' is not supported" -- "$SLUICE" tokenize bpe -t "$T/pp2.json" "$T/one.jsonl" -o "$T/z.tok"
sed 's/"type":"BertProcessing"/"type":"FancyProcessing"/' "$D/sp-suffix.json" > "$T/pp3.json"
expect_fail 1 "pp3.json: post_processor 'FancyProcessing' is not supported" -- "$SLUICE" tokenize bpe -t "$T/pp3.json" "$T/one.jsonl" -o "$T/z.tok"

# sluice tokenize bpe with byte-level BPE tokenizer.json files whose
# pre-tokenizer is none of the fast forms (tests/data/bpepipe/make_fixtures.py:
# small BPEs trained by HF `tokenizers` 0.23.3 under Whitespace, Split with
# every behavior and invert, Punctuation, Digits, steps after ByteLevel, ByteLevel
# with and without its regex and prefix space; continuing_subword_prefix and
# end_of_word_suffix; unk_token with and without fuse_unk; BPEDecoder and a
# decoder Sequence; RobertaProcessing), and two files that
# transformers' TikTokenConverter made with Mistral's tekken pattern and with
# o200k's (the fast scanners): ids and decoded text equal HF's over the texts of
# tests/data/tiktoken/texts.jsonl and tests/data/tok/wp-texts.jsonl, for every
# thread count; components sluice does not have are refused by name.
. "$SRC/tests/cli/lib.sh"
D="$DATA/bpepipe"

python3 -c "
import json, sys
n = 0
for p in sys.argv[1:]:
    for l in open(p, encoding='utf-8'):
        print(json.dumps({'id': 'd%d' % n, 'text': json.loads(l)['text']}))
        n += 1" "$DATA/tiktoken/texts.jsonl" "$DATA/tok/wp-texts.jsonl" > "$T/docs.jsonl"
python3 -c "
import gzip, sys
sys.stdout.write(gzip.open(sys.argv[1], 'rt', encoding='utf-8').read())" "$D/expected.jsonl.gz" > "$T/expected.jsonl"

for name in ws split-a split-b punct-digits after clip prefix affix suffix-dec tekken o200k; do
  TOK="$D/$name.json"
  "$SLUICE" tokenize bpe -q -t "$TOK" --special parse "$T/docs.jsonl" -o "$T/$name.tok"
  "$SLUICE" tokenize bpe -q -t "$TOK" --special parse -@ 3 "$T/docs.jsonl" | cmp - "$T/$name.tok" ||
    fail "$name: output depends on the thread count"
  "$SLUICE" cat "$T/$name.tok" > "$T/$name.jsonl"
  "$SLUICE" detokenize -q -t "$TOK" "$T/$name.tok" > "$T/$name.dec.jsonl"
  python3 - "$name" "$T/expected.jsonl" "$T/$name.jsonl" "$T/$name.dec.jsonl" "$T/docs.jsonl" <<'PY' || fail "$name: ids or decoded text differ from HF"
import json, sys
name = sys.argv[1]
want = [json.loads(l) for l in open(sys.argv[2], encoding='utf-8')]
got = [json.loads(l) for l in open(sys.argv[3], encoding='utf-8')]
dec = [json.loads(l)['text'] for l in open(sys.argv[4], encoding='utf-8')]
texts = [json.loads(l)['text'] for l in open(sys.argv[5], encoding='utf-8')]
assert len(want) == len(got) == len(dec) == len(texts) == 4805, (len(want), len(got), len(dec))
assert all(g['id'] == 'd%d' % i for i, g in enumerate(got))
n = sum(1 for w in want if name in w)
assert n >= (4805 if name in ('tekken', 'o200k') else 3305), n
bad = [i for i, (w, g) in enumerate(zip(want, got)) if name in w and w[name] != g['ids']]
assert not bad, ('ids', [(i, texts[i], want[i][name], got[i]['ids']) for i in bad[:3]])
bad = [i for i, (w, d, t) in enumerate(zip(want, dec, texts)) if name in w and w.get(name + '.dec', t) != d]
assert not bad, ('decode', [(i, want[i].get(name + '.dec', texts[i]), dec[i]) for i in bad[:3]])
PY
done

# --add-special-tokens: clip.json's RobertaProcessing (HF's add_special_tokens=True)
"$SLUICE" tokenize bpe -q -t "$D/clip.json" --special parse --add-special-tokens "$T/docs.jsonl" | "$SLUICE" cat > "$T/ws.jsonl"
python3 - "$T/expected.jsonl" "$T/ws.jsonl" <<'PY' || fail "clip: ids with special tokens differ from HF"
import json, sys
want = [json.loads(l) for l in open(sys.argv[1], encoding='utf-8')]
got = [json.loads(l)['ids'] for l in open(sys.argv[2], encoding='utf-8')]
n = sum(1 for w in want if 'clip.ws' in w)
bad = [i for i, (w, g) in enumerate(zip(want, got)) if 'clip.ws' in w and w['clip.ws'] != g]
assert len(got) == len(want) and n >= 3305 and not bad, (n, bad[:3])
PY

# tekken's Split and o200k's are the fast scanners' (which tests/cli/tok_tiktoken.sh
# checks against tiktoken); forced to PCRE2 they must give the same ids here
for name in tekken o200k; do
  "$SLUICE" tokenize bpe -q -t "$D/$name.json" --special parse --pretokenizer pcre2 "$T/docs.jsonl" -o "$T/p.tok"
  "$SLUICE" cat "$T/p.tok" > "$T/p.jsonl"
  python3 - "$T/p.jsonl" "$T/$name.jsonl" "$T/docs.jsonl" <<'PY' || fail "$name: PCRE2 and the scanner differ"
import json, sys, unicodedata
a = [json.loads(l)['ids'] for l in open(sys.argv[1], encoding='utf-8')]
b = [json.loads(l)['ids'] for l in open(sys.argv[2], encoding='utf-8')]
t = [json.loads(l)['text'] for l in open(sys.argv[3], encoding='utf-8')]
# PCRE2 10.42 knows Unicode 14, as Debian 12's Python: texts with characters
# unassigned there may differ
assert unicodedata.unidata_version.startswith('14.'), unicodedata.unidata_version
old = [i for i, x in enumerate(t) if all(unicodedata.category(c) != 'Cn' for c in x)]
bad = [i for i in old if a[i] != b[i]]
assert len(old) > 4000 and not bad, (len(old), bad[:3])
PY
done

# refused: one line naming the file and the component, no output
printf '{"id":"a","text":"Hello world 123"}\n' > "$T/one.jsonl"
refuse() { # FILE-SUFFIX MESSAGE PYTHON-EDIT (of d, the tokenizer.json of split-a)
  python3 - "$D/split-a.json" "$T/bad-$1.json" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1], encoding='utf-8'))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], 'w', encoding='utf-8'))
PY
  expect_fail 1 "bad-$1.json: $2" -- "$SLUICE" tokenize bpe -t "$T/bad-$1.json" "$T/one.jsonl" -o "$T/z.tok"
  no_file "$T/z.tok"
  [ "$(wc -l < "$T/err")" -eq 1 ] || fail "more than one line: $(cat "$T/err")"
}
P='d["pre_tokenizer"]["pretokenizers"]'
refuse meta "pre_tokenizer 'Metaspace' is not supported with byte-level BPE" "$P.insert(0, {'type': 'Metaspace', 'replacement': '_'})"
refuse scripts "pre_tokenizer 'UnicodeScripts' is not supported" "$P.insert(1, {'type': 'UnicodeScripts'})"
refuse nobl "pre_tokenizer Sequence has no ByteLevel step" "$P.pop()"
refuse twobl "pre_tokenizer: more than one ByteLevel step is not supported" "$P.append($P[-1])"
refuse beh "pre_tokenizer Split: behavior 'Merged' is not one of" "$P[0]['behavior'] = 'Merged'"
refuse rx "pre_tokenizer Split: invalid regex at offset 2" "$P[0]['pattern'] = {'Regex': '(a'}"
refuse dropout "BPE dropout is not supported" "d['model']['dropout'] = 0.5"
refuse dec "decoder 'CTC' is not supported" "d['decoder'] = {'type': 'CTC'}"
refuse prefix "?merge 0: merge token 'Ġ' is shorter than the continuing_subword_prefix" "d['model']['continuing_subword_prefix'] = '#####'"

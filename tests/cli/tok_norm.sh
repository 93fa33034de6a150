# The one normalizer engine (tokenize/normalizers/normalize.c) in every tokenizer.json
# family: Unigram (uni-*), SentencePiece-style BPE (sp-*), byte-level BPE
# (bl-*) and WordPiece (wp-*) files with NFC, NFD, NFKC, NFKD, Lowercase,
# Strip, StripAccents, Replace (string and regex), Prepend, Precompiled (a
# small charsmap SentencePiece built from rules.tsv) and BertNormalizer in
# Sequences, some
# before a Metaspace with prepend_scheme "first" and texts whose start a
# normalizer removes: ids (special tokens parsed and plain) and decoded text
# equal HF tokenizers 0.23.3's (tests/data/norm/make_fixtures.py), for any
# thread count. A normalizer sluice lacks is refused with one line naming it.
. "$SRC/tests/cli/lib.sh"
D="$DATA/norm"

python3 - "$DATA/spm/texts.jsonl" "$DATA/tok/wp-texts.jsonl" "$D/extra-texts.jsonl" > "$T/docs.jsonl" <<'PY'
import json, sys
i = 0
for f in sys.argv[1:]:
    for l in open(f, encoding='utf-8'):
        print(json.dumps({'id': 'd%d' % i, 'text': json.loads(l)['text']}))
        i += 1
PY

check() { # NAME HEADER-PREFIX (unigram; the BPE and WordPiece families write bpe)
  local tok="$D/$1.json" want="$D/expected-$1.jsonl"
  "$SLUICE" tokenize bpe -t "$tok" --special parse "$T/docs.jsonl" -o "$T/parse.tok"
  "$SLUICE" tokenize bpe -t "$tok" --special parse -@ 2 "$T/docs.jsonl" | cmp - "$T/parse.tok" ||
    fail "$1: output depends on the thread count"
  "$SLUICE" tokenize bpe -t "$tok" "$T/docs.jsonl" -o "$T/plain.tok"
  "$SLUICE" cat --header "$T/parse.tok" | grep -q "\"tokenizer\":\"$2:$1.json\"" ||
    fail "$1: not loaded by the $2 family: $("$SLUICE" cat --header "$T/parse.tok")"
  "$SLUICE" cat "$T/parse.tok" > "$T/parse.jsonl"
  "$SLUICE" cat "$T/plain.tok" > "$T/plain.jsonl"
  "$SLUICE" detokenize -t "$tok" "$T/parse.tok" > "$T/dec.jsonl"
  python3 - "$want" "$T/parse.jsonl" "$T/plain.jsonl" "$T/dec.jsonl" <<'PY' || fail "$1: ids or decoded text differ from HF"
import json, sys
want = [json.loads(l) for l in open(sys.argv[1], encoding='utf-8')]
parse, plain, dec = ([json.loads(l) for l in open(f, encoding='utf-8')] for f in sys.argv[2:5])
assert len(want) == len(parse) == len(plain) == len(dec) > 1290, (len(want), len(parse))
bad = [i for i, (w, g) in enumerate(zip(want, parse)) if g['ids'] != w['parse'] or g['id'] != 'd%d' % i]
assert not bad, ('parse', bad[:10])
bad = [i for i, (w, g) in enumerate(zip(want, plain)) if g['ids'] != w.get('plain', w['parse'])]
assert not bad, ('plain', bad[:10])
bad = [i for i, (w, d) in enumerate(zip(want, dec)) if d['text'] != w['decoded']]
assert not bad, ('decoded', bad[:10])
PY
}
check uni-nfkd unigram
check uni-bert unigram
check sp-lower bpe
check sp-precomp bpe
check bl-precomp bpe
check wp-precomp bpe

# a normalizer sluice does not run: one line naming it, no output
printf '{"id":"a","text":"Hello world"}\n' > "$T/one.jsonl"
sed 's/"type": *"StripAccents"/"type":"Nmt"/' "$D/uni-nfkd.json" > "$T/nmt.json"
expect_fail 1 "nmt.json: normalizer 'Nmt' is not supported" -- "$SLUICE" tokenize bpe -t "$T/nmt.json" "$T/one.jsonl" -o "$T/z.tok"
no_file "$T/z.tok"
[ "$(wc -l < "$T/err")" -eq 1 ] || fail "more than one line: $(cat "$T/err")"

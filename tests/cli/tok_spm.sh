# sluice tokenize bpe with SentencePiece .model files (read directly) and a
# Unigram tokenizer.json (as transformers converts SentencePiece Unigram
# models): ids and decoded text equal the references' (sentencepiece 0.2.3 /
# HF tokenizers, fixtures made by tests/data/spm/make_fixtures.py) for any
# thread count; the header carries the .model's special ids and name; a
# truncated .model and a bad charsmap are refused with one line naming the
# file and the offset, and no output.
. "$SRC/tests/cli/lib.sh"
D="$DATA/spm"

python3 -c "
import json, sys
for i, l in enumerate(open(sys.argv[1], encoding='utf-8')):
    print(json.dumps({'id': 'd%d' % i, 'text': json.loads(l)['text']}))" "$D/texts.jsonl" > "$T/docs.jsonl"

check() { # TOKENIZER EXPECTED [tokenize options]
  local tok=$1 want=$2; shift 2
  "$SLUICE" tokenize bpe -t "$tok" "$@" "$T/docs.jsonl" -o "$T/a.tok"
  "$SLUICE" tokenize bpe -t "$tok" "$@" -@ 2 "$T/docs.jsonl" | cmp - "$T/a.tok" || fail "$tok: output depends on the thread count"
  "$SLUICE" cat "$T/a.tok" > "$T/a.jsonl"
  "$SLUICE" detokenize -t "$tok" "$T/a.tok" > "$T/dec.jsonl"
  python3 - "$want" "$T/a.jsonl" "$T/dec.jsonl" <<'PY' || fail "$tok: ids or decoded text differ from the reference"
import json, sys
want = [json.loads(l) for l in open(sys.argv[1], encoding='utf-8')]
got = [json.loads(l) for l in open(sys.argv[2], encoding='utf-8')]
dec = [json.loads(l)['text'] for l in open(sys.argv[3], encoding='utf-8')]
assert len(got) == len(want) == len(dec) > 1000, (len(got), len(want))
bad = [i for i, (w, g) in enumerate(zip(want, got)) if g['ids'] != w['ids'] or g['id'] != 'd%d' % i]
assert not bad, ('ids', bad[:10])
bad = [i for i, (w, d) in enumerate(zip(want, dec)) if d != w['decoded']]
assert not bad, ('decoded', bad[:10])
PY
}
check "$D/mistral-v1.model" "$D/expected-mistral-v1.jsonl"
check "$D/uni-bf.model" "$D/expected-uni-bf.jsonl"
check "$D/bpe-unk.model" "$D/expected-bpe-unk.jsonl"
check "$D/uni-t5.json" "$D/hf-expected-uni-t5.jsonl" --special parse

# a compressed .model (xz, zstd) is read as the file it decodes to: the same
# ids and decoded text, and the same fingerprint (of the decoded bytes)
xz -c "$D/uni-bf.model" > "$T/uni-bf.model.xz"
zstd -q -c "$D/mistral-v1.model" > "$T/mistral-v1.model.zst"
check "$T/uni-bf.model.xz" "$D/expected-uni-bf.jsonl"
check "$T/mistral-v1.model.zst" "$D/expected-mistral-v1.jsonl"
printf '{"id":"a","text":"Hello world"}\n' > "$T/one.jsonl"
for f in "$D/mistral-v1.model" "$T/mistral-v1.model.zst"; do
  "$SLUICE" tokenize bpe -t "$f" "$T/one.jsonl" | "$SLUICE" cat --header | sed -n 's/.*"fingerprint":"\([^"]*\)".*/\1/p'
done > "$T/fps"
want="sha256:$(sha256sum "$D/mistral-v1.model" | cut -d' ' -f1)"
[ "$(sort -u "$T/fps")" = "$want" ] && [ "$(wc -l < "$T/fps")" -eq 2 ] || fail "fingerprints of the .model and its .zst: $(cat "$T/fps"), want $want"
# compressed bytes that are no tokenizer, or that do not decode: one line, no output
echo hello | gzip -c > "$T/junk.gz"
expect_fail 1 "junk.gz: not a tokenizer file" -- "$SLUICE" tokenize bpe -t "$T/junk.gz" "$T/one.jsonl" -o "$T/z.tok"
no_file "$T/z.tok"
head -c 3000 "$T/uni-bf.model.xz" > "$T/cut.model.xz"
expect_fail 1 "cut.model.xz: .*(truncated|unexpected end)" -- "$SLUICE" tokenize bpe -t "$T/cut.model.xz" "$T/one.jsonl" -o "$T/z.tok"
no_file "$T/z.tok"

# header: the model's own special ids, vocab size and name (one.jsonl above)
"$SLUICE" tokenize bpe -t "$D/mistral-v1.model" --append-eos --prepend-bos "$T/one.jsonl" -o "$T/one.tok"
"$SLUICE" cat "$T/one.tok" | grep -q '"ids":\[1,22557,1526,2\]' || fail "bos/eos ids: $("$SLUICE" cat "$T/one.tok")"
"$SLUICE" cat --header "$T/one.tok" | grep -q '"vocab_size":32000,.*"eos":2,"bos":1,.*"unk":0' ||
  fail "header: $("$SLUICE" cat --header "$T/one.tok")"
"$SLUICE" cat --header "$T/one.tok" | grep -q '"tokenizer":"spm:mistral-v1.model"' || fail "tokenizer name in the header"

# refused: a truncated model, a corrupt charsmap; one line naming the file and offset, no output
head -c 5000 "$D/mistral-v1.model" > "$T/cut.model"
expect_fail 1 "cut.model: offset [0-9]+: .*runs past the end" -- "$SLUICE" tokenize bpe -t "$T/cut.model" "$T/one.jsonl" -o "$T/z.tok"
no_file "$T/z.tok"
[ "$(wc -l < "$T/err")" -eq 1 ] || fail "more than one line: $(cat "$T/err")"
python3 - "$D/uni-raw.model" "$D/uni-bf.model" "$T/bad.model" <<'PY'
import sys
# the charsmap of uni-bf.model starts after its pieces; find it by its
# normalizer spec name "nmt_nfkc" (field 1) and overwrite the trie size
data = bytearray(open(sys.argv[2], 'rb').read())
i = data.rindex(b'nmt_nfkc')
j = i + len(b'nmt_nfkc')
assert data[j] == 0x12  # field 2, length-delimited: the charsmap
k = j + 1
while data[k] & 0x80:
    k += 1
k += 1
data[k:k + 4] = (0x7ffffff0).to_bytes(4, 'little')
open(sys.argv[3], 'wb').write(data)
PY
expect_fail 1 "bad.model: offset [0-9]+: charsmap trie size" -- "$SLUICE" tokenize bpe -t "$T/bad.model" "$T/one.jsonl" -o "$T/z.tok"
no_file "$T/z.tok"
# --add-special-tokens: a .model has no post-processor (SentencePiece adds
# BOS/EOS only when asked, as --prepend-bos/--append-eos do): a one-line error
# naming the file, not a JSON syntax error from reading it as tokenizer.json
expect_fail 1 "mistral-v1.model: a SentencePiece .model has no post-processor.*--prepend-bos" -- "$SLUICE" tokenize bpe -t "$D/mistral-v1.model" --add-special-tokens "$T/one.jsonl" -o "$T/z.tok"
no_file "$T/z.tok"

# XLM-R's 250k-piece Unigram (tests/data/xlmr, rebuilt from the vocabulary
# llama-cpp-python ships; made by make_fixtures.py there) as a SentencePiece
# .model and as a tokenizer.json (Precompiled + WhitespaceSplit + Metaspace):
# each loads in well under the seconds the old double-array layout took
# (minutes); the .model's ids equal sentencepiece 0.2.3's on every text,
# 220k characters of base64 included (its float path scores with their reset
# past 1e5); the tokenizer.json's ids equal HF tokenizers 0.23.3's, whose
# Precompiled normalizer works per Unicode 17.0 grapheme cluster (texts with
# the marks of Unicode 15.0 to 17.0 after characters the charsmap maps).
. "$SRC/tests/cli/lib.sh"
D="$DATA/xlmr"
xz -dc "$D/xlmr.model.xz" > "$T/xlmr.model"
xz -dc "$D/xlmr.json.xz" > "$T/xlmr.json"
xz -dc "$D/expected.jsonl.xz" > "$T/expected.jsonl"
python3 -c "
import json, sys
for i, l in enumerate(open(sys.argv[1], encoding='utf-8')):
    print(json.dumps({'id': 'd%d' % i, 'text': json.loads(l)['text']}))" "$T/expected.jsonl" > "$T/docs.jsonl"

# loading: CPU seconds of a run on one short document (the bound is loose
# for slow machines; the layout used to take ~225 s)
printf '{"id":"a","text":"hello world"}\n' > "$T/one.jsonl"
for f in xlmr.model xlmr.json; do
  /usr/bin/time -f '%U %S' -o "$T/time" "$SLUICE" tokenize text -t "$T/$f" -@ 1 "$T/one.jsonl" -o /dev/null
  awk '{ exit !($1 + $2 < 10) }' "$T/time" || fail "loading $f took $(cat "$T/time") s of CPU"
done

check() { # KEY OUT.jsonl
  python3 - "$T/expected.jsonl" "$2" "$1" <<'PY' || fail "ids of $2 differ from $1's"
import json, sys
want = [json.loads(l) for l in open(sys.argv[1], encoding='utf-8')]
got = [json.loads(l) for l in open(sys.argv[2], encoding='utf-8')]
key = sys.argv[3]
assert len(got) == len(want) > 20, (len(got), len(want))
assert max(len(w['text']) for w in want) >= 200000
bad = [(i, next((j for j, (a, b) in enumerate(zip(w[key], g['ids'])) if a != b), None))
       for i, (w, g) in enumerate(zip(want, got)) if w[key] != g['ids'] or g['id'] != 'd%d' % i]
assert not bad, ('documents, first differing token', bad[:10])
PY
}
"$SLUICE" tokenize text -t "$T/xlmr.model" -@ 2 "$T/docs.jsonl" | "$SLUICE" cat > "$T/spm.jsonl"
check spm "$T/spm.jsonl"
"$SLUICE" tokenize text -t "$T/xlmr.json" -@ 2 "$T/docs.jsonl" | "$SLUICE" cat > "$T/hf.jsonl"
check hf "$T/hf.jsonl"

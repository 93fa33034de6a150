# The SentencePiece BPE families on source-code-like text, where they cut
# stretches most (tokenize/models/joins.h: indentation runs, identifiers joined by
# punctuation, runs of one character, mixed scripts): ids equal the
# sentencepiece library's for the .model file and HF tokenizers' for the
# tokenizer.json (tests/data/spm/code.jsonl, made by make_code_fixture.py),
# on 1 and 2 threads, with the documents twice over so the second pass comes
# from the stretch cache.
. "$SRC/tests/cli/lib.sh"
FIX="$DATA/spm/code.jsonl"
python3 -c "
import json, sys
docs = [json.loads(l)['text'] for l in open(sys.argv[1], encoding='utf-8')]
for r in range(2):
    for i, t in enumerate(docs):
        print(json.dumps({'id': '%d.%d' % (r, i), 'text': t}))" "$FIX" > "$T/docs.jsonl"
for pair in "spm/mistral-v1.model spm" "tok/mistral-v1.json hf"; do
  set -- $pair
  for th in 1 2; do
    "$SLUICE" tokenize text -q -@ $th -t "$DATA/$1" "$T/docs.jsonl" -o "$T/out.tok"
    "$SLUICE" cat "$T/out.tok" > "$T/out.jsonl"
    python3 - "$FIX" "$T/out.jsonl" "$2" <<'PY' || fail "$1 -@ $th: ids differ from the reference's"
import json, sys
want = [json.loads(l)[sys.argv[3]] for l in open(sys.argv[1], encoding='utf-8')]
got = [json.loads(l)['ids'] for l in open(sys.argv[2], encoding='utf-8')]
assert len(want) == 40 and len(got) == 80, (len(want), len(got))
bad = [i for i, g in enumerate(got) if g != want[i % 40]]
assert not bad, bad[:10]
PY
  done
done

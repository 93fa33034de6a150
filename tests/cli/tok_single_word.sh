# Added tokens with single_word, lstrip and rstrip next to every kind of
# character HF's tests for those flags look at (the Rust regex \w and \s of
# tokenizers 0.23.3, Unicode 16.0): letters, marks, digits, connector
# punctuation, join controls, white space, and characters first assigned in
# Unicode 14.0-16.0, which an older system ICU does not know. Ids (special
# tokens parsed and plain) equal HF's for all 12 tokenizer.json fixtures with
# such tokens (tests/data/tok/make_single_word.py).
. "$SRC/tests/cli/lib.sh"
W="$DATA/tok/expected-single-word.jsonl"

python3 - "$W" "$T" <<'PY'
import json, sys
by = {}
for l in open(sys.argv[1], encoding='utf-8'):
    r = json.loads(l)
    by.setdefault(r['file'], []).append(r)
with open(sys.argv[2] + '/files', 'w') as lst:
    for n, (f, rows) in enumerate(sorted(by.items())):
        print(f, n, file=lst)
        with open('%s/docs-%d.jsonl' % (sys.argv[2], n), 'w', encoding='utf-8') as out:
            for i, r in enumerate(rows):
                out.write(json.dumps({'id': 'd%d' % i, 'text': r['text']}, ensure_ascii=False) + '\n')
PY
[ "$(wc -l < "$T/files")" -eq 12 ] || fail "expected 12 tokenizer files in $W"

while read -r f n; do
  "$SLUICE" tokenize bpe -q -t "$DATA/$f" --special parse "$T/docs-$n.jsonl" -o "$T/parse-$n.tok"
  "$SLUICE" tokenize bpe -q -t "$DATA/$f" "$T/docs-$n.jsonl" -o "$T/plain-$n.tok"
  "$SLUICE" cat "$T/parse-$n.tok" > "$T/parse-$n.jsonl"
  "$SLUICE" cat "$T/plain-$n.tok" > "$T/plain-$n.jsonl"
  python3 - "$W" "$f" "$T/parse-$n.jsonl" "$T/plain-$n.jsonl" <<'PY' || fail "$f: ids differ from HF"
import json, sys
want = [r for r in map(json.loads, open(sys.argv[1], encoding='utf-8')) if r['file'] == sys.argv[2]]
parse, plain = ([json.loads(l) for l in open(f, encoding='utf-8')] for f in sys.argv[3:5])
assert len(want) == len(parse) == len(plain) > 300, (len(want), len(parse), len(plain))
for mode, got in (('parse', parse), ('plain', plain)):
    bad = [i for i, (w, g) in enumerate(zip(want, got)) if g['ids'] != w.get(mode, w['parse'])]
    for i in bad[:5]:
        print('%s %s: %r: sluice %s, HF %s' % (sys.argv[2], mode, want[i]['text'], got[i]['ids'],
                                             want[i].get(mode, want[i]['parse'])), file=sys.stderr)
    assert not bad, (mode, len(bad))
PY
done < "$T/files"

# sluice classify: the labels and probabilities of fastText
# models equal the Python fasttext package's predict(k) (0.9.3; fixtures made
# by tests/data/classify/make_fixtures.py): lid.176.ftz (hierarchical
# softmax, quantized and pruned) and small topic models trained there (.bin
# and product-quantized .ftz; hs, softmax, one-vs-all, negative sampling;
# a pruned model whose kept-bucket bitmap is smaller than its 100,000 buckets;
# character n-grams, word bigrams and trigrams), with datatrove's two text
# preparations, on web-like, multilingual and adversarial documents. Labels
# identical and in the same order, probabilities within 1e-6. The output
# keeps each document's fields, does not depend on -@ or on --part, and
# `filter --field lang --in` keeps the documents whose label is listed. Bad
# model files and options are refused with one line.
. "$SRC/tests/cli/lib.sh"
D="$DATA/classify"

# every run of the fixture: model, preparation, k
python3 - "$D/expected.jsonl" > "$T/runs" <<'PY'
import json, sys
seen = []
for line in open(sys.argv[1], encoding="utf-8"):
    o = json.loads(line)
    r = (o["model"], o["prepare"], o["k"])
    if r not in seen:
        seen.append(r)
for m, p, k in seen:
    print(m, p, "all" if k == -1 else k, k)
PY
[ "$(wc -l < "$T/runs")" -ge 9 ] || fail "fixture runs: $(cat "$T/runs")"
while read -r model prep karg k; do
  "$SLUICE" classify -q -m "$D/$model" --prepare "$prep" -k "$karg" --field-prefix ft "$D/corpus.jsonl" -o "$T/out.jsonl"
  python3 - "$D/expected.jsonl" "$T/out.jsonl" "$model" "$prep" "$k" "$D/corpus.jsonl" <<'PY' || fail "$model $prep k=$karg differs from fasttext's predict"
import json, sys
exp_path, out_path, model, prep, k, corpus = sys.argv[1:7]
want = [o for o in map(json.loads, open(exp_path, encoding="utf-8"))
        if o["model"] == model and o["prepare"] == prep and o["k"] == int(k)]
got = [json.loads(l) for l in open(out_path, encoding="utf-8")]
src = [json.loads(l.decode("utf-8", "replace")) for l in open(corpus, "rb")]
assert len(got) == len(want) == len(src) > 100, (len(got), len(want), len(src))
strip = lambda s: s[len("__label__"):] if s.startswith("__label__") else s
worst = 0.0
for w, g, s in zip(want, got, src):
    assert g["id"] == w["id"] == s["id"], (g["id"], w["id"])
    labels = [strip(x) for x in w["labels"]]
    if int(k) == 1:
        glabels, gprobs = ([g["ft"]], [g["ft_score"]]) if g["ft"] is not None else ([], [])
    else:
        glabels, gprobs = g["ft_labels"], g["ft_scores"]
        assert g["ft"] == (labels[0] if labels else None) and g["ft_score"] == (gprobs[0] if gprobs else None), g["id"]
    assert glabels == labels, (g["id"], glabels, labels)
    for a, b in zip(gprobs, w["probs"]):
        worst = max(worst, abs(a - b))
    assert all(abs(a - b) <= 1e-6 for a, b in zip(gprobs, w["probs"])), (g["id"], gprobs, w["probs"])
    # the document's own fields travel along
    for key, v in s.items():
        if key != "text" and not key.startswith("ft"):
            assert g[key] == v, (g["id"], key)
print(model, prep, k, "documents", len(got), "max |dp|", worst)
PY
done < "$T/runs"

# fewer than k labels do come back (hierarchical softmax prunes below 1e-5),
# and probabilities above 1 (p + 1e-5) are among the expected values
python3 - "$D/expected.jsonl" <<'PY' || fail "the fixture lacks pruned or > 1 probabilities"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
assert any(0 < len(o["labels"]) < 5 and o["k"] == 5 for o in rows), "no pruned prediction"
assert any(p > 1 for o in rows for p in o["probs"]), "no probability above 1"
PY

# the default prefix replaces input fields of the same names; the text is the input's
"$SLUICE" classify -q -m "$D/lid.176.ftz" -k 2 "$D/corpus.jsonl" -o "$T/lid.jsonl"
python3 - "$T/lid.jsonl" "$D/corpus.jsonl" <<'PY' || fail "fields of the output"
import json, re, sys
got = {o["id"]: o for o in map(json.loads, open(sys.argv[1], encoding="utf-8"))}
src = [json.loads(l.decode("utf-8", "replace")) for l in open(sys.argv[2], "rb")]
o = got["has-lang"]
assert o["lang"] == "de" and o["lang_score"] != 9 and list(o).count("lang") == 1, o
assert o["lang_labels"][0] == "de" and len(o["lang_scores"]) == 2, o
for s in src:
    assert got[s["id"]]["text"] == re.sub("[\ud800-\udfff]", "\ufffd", s["text"]), s["id"]
assert got[12345]["meta"] == {"a": [1, 2.5, None, True]}
PY

# the output does not depend on the thread count nor on --part
"$SLUICE" classify -q -m "$D/topic-hs.ftz" -k 3 -@ 1 "$D/corpus.jsonl" -o "$T/t1.jsonl"
"$SLUICE" classify -q -m "$D/topic-hs.ftz" -k 3 -@ 2 "$D/corpus.jsonl" -o "$T/t2.jsonl"
cmp "$T/t1.jsonl" "$T/t2.jsonl" || fail "output depends on -@"
: > "$T/parts.jsonl"
for r in 0 1 2; do
  "$SLUICE" classify -q -m "$D/topic-hs.ftz" -k 3 --part $r/3 "$D/corpus.jsonl" >> "$T/parts.jsonl"
done
cmp "$T/t1.jsonl" "$T/parts.jsonl" || fail "--part 0..2/3 concatenated differ from one run"
# standard input, compressed input
zstd -q -c "$D/corpus.jsonl" | "$SLUICE" classify -q -m "$D/topic-hs.ftz" -k 3 | cmp - "$T/t1.jsonl" || fail "stdin (zstd)"

# filter: categorical keep on the labels, numeric bounds on the scores
"$SLUICE" filter -q --field lang --in en,de "$T/lid.jsonl" -o "$T/kept.jsonl"
"$SLUICE" filter -q --field lang_score --min 0.5 --max 0.99 < "$T/lid.jsonl" > "$T/kept2.jsonl"
python3 - "$T/lid.jsonl" "$T/kept.jsonl" "$T/kept2.jsonl" <<'PY' || fail "filter --in / --min on classify output"
import sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")[:-1]
import json
want = [l for l in lines if json.loads(l)["lang"] in ("en", "de")]
want2 = [l for l in lines if json.loads(l)["lang_score"] is not None and 0.5 <= json.loads(l)["lang_score"] <= 0.99]
got = open(sys.argv[2], encoding="utf-8").read().split("\n")[:-1]
got2 = open(sys.argv[3], encoding="utf-8").read().split("\n")[:-1]
assert got == want and len(want) > 10, (len(got), len(want))
assert got2 == want2 and 0 < len(want2) < len(lines), (len(got2), len(want2))
PY
"$SLUICE" filter --field lang --in en "$T/lid.jsonl" -o "$T/k3.jsonl" 2> "$T/err"
grep -q "kept [0-9]* of $(wc -l < "$T/lid.jsonl") documents .*; lang in {en}" "$T/err" || fail "filter report: $(cat "$T/err")"
expect_fail 2 "--in excludes" -- "$SLUICE" filter --field lang --in en --min 1 "$T/lid.jsonl"
expect_fail 1 'has no "nolang"' -- "$SLUICE" filter --field nolang --in en "$T/lid.jsonl" -o "$T/z.jsonl"
no_file "$T/z.jsonl"
expect_fail 1 '"lang" is not a number' -- "$SLUICE" filter --field lang --min 1 "$T/lid.jsonl" -o "$T/z.jsonl"
expect_fail 1 "percentiles" -- "$SLUICE" filter --keep-pct 10:90 --field lang_score "$T/lid.jsonl" -o "$T/z.jsonl"
no_file "$T/z.jsonl"

# refused: truncated and foreign model files, a word-vector model, bad options
head -c 3000 "$D/topic-hs.bin" > "$T/cut.bin"
expect_fail 1 "cut.bin: offset [0-9]+: .*runs past the end" -- "$SLUICE" classify -m "$T/cut.bin" "$D/corpus.jsonl" -o "$T/z.jsonl"
no_file "$T/z.jsonl"
[ "$(wc -l < "$T/err")" -eq 1 ] || fail "more than one line: $(cat "$T/err")"
head -c 200000 "$D/lid.176.ftz" > "$T/cut.ftz"
expect_fail 1 "cut.ftz: offset [0-9]+: " -- "$SLUICE" classify -m "$T/cut.ftz" "$D/corpus.jsonl" -o "$T/z.jsonl"
expect_fail 1 "corpus.jsonl: offset 0: not a fastText model" -- "$SLUICE" classify -m "$D/corpus.jsonl" "$D/corpus.jsonl"
python3 - "$D/topic-softmax.bin" "$T/cbow.bin" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
struct.pack_into("<i", b, 36, 1)  # args.model: cbow
open(sys.argv[2], "wb").write(b)
PY
expect_fail 1 "cbow.bin: offset 36: not a supervised model" -- "$SLUICE" classify -m "$T/cbow.bin" "$D/corpus.jsonl"
expect_fail 2 "--model FILE is required" -- "$SLUICE" classify "$D/corpus.jsonl"
expect_fail 2 "-k" -- "$SLUICE" classify -m "$D/topic-hs.bin" -k 0 "$D/corpus.jsonl"
expect_fail 2 "--prepare" -- "$SLUICE" classify -m "$D/topic-hs.bin" --prepare raw "$D/corpus.jsonl"
expect_fail 2 "--field-prefix text" -- "$SLUICE" classify -m "$D/topic-hs.bin" --field-prefix text "$D/corpus.jsonl"
expect_fail 1 "no-such.bin" -- "$SLUICE" classify -m "$T/no-such.bin" "$D/corpus.jsonl"
echo "classify: all checks passed"

# sluice score --position-curve / --plot / --group-by / --max-position and
# --merge-curves (docs/longctx.md section 3), on the tiny fixture models:
# every bin re-derived in Python from the per-token log-probabilities that
# `score --per-token` prints, totals against the documents' NLLs, the curve of
# the fixture documents against the reference log-probabilities of
# tests/data/model/hf_f32/expected.jsonl (from the reference implementation),
# merged halves against the whole, and groups against their documents.
. "$SRC/tests/cli/lib.sh"
M=$DATA/model

# a corpus with groups: 60 documents of 1..700 tokens (vocab 64), "source" web/books/code,
# some without it, one with a number
python3 - "$T/corpus.jsonl" "$T/a.jsonl" "$T/b.jsonl" <<'EOF'
import json, random, sys
rng = random.Random(13)
docs = []
for i in range(60):
    d = {"id": f"doc{i}", "ids": [rng.randrange(64) for _ in range(rng.choice([1, 2, 3, rng.randrange(1, 700)]))]}
    if i % 7 == 3:
        pass  # no source
    elif i == 11:
        d["source"] = 7
    else:
        d["source"] = ["web", "books", "code"][i % 3]
    docs.append(d)
for path, part in ((sys.argv[1], docs), (sys.argv[2], docs[:27]), (sys.argv[3], docs[27:])):
    with open(path, "w") as f:
        for d in part:
            f.write(json.dumps(d) + "\n")
EOF
for p in corpus a b; do "$SLUICE" tokenize ids --vocab-size 64 "$T/$p.jsonl" -o "$T/$p.tok"; done

# the curve is a side sum: the JSON Lines are the same with and without it
"$SLUICE" score -m "$M/hf_f32" --per-token "$T/corpus.tok" -o "$T/plain.jsonl"
"$SLUICE" score -m "$M/hf_f32" --per-token --group-by source --position-curve "$T/c.json" --plot "$T/c.svg" \
  --train-length 100 "$T/corpus.tok" -o "$T/s.jsonl" 2> "$T/stderr"
cmp -s "$T/plain.jsonl" "$T/s.jsonl" || fail "--position-curve changed the scores"

python3 - "$T/corpus.jsonl" "$T/s.jsonl" "$T/c.json" "$T/c.svg" "$T/stderr" <<'EOF'
import json, math, statistics, struct, sys
import xml.etree.ElementTree as ET
# the printed log-probabilities (%.9g) are float32 values: round them back to float32
f32 = lambda x: struct.unpack("f", struct.pack("f", x))[0]
corpus = [json.loads(l) for l in open(sys.argv[1])]
scores = [json.loads(l) for l in open(sys.argv[2])]
c = json.load(open(sys.argv[3]))
assert c["format"] == "sluice-position-curve" and c["version"] == 1, c
assert c["group_by"] == "source" and c["train_length"] == 100 and c["max_position"] == 0, c

def group_of(d):
    if "source" not in d:
        return "(none)"
    v = d["source"]
    return v if isinstance(v, str) else json.dumps(v)

def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-300)

# independent binning: position p = index of the predicted token (1 = second token), bin floor(log2 p)
want = {}
order = ["all"]
for d, s in zip(corpus, scores):
    assert d["id"] == s["id"]
    g = group_of(d)
    if g not in order:
        order.append(g)
    for name in ("all", g):
        w = want.setdefault(name, {"docs": 0, "bins": {}, "nll": 0.0})
        w["docs"] += 1
        w["nll"] += s["nll"]
        for t, lp in enumerate(s["logprobs"]):
            lp = f32(lp)
            p = t + 1
            k = p.bit_length() - 1
            assert 2 ** k <= p < 2 ** (k + 1)
            w["bins"].setdefault(k, []).append(-lp)
assert [g["name"] for g in c["groups"]] == order, ([g["name"] for g in c["groups"]], order)
assert "(none)" in order and "7" in order
for g in c["groups"]:
    w = want[g["name"]]
    assert g["documents"] == w["docs"], (g["name"], g["documents"], w["docs"])
    nb = max(w["bins"]) + 1 if w["bins"] else 0
    assert len(g["bins"]) == nb, (g["name"], len(g["bins"]), nb)
    total = 0.0
    for k, b in enumerate(g["bins"]):
        v = w["bins"].get(k, [])
        assert b["lo"] == 2 ** k and b["hi"] == 2 ** (k + 1) - 1, b
        assert b["count"] == len(v), (g["name"], k, b["count"], len(v))
        if not v:
            continue
        assert rel(b["sum_nll"], math.fsum(v)) < 1e-12, (g["name"], k, b["sum_nll"], math.fsum(v))
        assert rel(b["sum_sq"], math.fsum(x * x for x in v)) < 1e-12, (g["name"], k)
        assert rel(b["mean_nll"], statistics.fmean(v)) < 1e-12
        if len(v) > 1:
            h = 1.96 * statistics.stdev(v) / math.sqrt(len(v))
            lo, hi = b["ci95"]
            assert abs(lo - (statistics.fmean(v) - h)) < 1e-9 * abs(lo) and abs(hi - (statistics.fmean(v) + h)) < 1e-9 * abs(hi), (b, h)
        assert b["bytes_count"] == 0 and b["bpb"] is None  # token ids: no source bytes
        total += b["sum_nll"]
    # the sum over bins equals the documents' total NLL from score
    assert rel(total, w["nll"]) < 1e-9 if w["nll"] else total == 0, (g["name"], total, w["nll"])
# groups split the totals: the groups' counts and sums add up to "all"
alls = c["groups"][0]
for k, b in enumerate(alls["bins"]):
    assert b["count"] == sum(g["bins"][k]["count"] for g in c["groups"][1:] if k < len(g["bins"]))
    assert rel(b["sum_nll"], math.fsum(g["bins"][k]["sum_nll"] for g in c["groups"][1:] if k < len(g["bins"]))) < 1e-12
assert alls["documents"] == len(corpus) == sum(g["documents"] for g in c["groups"][1:])
# the SVG: well-formed, one line and one legend entry per group, the training length marked
svg = ET.parse(sys.argv[4]).getroot()
ns = "{http://www.w3.org/2000/svg}"
assert len(svg.findall(ns + "polyline")) == len(order), len(svg.findall(ns + "polyline"))
texts = [t.text for t in svg.iter(ns + "text")]
for name in order:
    assert name in texts, (name, texts)
assert "100" in texts
# stderr: a header, a column line and one line per bin, per group
err = open(sys.argv[5]).read().splitlines()
assert sum(l.startswith("position curve (source): ") for l in err) == len(order), err
assert len([l for l in err if l.startswith("  ")]) == sum(len(g["bins"]) + 1 for g in c["groups"]) + \
    sum("turns up" in l for l in err), err
EOF

# -q: no table
"$SLUICE" score -q -m "$M/hf_f32" --position-curve "$T/q.json" "$T/corpus.tok" -o /dev/null 2> "$T/qerr"
[ ! -s "$T/qerr" ] || fail "-q printed: $(cat "$T/qerr")"

# merged halves equal the whole (counts exactly, sums to 1e-12); --plot with the merge. --batch-tokens 1
# scores each document in its own batch, so its float32 log-probabilities do not depend on its
# neighbours in a packed chunk (with packing they agree to about 1e-9 only, whatever the curve does)
"$SLUICE" score -q -m "$M/hf_f32" --batch-tokens 1 --group-by source --position-curve "$T/cw.json" "$T/corpus.tok" -o /dev/null
"$SLUICE" score -q -m "$M/hf_f32" --batch-tokens 1 --group-by source --position-curve "$T/ca.json" "$T/a.tok" -o /dev/null
"$SLUICE" score -q -m "$M/hf_f32" --batch-tokens 1 --group-by source --position-curve "$T/cb.json" "$T/b.tok" -o /dev/null
"$SLUICE" score -q --merge-curves "$T/ca.json" "$T/cb.json" -o "$T/merged.json" --plot "$T/merged.svg"
python3 - "$T/merged.json" "$T/cw.json" <<'EOF'
import json, sys
m, w = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert sorted(g["name"] for g in m["groups"]) == sorted(g["name"] for g in w["groups"])
wg = {g["name"]: g for g in w["groups"]}
for g in m["groups"]:
    h = wg[g["name"]]
    assert g["documents"] == h["documents"] and len(g["bins"]) == len(h["bins"]), g["name"]
    for x, y in zip(g["bins"], h["bins"]):
        assert x["count"] == y["count"], (g["name"], x, y)
        for f in ("sum_nll", "sum_sq"):
            assert abs(x[f] - y[f]) <= 1e-12 * abs(y[f]), (g["name"], f, x[f], y[f])
EOF
grep -q '<svg' "$T/merged.svg" || fail "--merge-curves --plot"
# merging one file is the identity on the sums (and the file's derived fields)
"$SLUICE" score -q --merge-curves "$T/c.json" -o "$T/same.json"
cmp -s "$T/same.json" "$T/c.json" || fail "a merged single curve differs from it"

# the fixture documents against the reference log-probabilities (expected.jsonl, the reference implementation)
"$SLUICE" tokenize ids --vocab-size 64 --field tokens "$M/hf_f32/expected.jsonl" -o "$T/ref.tok"
"$SLUICE" score -q -m "$M/hf_f32" --position-curve "$T/ref.json" "$T/ref.tok" -o /dev/null
python3 - "$M/hf_f32/expected.jsonl" "$T/ref.json" <<'EOF'
import json, sys
bins = {}
for l in open(sys.argv[1]):
    for t, lp in enumerate(json.loads(l)["logp"]):
        bins.setdefault((t + 1).bit_length() - 1, []).append(-lp)
g = json.load(open(sys.argv[2]))["groups"]
assert len(g) == 1 and g[0]["name"] == "all" and g[0]["documents"] == 5
assert [b["count"] for b in g[0]["bins"]] == [len(bins[k]) for k in range(len(bins))], g[0]["bins"]
for k, b in enumerate(g[0]["bins"]):
    assert abs(b["sum_nll"] - sum(bins[k])) < 1e-4 * sum(bins[k]), (k, b["sum_nll"], sum(bins[k]))
EOF

# bits per byte where the stream records source bytes (DNA windows): each prediction carries its
# document's source bytes / predictions; over all bins that is the corpus bpb
"$SLUICE" tokenize dna "$DATA/dna/lambda_virus.fa" --window 4096 --stride 4096 -o "$T/dna.tok"
"$SLUICE" score -q -m "$M/ssm_f32" --force --per-token --position-curve "$T/dna.json" "$T/dna.tok" -o "$T/dna.jsonl"
python3 - "$T/dna.jsonl" "$T/dna.json" <<'EOF'
import json, math, struct, sys
f32 = lambda x: struct.unpack("f", struct.pack("f", x))[0]
docs = [json.loads(l) for l in open(sys.argv[1])]
g = json.load(open(sys.argv[2]))["groups"][0]
by, nl, cnt = {}, {}, {}
tot_nll = tot_bytes = 0.0
for d in docs:
    src = d["nll"] / math.log(2) / d["bpb"]  # the document's source bytes
    assert abs(src - round(src)) < 1e-6 * src, src
    src = round(src)
    tot_nll += d["nll"]; tot_bytes += src
    for t, lp in enumerate(d["logprobs"]):
        k = (t + 1).bit_length() - 1
        by[k] = by.get(k, 0.0) + src / d["tokens"]
        nl[k] = nl.get(k, 0.0) - f32(lp)
        cnt[k] = cnt.get(k, 0) + 1
for k, b in enumerate(g["bins"]):
    assert b["bytes_count"] == b["count"] == cnt[k]
    assert abs(b["bytes"] - by[k]) < 1e-12 * by[k], (k, b["bytes"], by[k])
    assert abs(b["bpb"] - nl[k] / math.log(2) / by[k]) < 1e-9 * b["bpb"], (k, b["bpb"])
bpb = math.fsum(b["bytes_nll"] for b in g["bins"]) / math.log(2) / math.fsum(b["bytes"] for b in g["bins"])
assert abs(bpb - tot_nll / math.log(2) / tot_bytes) < 1e-9 * bpb, (bpb, tot_nll / math.log(2) / tot_bytes)
EOF

# --max-position N: positions < N only, for the scores as for the curve (= --max-tokens N; N - 1 with --prepend)
"$SLUICE" score -q -m "$M/hf_f32" --max-position 10 --position-curve "$T/mp.json" "$T/corpus.tok" -o "$T/mp.jsonl"
"$SLUICE" score -q -m "$M/hf_f32" --max-tokens 10 "$T/corpus.tok" -o "$T/mt.jsonl"
cmp -s "$T/mp.jsonl" "$T/mt.jsonl" || fail "--max-position 10 != --max-tokens 10"
"$SLUICE" score -q -m "$M/hf_f32" --max-position 10 --prepend 0 --position-curve "$T/mpp.json" "$T/corpus.tok" -o "$T/mpp.jsonl"
"$SLUICE" score -q -m "$M/hf_f32" --max-tokens 9 --prepend 0 "$T/corpus.tok" -o "$T/mtp.jsonl"
cmp -s "$T/mpp.jsonl" "$T/mtp.jsonl" || fail "--max-position 10 --prepend != --max-tokens 9 --prepend"
python3 - "$T/mp.json" "$T/mpp.json" <<'EOF'
import json, sys
for p in sys.argv[1:]:
    c = json.load(open(p))
    assert c["max_position"] == 10, c["max_position"]
    b = c["groups"][0]["bins"]
    assert len(b) == 4 and b[-1]["lo"] == 8 and b[-1]["hi"] == 15, b  # positions 1..9
EOF

# where the curve turns up: recomputed from the sums of a hand-made curve (merge of one file)
python3 - "$T/hand.json" "$T/flat.json" <<'EOF'
import json, sys
def curve(means, path):
    bins = []
    for k, m in enumerate(means):
        n = 1000  # values m - 0.1 and m + 0.1, 500 each: sd about 0.1, 95% half-width about 0.0062
        s = n * m
        sq = 500 * (m - 0.1) ** 2 + 500 * (m + 0.1) ** 2
        bins.append({"lo": 2 ** k, "hi": 2 ** (k + 1) - 1, "count": n, "sum_nll": s, "sum_sq": sq,
                     "bytes_count": 0, "bytes_nll": 0, "bytes": 0})
    json.dump({"format": "sluice-position-curve", "version": 1, "group_by": None, "max_position": 0,
               "train_length": 8, "groups": [{"name": "all", "documents": 3, "bins": bins}]}, open(path, "w"))
curve([5.0, 4.0, 3.0, 3.005, 3.2, 3.0], sys.argv[1])  # minimum in bin 2 (4-7); bin 3 within its interval; bin 4 above
curve([5.0, 4.0, 3.0, 2.9], sys.argv[2])
EOF
"$SLUICE" score --merge-curves "$T/hand.json" -o "$T/hand.out.json" 2> "$T/hand.err"
grep -q '"turn_up":16,' "$T/hand.out.json" || fail "turn_up: $(head -c 300 "$T/hand.out.json")"
grep -q 'turns up at position 16 (beyond train_length)' "$T/hand.err" || fail "turn-up line: $(cat "$T/hand.err")"
"$SLUICE" score -q --merge-curves "$T/flat.json" -o "$T/flat.out.json"
grep -q '"turn_up":null,' "$T/flat.out.json" || fail "turn_up of a falling curve"

# errors: one line, no output files
expect_fail 2 'need --position-curve or --plot' -- "$SLUICE" score -m "$M/hf_f32" --group-by source "$T/corpus.tok"
expect_fail 2 'max-position' -- "$SLUICE" score -m "$M/hf_f32" --max-position 1 --position-curve "$T/x.json" "$T/corpus.tok"
expect_fail 2 'merge-curves takes' -- "$SLUICE" score --merge-curves -m "$M/hf_f32" "$T/c.json"
expect_fail 1 'group_by. differs' -- "$SLUICE" score --merge-curves "$T/c.json" "$T/ref.json" -o "$T/x.json"
no_file "$T/x.json"
printf '{"format":"sluice-mix-report"}\n' > "$T/notcurve.json"
expect_fail 1 'notcurve.json: not a position curve' -- "$SLUICE" score --merge-curves "$T/c.json" "$T/notcurve.json" -o "$T/x.json"
no_file "$T/x.json"
expect_fail 1 'corpus.jsonl: offset' -- "$SLUICE" score --merge-curves "$T/c.json" "$T/corpus.jsonl" -o "$T/x.json"
no_file "$T/x.json"
# a scoring error leaves no curve, no plot and no output
printf '{"id":"bad","ids":[1,2,3],"source":"x"}\n' | "$SLUICE" tokenize ids --vocab-size 100000 -o "$T/big.tok"
printf '{"id":"bad2","ids":[99999,2,3]}\n' | "$SLUICE" tokenize ids --vocab-size 100000 -o "$T/big2.tok"
expect_fail 1 "not in the model's vocabulary" -- "$SLUICE" score -m "$M/hf_f32" --force --position-curve "$T/x.json" \
  --plot "$T/x.svg" "$T/big.tok" "$T/big2.tok" -o "$T/x.jsonl"
no_file "$T/x.json"; no_file "$T/x.svg"; no_file "$T/x.jsonl"
echo ok

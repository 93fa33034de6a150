# sluice dedup: minhash removes exactly the documents datatrove
# 0.10.1's MinhashDedupFilter drops on the planted-duplicates corpus, for four
# configurations (tests/data/dedup/make_minhash_fixtures.py ran datatrove);
# exact and lines against plain Python statements of their definitions;
# results independent of -@ and of the memory budget (bucket records spilled
# to sorted runs); k copies leave one; empty documents kept and counted;
# --annotate; bad input and options refused with one line and no output.
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
D=$DATA/dedup
ids_of() { sed 's/^{"id":"\([^"]*\)".*/\1/' "$1"; }

# --- minhash against datatrove
for c in default:xxhash64:5:14:8:1 sha1-64:sha1-64:5:14:8:1 sha1-32-n3-b9-r5-s7:sha1-32:3:9:5:7 \
         xxhash32-n2-b20-r3:xxhash32:2:20:3:1; do
  IFS=: read -r name h n b r s <<< "$c"
  "$S" dedup minhash -q --hash "$h" --ngram "$n" --buckets "$b" --rows "$r" --seed "$s" "$D/corpus.jsonl" \
    -o "$T/mh-$name.jsonl" --removed "$T/mh-$name.removed" --summary "$T/mh-$name.json"
  ids_of "$T/mh-$name.removed" > "$T/got"
  cmp -s "$T/got" "$D/minhash-$name.removed" || fail "minhash $name: removed set differs from datatrove's: $(diff "$T/got" "$D/minhash-$name.removed" | head -5)"
  # kept = the corpus without the removed ones, in input order, each line as `read` writes it
  "$S" read -q "$D/corpus.jsonl" | grep -v -F -f <(sed 's/.*/{"id":"&",/' "$D/minhash-$name.removed") > "$T/want"
  cmp -s "$T/want" "$T/mh-$name.jsonl" || fail "minhash $name: kept documents differ"
done
grep -q '"docs":241,"empty":2,"kept":190,"removed":51' "$T/mh-default.json" || fail "summary: $(cat "$T/mh-default.json")"
# a 32-bit hash: band records starting with 2^32-1 are in no pair (datatrove's
# MinhashDedupBuckets stops reading a band there; make_minhash_max32_fixtures.py);
# in one process and in steps (signature parts 2, bucket parts 1)
MX=(-q --ngram 1 --buckets 1 --rows 1 --seed 1 --hash xxhash32)
"$S" dedup minhash "${MX[@]}" "$D/minhash-max32.jsonl" -o "$T/mx.jsonl" --removed "$T/mx.rm"
ids_of "$T/mx.rm" > "$T/got"
cmp -s "$T/got" "$D/minhash-max32.removed" || fail "minhash max32: removed differs from datatrove's: $(tr '\n' ' ' < "$T/got")"
for r in 0 1; do "$S" dedup minhash "${MX[@]}" --step signatures --part $r/2 --signatures "$T/mxw" "$D/minhash-max32.jsonl"; done
"$S" dedup minhash "${MX[@]}" --step buckets --part 0/1 --signatures "$T/mxw"
"$S" dedup minhash "${MX[@]}" --step cluster --signatures "$T/mxw"
for r in 0 1; do
  "$S" dedup minhash "${MX[@]}" --step filter --part $r/2 --signatures "$T/mxw" "$D/minhash-max32.jsonl" \
    -o "$T/mxk$r.jsonl" --removed "$T/mxr$r.rm"
done
cat "$T/mxr0.rm" "$T/mxr1.rm" | cmp -s - "$T/mx.rm" || fail "minhash max32: steps remove other documents"
cat "$T/mxk0.jsonl" "$T/mxk1.jsonl" | cmp -s - "$T/mx.jsonl" || fail "minhash max32: steps keep other documents"
# the kept document of a cluster is datatrove's root: twice here it comes after a removed one
python3 - "$D/corpus.jsonl" "$T/mh-default.removed" <<'PY'
import json, sys
pos = {json.loads(l)["id"]: i for i, l in enumerate(open(sys.argv[1]))}
later = sum(pos[r["kept"]] > pos[r["id"]] for r in map(json.loads, open(sys.argv[2])))
assert later >= 1, later
PY

# --- independent of threads and of the memory budget (spilled runs)
for i in 0 1 2 3 4; do sed "s/\"id\": \"d/\"id\": \"c$i-d/" "$D/corpus.jsonl"; done > "$T/big.jsonl"
"$S" dedup minhash -q -@ 1 "$T/big.jsonl" -o "$T/b1.jsonl" --removed "$T/b1.rm" --summary "$T/b1.json"
"$S" dedup minhash -q -@ 2 --mem-budget 1M "$T/big.jsonl" -o "$T/b2.jsonl" --removed "$T/b2.rm" --summary "$T/b2.json"
cmp -s "$T/b1.jsonl" "$T/b2.jsonl" && cmp -s "$T/b1.rm" "$T/b2.rm" && cmp -s "$T/b1.json" "$T/b2.json" \
  || fail "minhash: -@ 1 and -@ 2 --mem-budget 1M differ"
# five copies of each document: one copy of each kept text is left, and the
# 14 without a signature (under 5 words, 2 of them empty) are all kept
[ "$(grep -c . "$T/b1.jsonl")" = $((190 + 4 * 14)) ] || fail "five copies: $(grep -c . "$T/b1.jsonl") kept, want 246"
grep -q '"no_signature":70' "$T/b1.json" || fail "five copies: $(cat "$T/b1.json")"

# --- --annotate: everything written, dup_cluster/dup_count; the removed ones point elsewhere
"$S" dedup minhash -q --annotate "$D/corpus.jsonl" -o "$T/ann.jsonl"
python3 - "$T/ann.jsonl" "$D/minhash-default.removed" <<'PY'
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1])]
removed = set(open(sys.argv[2]).read().split())
assert len(docs) == 241
sizes = {}
for i, d in enumerate(docs):
    assert (d["dup_cluster"] != i) == (d["id"] in removed), d["id"]
    sizes[d["dup_cluster"]] = sizes.get(d["dup_cluster"], 0) + 1
for d in docs:
    assert d["dup_count"] == sizes[d["dup_cluster"]], d["id"]
PY

# --- exact (bytes, and --normalize against datatrove's simplify_text of each text)
python3 - "$D/textnorm-strings.jsonl" "$T" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
docs = []
for i, r in enumerate(rows):
    docs.append({"id": f"s{i}", "text": r["text"], "simplified": r["simplified"]})
    if i % 3 == 0:
        docs.append({"id": f"s{i}b", "text": r["text"], "simplified": r["simplified"]})
with open(sys.argv[2] + "/ex.jsonl", "w") as f:
    for d in docs:
        f.write(json.dumps({"id": d["id"], "text": d["text"]}, ensure_ascii=False) + "\n")
for mode, key in (("bytes", "text"), ("norm", "simplified")):
    seen, kept = set(), []
    for d in docs:  # the first of each text is kept; empty documents always
        if d["text"] and d[key] in seen:
            continue
        seen.add(d[key])
        kept.append(d["id"])
    open(sys.argv[2] + f"/ex-{mode}.want", "w").write("\n".join(kept) + "\n")
PY
"$S" dedup exact -q "$T/ex.jsonl" -o "$T/ex-bytes.jsonl" --summary "$T/ex.json"
"$S" dedup exact -q --normalize "$T/ex.jsonl" -o "$T/ex-norm.jsonl"
for m in bytes norm; do
  ids_of "$T/ex-$m.jsonl" > "$T/got"
  cmp -s "$T/got" "$T/ex-$m.want" || fail "exact $m: $(diff "$T/got" "$T/ex-$m.want" | head -5)"
done
grep -q '"empty":' "$T/ex.json" || fail "exact summary"

# --- lines (CCNet): against the definition, on text whose simplify_text is
# lower case with whitespace runs made one space and stripped
python3 - "$T" <<'PY'
import json, random, sys
rng = random.Random(5)
words = "alpha beta gamma delta Alpha BETA eps zeta".split()
pool = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 4))) for _ in range(40)]
docs = []
for i in range(300):
    lines = [rng.choice(pool) if rng.random() < 0.8 else "" for _ in range(rng.randint(0, 6))]
    lines = [l.replace(" ", rng.choice([" ", "  ", "\t"])) if rng.random() < 0.3 else l for l in lines]
    docs.append({"id": f"l{i}", "text": "\n".join(lines)})
with open(sys.argv[1] + "/ln.jsonl", "w") as f:
    for d in docs:
        f.write(json.dumps(d) + "\n")
norm = lambda l: " ".join(l.lower().split())
for mn in (1, 12):
    first = {}
    for i, d in enumerate(docs):
        for l in d["text"].split("\n"):
            k = norm(l)
            if len(k) >= max(mn, 1):
                first.setdefault(k, i)
    with open(sys.argv[1] + f"/ln-{mn}.want", "w") as f:
        for i, d in enumerate(docs):
            lines = d["text"].split("\n")
            kept = [l for l in lines if len(norm(l)) < max(mn, 1) or first[norm(l)] == i]
            if len(kept) < len(lines) and not "".join(kept).strip():
                continue  # left empty: dropped
            f.write(json.dumps({"id": d["id"], "text": "\n".join(kept)}, ensure_ascii=False) + "\n")
PY
for mn in 1 12; do
  "$S" dedup lines -q --min-line-chars $mn "$T/ln.jsonl" -o "$T/ln-$mn.jsonl" --removed "$T/ln-$mn.rm"
  python3 -c "import json,sys; a=[json.loads(l) for l in open(sys.argv[1])]; b=[json.loads(l) for l in open(sys.argv[2])]; assert a==b, [x for x,y in zip(a,b) if x!=y][:2]" \
    "$T/ln-$mn.jsonl" "$T/ln-$mn.want" || fail "lines --min-line-chars $mn differs from the definition"
done

# --- bad input and options
printf '{"id":"a","text":"x"}\n{"id":"b","text":\n' > "$T/bad.jsonl"
expect_fail 1 'bad.jsonl:2' -- "$S" dedup exact "$T/bad.jsonl" -o "$T/bad.out" --removed "$T/bad.rm"
no_file "$T/bad.out"; no_file "$T/bad.rm"
expect_fail 2 'not an option' -- "$S" dedup minhash --normalize "$D/corpus.jsonl"
expect_fail 2 'seed' -- "$S" dedup minhash --seed 4294967296 "$D/corpus.jsonl"
expect_fail 2 'hash' -- "$S" dedup minhash --hash md5 "$D/corpus.jsonl"
expect_fail 1 'language' -- "$S" dedup minhash --language xx "$D/corpus.jsonl" -o "$T/lang.out"
no_file "$T/lang.out"

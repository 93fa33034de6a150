# sluice dedup minhash as separate steps (docs/dedup.md "Steps"):
# signatures per input part, buckets per band range, one cluster step, the
# filter per part. The parts' outputs concatenated are byte for byte the
# one-process run's (kept documents, removed list, summary) for N = 1, 3, 7
# and 64 signature parts and M = 1, 5, 14 and 20 bucket parts, with -@ 1 and
# -@ 2 and a memory budget small enough to spill; --skip-existing skips what
# verifies and redoes a killed or damaged step; a truncated file, one made
# with other options or from other signature files, and a filter given other
# inputs or another N are refused by name. --jaccard against a plain
# Python statement of the whole algorithm (numpy's RandomState, SHA-1
# shingles, LSH neighbours, the Jaccard check, datatrove's union by size);
# --plot's SVG against the summary.
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
D=$DATA/dedup
PY=""
for p in /usr/bin/python3 python3; do
  if command -v "$p" > /dev/null 2>&1 && "$p" -c 'import numpy' 2> /dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || fail "python3 with numpy is required (apt-get install python3-numpy, see scripts/install-deps)"
for i in 0 1 2; do sed "s/\"id\": \"d/\"id\": \"c$i-d/" "$D/corpus.jsonl"; done > "$T/a.jsonl"
sed "s/\"id\": \"d/\"id\": \"e-d/" "$D/corpus.jsonl" | gzip -c > "$T/b.jsonl.gz" # read whole by one part
IN=("$T/a.jsonl" "$T/b.jsonl.gz")
"$S" dedup minhash -q "${IN[@]}" -o "$T/one.jsonl" --removed "$T/one.rm" --summary "$T/one.json"
[ "$(grep -c . "$T/one.rm")" -gt 100 ] || fail "too few removed for a test: $(cat "$T/one.json")"

# steps N M THREADS [options]: the four steps into $T/w-N-M, outputs concatenated into $T/got.*
steps() {
  local N=$1 M=$2 th=$3 r; shift 3
  local W=$T/w-$N-$M
  for r in $(seq 0 $((N - 1))); do
    "$S" dedup minhash -q -@ "$th" "$@" --step signatures --part "$r/$N" --signatures "$W" "${IN[@]}" || fail "signatures $r/$N"
  done
  for r in $(seq 0 $((M - 1))); do
    "$S" dedup minhash -q -@ "$th" "$@" --step buckets --part "$r/$M" --signatures "$W" || fail "buckets $r/$M"
  done
  "$S" dedup minhash -q "$@" --step cluster --signatures "$W" --summary "$T/got.json" || fail "cluster ($N, $M)"
  for r in $(seq 0 $((N - 1))); do
    "$S" dedup minhash -q -@ "$th" "$@" --step filter --part "$r/$N" --signatures "$W" "${IN[@]}" \
      -o "$W/kept/kept-$(printf %05d "$r")-of-$N.jsonl" --removed "$W/removed/removed-$(printf %05d "$r")-of-$N.jsonl" ||
      fail "filter $r/$N"
  done
  cat "$W"/kept/kept-*-of-"$N".jsonl > "$T/got.jsonl"
  cat "$W"/removed/removed-*-of-"$N".jsonl > "$T/got.rm"
}
for c in 1:1:2 3:5:1 7:14:2 64:20:2; do
  IFS=: read -r N M th <<< "$c"
  steps "$N" "$M" "$th" --mem-budget 1M
  cmp -s "$T/got.jsonl" "$T/one.jsonl" || fail "N=$N M=$M: kept documents differ from the one-process run"
  cmp -s "$T/got.rm" "$T/one.rm" || fail "N=$N M=$M: removed lists differ"
  cmp -s "$T/got.json" "$T/one.json" || fail "N=$N M=$M: summaries differ: $(cat "$T/got.json")"
done
# N=64 really cut the files: many signature parts hold documents
n=0
for f in "$T"/w-64-20/kept/*; do [ -s "$f" ] && n=$((n + 1)); done
[ "$n" -ge 20 ] || fail "only $n of 64 parts have documents"
# --annotate per part equals the one-process --annotate
"$S" dedup minhash -q --annotate "${IN[@]}" -o "$T/ann-one.jsonl"
for r in 0 1 2; do
  "$S" dedup minhash -q --annotate --step filter --part "$r/3" --signatures "$T/w-3-5" "${IN[@]}" -o "$T/ann-$r.jsonl"
done
cat "$T"/ann-[012].jsonl | cmp -s - "$T/ann-one.jsonl" || fail "--annotate per part differs"

# --- --skip-existing: whole files are skipped, damaged ones redone
W=$T/w-3-5
cp "$W/sigs/sig-00001-of-00003.mhsig" "$T/sig1.keep"
"$S" dedup minhash --skip-existing --step signatures --part 1/3 --signatures "$W" "${IN[@]}" 2> "$T/skip.err"
grep -q 'exists and verifies; nothing to do' "$T/skip.err" || fail "skip: $(cat "$T/skip.err")"
head -c 5000 "$T/sig1.keep" > "$W/sigs/sig-00001-of-00003.mhsig"
expect_fail 1 'sig-00001-of-00003.mhsig: truncated' -- "$S" dedup minhash --step buckets --part 0/5 --signatures "$W"
"$S" dedup minhash --skip-existing --step signatures --part 1/3 --signatures "$W" "${IN[@]}" 2> "$T/skip.err"
grep -q 'does not verify.*running the step again' "$T/skip.err" || fail "skip damaged: $(cat "$T/skip.err")"
cmp -s "$T/sig1.keep" "$W/sigs/sig-00001-of-00003.mhsig" || fail "the redone part differs"
# a flipped byte inside: the checksum
python3 -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[300]^=1; open(p,'wb').write(b)" "$W/pairs/pairs-00002-of-00005.mhpair"
"$S" dedup minhash --skip-existing --step buckets --part 2/5 --signatures "$W" 2> "$T/skip.err"
grep -q 'checksum mismatch' "$T/skip.err" || fail "skip flipped: $(cat "$T/skip.err")"
# a step killed mid-run leaves no file at its name; the rerun completes it
"$S" dedup minhash -q --step cluster --signatures "$W" --summary "$T/c.json"
cp "$W/clusters.mhclu" "$T/clu.keep"
for k in 1 2 3 4 5 6; do cat "$T/a.jsonl"; done > "$T/big.jsonl"
# the step reads a FIFO held open (read-write: opening it cannot block), so
# that it is still waiting for input when it is killed, however fast the
# machine (a regular file could be done before the kill, and the kill fail)
mkfifo "$T/fifo"
exec 3<> "$T/fifo"
(exec "$S" dedup minhash -q -@ 1 --step signatures --signatures "$T/wk" "$T/fifo") &
pid=$!
head -n 5 "$T/big.jsonl" >&3
for _ in $(seq 1 200); do ls "$T/wk/sigs/" 2> /dev/null | grep -q 'tmp' && break; sleep 0.05; done
ls "$T/wk/sigs/" 2> /dev/null | grep -q 'tmp' || fail "no temporary of the running step: $(ls "$T/wk/sigs" 2>&1)"
kill -9 "$pid"
wait "$pid" 2> /dev/null || true
exec 3>&-
[ ! -e "$T/wk/sigs/sig-00000-of-00001.mhsig" ] || fail "a killed signature step left its output"
"$S" dedup minhash --skip-existing -q -@ 1 --step signatures --part 0/1 --signatures "$T/wk" "$T/big.jsonl" 2> "$T/kill.err" ||
  fail "rerun after kill: $(cat "$T/kill.err")"
ls "$T/wk/sigs/" | grep -q tmp && fail "temporary left after the rerun: $(ls "$T/wk/sigs")"
"$S" dedup minhash -q -@ 1 --step signatures --part 0/1 --signatures "$T/wk2" "$T/big.jsonl"
cmp -s "$T/wk/sigs/sig-00000-of-00001.mhsig" "$T/wk2/sigs/sig-00000-of-00001.mhsig" || fail "rerun after kill differs"
# no temporary files of the run left under $TMPDIR (unnamed: nothing to see)
ls "${TMPDIR:-/tmp}" | grep -q "sluice-dedup-" && fail "spool files left in \$TMPDIR" || true

# --- refusals, by name
expect_fail 1 'sig-00000-of-00003.mhsig: made with --ngram 5, this run has --ngram 3' -- \
  "$S" dedup minhash --ngram 3 --step buckets --signatures "$W"
expect_fail 1 'made with --seed 1, this run has --seed 2' -- "$S" dedup minhash --seed 2 --step cluster --signatures "$W"
expect_fail 1 'made with --hash xxhash64, this run has --hash sha1-32' -- \
  "$S" dedup minhash --hash sha1-32 --step filter --part 0/3 --signatures "$W" "${IN[@]}" -o "$T/x.jsonl"
no_file "$T/x.jsonl"
expect_fail 1 'made without --jaccard' -- "$S" dedup minhash --jaccard 0.5 --step buckets --signatures "$W"
# pairs made from other signature files
cp -r "$W" "$T/w-other"
"$S" dedup minhash -q --step signatures --part 2/3 --signatures "$T/w-other" "$T/a.jsonl"
expect_fail 1 'pairs-00000-of-00005.mhpair: made from other signature files' -- \
  "$S" dedup minhash --step cluster --signatures "$T/w-other"
# a missing part
rm "$T/w-other/sigs/sig-00002-of-00003.mhsig"
expect_fail 1 'sig-00002-of-00003|missing' -- "$S" dedup minhash --step buckets --signatures "$T/w-other"
# the filter given another N, or other inputs
expect_fail 1 'made from 3 signature parts; this filter is part 0 of 2' -- \
  "$S" dedup minhash --step filter --part 0/2 --signatures "$W" "${IN[@]}" -o "$T/x.jsonl"
expect_fail 1 'other inputs or another --part' -- \
  "$S" dedup minhash --step filter --part 2/3 --signatures "$W" "$T/a.jsonl" -o "$T/x.jsonl"
no_file "$T/x.jsonl"
expect_fail 1 'nowhere/clusters.mhclu: No such file' -- \
  "$S" dedup minhash --step filter --part 0/3 --signatures "$T/nowhere" "${IN[@]}" -o "$T/x.jsonl"
mkdir "$T/fake"
cp "$T/a.jsonl" "$T/fake/clusters.mhclu"
expect_fail 1 'fake/clusters.mhclu: not a sluice MinHash clusters file' -- \
  "$S" dedup minhash --step filter --part 0/3 --signatures "$T/fake" "${IN[@]}" -o "$T/x.jsonl"
cp "$W/sigs/sig-00000-of-00003.mhsig" "$T/fake/clusters.mhclu"
expect_fail 1 'fake/clusters.mhclu: a MinHash signature file, not a clusters file' -- \
  "$S" dedup minhash --step filter --part 0/3 --signatures "$T/fake" "${IN[@]}" -o "$T/x.jsonl"
expect_fail 2 'goes with --step|go with --step' -- "$S" dedup minhash --part 0/2 "${IN[@]}"
expect_fail 2 'needs --signatures' -- "$S" dedup minhash --step cluster
expect_fail 2 'no --part' -- "$S" dedup minhash --step cluster --part 0/2 --signatures "$W"
expect_fail 2 'jaccard' -- "$S" dedup minhash --jaccard 1.5 "${IN[@]}"

# --- --jaccard against a plain Python statement of the algorithm, on text
# that simplify_text and the word tokenizer leave as it is (lower-case
# letters, one space apart), with SHA-1 shingles that Python's hashlib makes
"$PY" - "$T" << 'PY'
import hashlib, json, random, sys
import numpy as np
out = sys.argv[1]
rng = random.Random(11)
syl = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
vocab = sorted({"".join(rng.choice(syl) for _ in range(3)) for _ in range(400)})
docs = []
for i in range(150):
    base = [rng.choice(vocab) for _ in range(rng.randint(20, 60))]
    docs.append(base)
    for _ in range(rng.randint(0, 3)):  # near copies: a few words changed
        c = list(base)
        for _ in range(rng.randint(0, len(c) // 6)):
            c[rng.randrange(len(c))] = rng.choice(vocab)
        docs.append(c)
rng.shuffle(docs)
with open(out + "/jac.jsonl", "w") as f:
    for i, d in enumerate(docs):
        f.write(json.dumps({"id": f"j{i}", "text": " ".join(d)}) + "\n")
n, B, R, seed = 3, 9, 4, 5
M61 = (1 << 61) - 1
st = np.random.RandomState(seed)
a = st.randint(1, M61, dtype=np.uint64, size=(1, B * R))
b = st.randint(0, M61, dtype=np.uint64, size=(1, B * R))
def sh(d):
    return [int.from_bytes(hashlib.sha1(" ".join(d[i:i + n]).encode()).digest()[:8], "little")
            for i in range(len(d) - n + 1)]
sets = [set(sh(d)) for d in docs]
sigs = []
for d in docs:
    h = np.array(sh(d), dtype=np.uint64).reshape(-1, 1)
    sigs.append(np.min((h * a + b) % np.uint64(M61), axis=0))
def run(T):
    parent, size = {}, {}
    def find(x):
        while parent.get(x, x) != x:
            x = parent[x]
        return x
    def union(x, y):
        rx, ry = find(x), find(y)
        if rx == ry:
            return
        if size.get(rx, 1) < size.get(ry, 1):
            rx, ry = ry, rx
        parent[ry] = rx
        size[rx] = size.get(rx, 1) + size.get(ry, 1)
    for band in range(B):
        recs = sorted((tuple(int(v) for v in s[band * R:(band + 1) * R]), i) for i, s in enumerate(sigs))
        group = []
        for k, (v, i) in enumerate(recs):
            if k and recs[k - 1][0] == v:
                if T is None:
                    union(recs[k - 1][1], i)
                else:
                    for j in reversed(group[-32:]):  # nearest earlier member first
                        x, y = sets[j], sets[i]
                        if len(x & y) / len(x | y) >= T:
                            union(j, i)
                            break
                group.append(i)
            else:
                group = [i]
    return [f"j{i}" for i in range(len(docs)) if find(i) != i]
for T in (None, 0.5, 0.75):
    open(out + f"/jac-{T}.want", "w").write("".join(x + "\n" for x in run(T)))
PY
for thr in none 0.5 0.75; do
  opt=()
  [ "$thr" = none ] || opt=(--jaccard "$thr")
  "$S" dedup minhash -q --hash sha1-64 --ngram 3 --buckets 9 --rows 4 --seed 5 "${opt[@]}" "$T/jac.jsonl" \
    -o "$T/jac.out" --removed "$T/jac.rm"
  want=$T/jac-$([ "$thr" = none ] && echo None || echo "$thr").want
  sed 's/^{"id":"\([^"]*\)".*/\1/' "$T/jac.rm" > "$T/jac.got"
  cmp -s "$T/jac.got" "$want" || fail "--jaccard $thr: removed set differs from the Python statement: $(diff "$T/jac.got" "$want" | head -5)"
done
[ "$(wc -l < "$T/jac-0.75.want")" -lt "$(wc -l < "$T/jac-None.want")" ] || fail "--jaccard 0.75 removed no fewer"
[ "$(wc -l < "$T/jac-0.75.want")" -gt 10 ] || fail "--jaccard 0.75 removed almost nothing"
# --jaccard 0 is the plain LSH
"$S" dedup minhash -q --jaccard 0 "${IN[@]}" -o "$T/j0.jsonl" --removed "$T/j0.rm"
cmp -s "$T/j0.rm" "$T/one.rm" || fail "--jaccard 0 differs from no --jaccard"
# the steps with --jaccard equal the one-process --jaccard run
"$S" dedup minhash -q --jaccard 0.8 "${IN[@]}" -o "$T/one.jsonl" --removed "$T/one.rm" --summary "$T/one.json"
steps 3 4 2 --jaccard 0.8 --mem-budget 1M
cmp -s "$T/got.jsonl" "$T/one.jsonl" && cmp -s "$T/got.rm" "$T/one.rm" && cmp -s "$T/got.json" "$T/one.json" ||
  fail "--jaccard 0.8 steps differ from the one-process run"
grep -q '"jaccard":0.8,' "$T/one.json" || fail "summary: $(cat "$T/one.json")"
expect_fail 1 'pairs-00000-of-00004.mhpair: made with --jaccard 0.8, this run has no --jaccard' -- \
  "$S" dedup minhash --step cluster --signatures "$T/w-3-4"
expect_fail 1 'clusters.mhclu: made with --jaccard 0.8, this run has --jaccard 0.9' -- \
  "$S" dedup minhash --jaccard 0.9 --step filter --part 0/3 --signatures "$T/w-3-4" "${IN[@]}" -o "$T/x.jsonl"

# --- --plot: one bar per cluster size, heights proportional to size x clusters
"$S" dedup minhash -q "${IN[@]}" -o /dev/null --summary "$T/p.json" --plot "$T/p.svg"
"$S" dedup minhash -q --step cluster --signatures "$T/w-3-5" --plot "$T/p2.svg"
cmp -s "$T/p.svg" "$T/p2.svg" || fail "--plot of the cluster step differs"
python3 - "$T/p.json" "$T/p.svg" << 'PY'
import json, sys, xml.etree.ElementTree as ET
sizes = json.load(open(sys.argv[1]))["cluster_sizes"]
docs = {int(k.lstrip(">=")): int(k.lstrip(">=")) * v for k, v in sizes.items()}
ns = "{http://www.w3.org/2000/svg}"
bars = [float(r.get("height")) for r in ET.parse(sys.argv[2]).getroot().iter(ns + "rect") if r.get("fill") == "#4a7fb5"]
nz = [h for h in bars if h > 0]
assert len(nz) == len(docs), (bars, docs)
top = max(docs.values())
for (k, d), h in zip(sorted(docs.items()), nz):
    assert abs(h / max(nz) - d / top) < 0.01, (k, d, h)
PY

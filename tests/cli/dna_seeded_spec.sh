# The seeded draws of the DNA stages, re-derived in Python from the docs.
# 1. dna species draws its samples as docs/dna.md and docs/formats.md ("Random
# draws") say, re-implemented here in Python from that text and the .fai
# indexes: species uniform, then a chromosome of the split uniform (or, with
# --weights length, the one holding a uniform position in the species' total
# length), then a start uniform in [0, length - L]; all from one SplitMix64
# state that starts at the seed. The ids SPECIES:CHROM:START-END must match.
. "$SRC/tests/cli/lib.sh"
D=$DATA/dna

run() { # run SEED WEIGHTS SPLIT FILES...
  local seed=$1 w=$2 split=$3; shift 3
  "$SLUICE" dna species --window 100 --samples 300 --seed "$seed" --weights "$w" --split "$split" "$@" \
    | "$SLUICE" cat | python3 -c 'import json,sys; [print(json.loads(l)["id"]) for l in sys.stdin]' > "$T/got"
  python3 - "$seed" "$w" "$split" "$@" > "$T/want" <<'PY'
import os, sys
M = (1 << 64) - 1
seed, weights, split, files = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
L, samples = 100, 300
valid, test = ["1", "3", "12", "13"], ["5", "7", "9", "10", "11"]

def split_of(name):
    for part, lst in (("valid", valid), ("test", test)):
        if any(name == e or name == "chr" + e for e in lst):
            return part
    return "train"

def splitmix64(st):
    st[0] = (st[0] + 0x9E3779B97F4A7C15) & M
    z = st[0]
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)

def below(st, n):
    if n <= 1:
        return 0
    m = splitmix64(st) * n
    if (m & M) < n:
        t = (1 << 64) % n
        while (m & M) < t:
            m = splitmix64(st) * n
    return m >> 64

species = []
for f in files:
    name = os.path.basename(f).split(".")[0]
    chroms = [(l.split("\t")[0], int(l.split("\t")[1])) for l in open(f + ".fai")]
    species.append((name, [c for c in chroms if c[1] > 0 and split_of(c[0]) == split]))
st = [seed]
for _ in range(samples):
    name, chroms = species[below(st, len(species))]
    if weights == "length":
        x, acc, ci = below(st, sum(c[1] for c in chroms)), 0, 0
        while ci + 1 < len(chroms):
            acc += chroms[ci][1]
            if acc > x:
                break
            ci += 1
    else:
        ci = below(st, len(chroms))
    chrom, n = chroms[ci]
    start = below(st, n - L + 1) if n > L else 0
    print("%s:%s:%d-%d" % (name, chrom, start, min(start + L, n)))
PY
  diff -q "$T/want" "$T/got" >/dev/null || { diff "$T/want" "$T/got" | head -5; fail "species samples differ from the specification (seed $seed, $w, $split)"; }
  [ "$(sort -u "$T/got" | wc -l)" -gt 100 ] || fail "suspiciously few distinct samples"
}
for seed in 0 5 9007199254740993; do
  for w in uniform length; do
    run $seed $w train "$D/htslib_ce.fa" "$D/lambda_virus.fa" "$D/pysam_ex1.fa"
  done
done
run 7 uniform valid "$D/pysam_ex1.fa"

# 2. tokenize dna --revcomp-prob P --seed S: document k (0-based) is replaced by
# its reverse complement (id suffix /rc) when unit_at(S, k) < P, where unit_at
# starts a state at S XOR (k * 0xD1B54A32D192ED03), discards one draw and takes
# the top 53 bits of the next (docs/formats.md, "Random draws")
for seed in 0 3 123456789; do
  for p in 0.5 0.1; do
    "$SLUICE" tokenize dna "$D/lambda_virus.fa" --window 200 --revcomp-prob $p --seed $seed \
      | "$SLUICE" cat | python3 -c 'import json,sys; [print(json.loads(l)["id"]) for l in sys.stdin]' > "$T/got"
    python3 - $seed $p "$T/got" <<'PY'
import sys
M = (1 << 64) - 1
seed, p, ids = int(sys.argv[1]), float(sys.argv[2]), open(sys.argv[3]).read().split()

def splitmix64(st):
    st[0] = (st[0] + 0x9E3779B97F4A7C15) & M
    z = st[0]
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)

assert len(ids) == 243, len(ids)  # 48502 bases in windows of 200
n_rc = 0
for k, i in enumerate(ids):
    st = [seed ^ ((k * 0xD1B54A32D192ED03) & M)]
    splitmix64(st)
    want = (splitmix64(st) >> 11) / float(1 << 53) < p
    if want != i.endswith("/rc"):
        sys.exit("document %d (%s): reverse complement %s, specification says %s" % (k, i, not want, want))
    n_rc += want
assert 0 < n_rc < len(ids), n_rc
PY
  done
done

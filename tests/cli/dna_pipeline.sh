# sluice tokenize dna with batches big enough for the worker thread (dna/emit.c:
# batches of 1 MB or more are tokenized and written by a worker while the next
# is read; smaller ones in the caller's thread). Inputs are generated here with
# a seeded Python generator that also writes the expected sequences; the ids
# are checked against them through the header's vocabulary (an independent
# decoder), and outputs must be byte-identical for -@ 1, 2 and 4.
. "$SRC/tests/cli/lib.sh"

# Batches end at 256 documents or 8 MB: 2 records of 1.1 MB and 254 reads
# (2.2 MB: the worker), 256 reads (a small batch: the caller, after the
# worker's), then a 1.2 MB record with CRLF 70-column lines and 10 reads (the
# last batch, flushed at the end: the worker).
python3 - "$T/g.fa" "$T/want.tsv" <<'EOF'
import random, sys
rng = random.Random(20261122)
alpha = 'ACGTACGTACGTACGTacgtNnRY.'
block = ''.join(rng.choice(alpha) for _ in range(65536))
recs = []
def rec(name, n):
    start = rng.randrange(65536)
    recs.append((name, (block * (n // 65536 + 2))[start:start + n]))
rec('big0', 1_100_000)
rec('big1', 1_100_001)
for i in range(254 + 256):
    rec('read%d' % i, rng.randint(0, 150))
rec('big2', 1_200_000)
for i in range(10):
    rec('tail%d' % i, rng.randint(0, 150))
with open(sys.argv[1], 'w', newline='') as f:
    for k, (name, s) in enumerate(recs):
        width, nl = (70, '\r\n') if name == 'big2' else (60, '\n')
        f.write('>%s d%d%s' % (name, k, nl))
        for j in range(0, len(s), width):
            f.write(s[j:j + width] + nl)
with open(sys.argv[2], 'w') as f:
    for name, s in recs:
        f.write('%s\t%s\n' % (name, s))
EOF

for opts in "" "--case keep" "--n drop --add-eos" "--kmer 3 --case mask-as-unk" "--revcomp-prob 0.5 --seed 7"; do
  for t in 1 2 4; do
    # shellcheck disable=SC2086
    "$SLUICE" tokenize dna -q -@ $t $opts "$T/g.fa" -o "$T/o$t.tok"
  done
  cmp "$T/o1.tok" "$T/o2.tok" || fail "-@ 1 and -@ 2 differ with options '$opts'"
  cmp "$T/o1.tok" "$T/o4.tok" || fail "-@ 1 and -@ 4 differ with options '$opts'"
done

# the ids (default options and --case keep) against the generated sequences
for opts in "" "--case keep"; do
  # shellcheck disable=SC2086
  "$SLUICE" tokenize dna -q -@ 2 $opts "$T/g.fa" -o "$T/c.tok"
  "$SLUICE" cat --header "$T/c.tok" > "$T/h.json"
  "$SLUICE" cat "$T/c.tok" > "$T/c.jsonl"
  python3 - "$T/want.tsv" "$T/h.json" "$T/c.jsonl" "$opts" <<'EOF'
import json, sys
want = [l.rstrip('\n').split('\t') for l in open(sys.argv[1])]
hdr = json.load(open(sys.argv[2]))
vocab = hdr['extra']['vocab']
docs = [json.loads(l) for l in open(sys.argv[3])]
assert len(docs) == len(want), (len(docs), len(want))
for d, (name, seq) in zip(docs, want):
    assert d['id'] == name, (d['id'], name)
    exp = ''.join(c.upper() if c.upper() in 'ACGTN' else '?' for c in seq)
    got = ''.join(vocab[i] if len(vocab[i]) == 1 else '?' for i in d['ids'])
    assert got == exp, name
    if sys.argv[4] == '--case keep':
        low = [i for i, c in enumerate(seq) if c.islower()]
        assert [k for a, b in d['softmask'] for k in range(a, b)] == low, name
EOF
done

# errors while the worker holds a batch: a bad file after the big records, and
# a failing write; one line, exit 1, no output left behind
expect_fail 1 "no_header.fa:1: no FASTA/FASTQ header" -- \
  "$SLUICE" tokenize dna -q -@ 2 "$T/g.fa" "$DATA/dna/bad/no_header.fa" -o "$T/bad.tok"
no_file "$T/bad.tok"
[ "$(grep -c . "$T/err")" -eq 1 ] || fail "more than one error line: $(cat "$T/err")"
if [ -w /dev/full ]; then
  expect_fail 1 "write failed" -- sh -c '"$1" tokenize dna -q -@ 2 "$2" > /dev/full' sh "$SLUICE" "$T/g.fa"
fi

# sluice tokenize dna / sluice dna species end to end. Expected values come
# from the shared reference vectors (hyenadna_token_vectors.tsv), from the
# files themselves read by Python (an independent FASTA reader), and from
# tests/data/dna/synthetic_intervals_hyena256.tsv (HyenaDNA's interval rule,
# computed by make_fixtures.py).
. "$SRC/tests/cli/lib.sh"
D=$DATA/dna

# --- 1. every reference vector through the binary --------------------------
tail -n +2 "$D/hyenadna_token_vectors.tsv" | while IFS=$'\t' read -r name input data target; do
  L=$(echo "$name" | sed -E 's/.*L=([0-9]+).*/\1/')
  printf '>t\n%s\n' "$input" > "$T/v.fa"
  case "$name" in
    hyena_hg38*)
      args=(--case mask-as-unk --max-length "$L")
      case "$name" in *add_eos*) args+=(--add-eos);; esac
      case "$name" in *replace_N*) args+=(--n pad);; esac
      "$SLUICE" tokenize dna "${args[@]}" "$T/v.fa" | "$SLUICE" cat > "$T/v.jsonl";;
    caduceus_hg38*)
      "$SLUICE" tokenize dna --case mask-as-unk --n pad --add-eos --max-length $((L + 1)) "$T/v.fa" \
        | "$SLUICE" cat > "$T/v.jsonl";;
    species*)
      printf '>chr2\n%s\n' "$input" > "$T/v.fa"
      "$SLUICE" dna species --window "$L" --samples 1 --add-eos "$T/v.fa" | "$SLUICE" cat > "$T/v.jsonl"
      target="";;
    *) fail "unknown vector case $name";;
  esac
  python3 - "$T/v.jsonl" "$data" "$target" "$name" <<'EOF'
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1])]
assert len(docs) == 1, docs
ids = docs[0]['ids']
want_data = [int(x) for x in sys.argv[2].split()]
assert ids[:-1] == want_data, (sys.argv[4], ids, want_data)
if sys.argv[3]:
    assert ids[1:] == [int(x) for x in sys.argv[3].split()], (sys.argv[4], ids)
else:  # species: class label in the metadata, [SEP] last
    assert docs[0]['label'] == 0 and ids[-1] == 1, docs[0]
EOF
done

# --- 2. every sequence file: ids decode (with the header's vocab) to the file's bases
for f in lambda_virus.fa pysam_ex1.fa htslib_ce.fa.gz ce2_chrM.fa.gz dm3_upstream2000_first100.fa \
         synthetic_softmasked_lambda.fa htslib_faidx_edgecases.fa bedtools_test_iupac.fa htslib_multiline.fq \
         bowtie2_reads_1_first2000.fq pysam_faidx_empty_seq.fq; do
  "$SLUICE" tokenize dna --case keep "$D/$f" -o "$T/f.tok"
  "$SLUICE" cat --header "$T/f.tok" > "$T/h.json"
  "$SLUICE" cat "$T/f.tok" > "$T/f.jsonl"
  python3 - "$D/$f" "$T/h.json" "$T/f.jsonl" <<'EOF'
import gzip, json, sys
path, hdr, docs = sys.argv[1], json.load(open(sys.argv[2])), [json.loads(l) for l in open(sys.argv[3])]
raw = open(path, 'rb').read()
if raw[:2] == b'\x1f\x8b': raw = gzip.decompress(raw)
lines = [l.rstrip('\r') for l in raw.decode().split('\n')]
recs = []
if path.endswith('.fq'):
    i = 0
    while i < len(lines):
        if not lines[i].strip(): i += 1; continue
        name = lines[i][1:].split()[0] if lines[i][1:].split() else ''
        i += 1; seq = ''
        while not lines[i].startswith('+'): seq += lines[i]; i += 1
        i += 1; q = 0
        while q < len(seq): q += len(lines[i]); i += 1
        recs.append((name, seq))
else:
    for l in lines:
        if l.startswith('>'):
            w = l[1:].split(); recs.append([w[0] if w else '', ''])
        elif l.strip(): recs[-1][1] += l.strip()
vocab = hdr['extra']['vocab'] if 'extra' in hdr else hdr['vocab']
assert len(docs) == len(recs), (path, len(docs), len(recs))
for d, (name, seq) in zip(docs, recs):
    assert d['id'] == name, (d['id'], name)
    want = ''.join(c.upper() if c.upper() in 'ACGTN' else '?' for c in seq)
    got = ''.join(vocab[i] if len(vocab[i]) == 1 else '?' for i in d['ids'])
    assert got == want, (path, name)
    low = [i for i, c in enumerate(seq) if c.islower()]
    runs = [k for a, b in d['softmask'] for k in range(a, b)]
    assert runs == low, (path, name)
EOF
done

# --- 3. BED intervals the HyenaDNA way (train split, L=256) -------------------
for g in synthetic_softmasked_lambda.fa synthetic_softmasked_lambda.fa.gz; do
  "$SLUICE" tokenize dna -q --bed "$D/synthetic_intervals.bed" --split train --window 256 --case keep "$D/$g" \
    | "$SLUICE" cat > "$T/bed.jsonl"
  python3 - "$T/bed.jsonl" "$D/synthetic_intervals_hyena256.tsv" <<'EOF'
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1])]
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[2]) if not l.startswith('#')]
rows = [r for r in rows if r[3] == 'train']
V = ['[CLS]', '[SEP]', '[BOS]', '[MASK]', '[PAD]', '[RESERVED]', '[UNK]', 'A', 'C', 'G', 'T', 'N']
assert len(docs) == len(rows) > 0
for d, (c, a, b, s, seq) in zip(docs, rows):
    assert (d['chrom'], d['start'], d['end'], d['split']) == (c, int(a), int(b), 'train'), d
    assert ''.join(V[i] if i > 6 else '?' for i in d['ids']) == ''.join(x if x.upper() in 'ACGTN' else '?' for x in seq.upper())
    assert [k for x, y in d['softmask'] for k in range(x, y)] == [i for i, x in enumerate(seq) if x.islower()]
EOF
done
# the same from the .2bit (IUPAC R becomes N there, so compare lengths and ids where the FASTA has ACGTN)
"$SLUICE" tokenize dna --bed "$D/synthetic_intervals.bed" --window 256 "$D/synthetic_softmasked_lambda.2bit" -o "$T/b2.tok"
"$SLUICE" tokenize dna --bed "$D/synthetic_intervals.bed" --window 256 "$D/synthetic_softmasked_lambda.fa" -o "$T/b1.tok"
"$SLUICE" cat "$T/b1.tok" > "$T/b1.jsonl"
"$SLUICE" cat "$T/b2.tok" > "$T/b2.jsonl"
python3 - "$T/b1.jsonl" "$T/b2.jsonl" <<'EOF'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]; b = [json.loads(l) for l in open(sys.argv[2])]
assert len(a) == len(b) == 16
for x, y in zip(a, b):
    assert x['id'] == y['id'] and len(x['ids']) == len(y['ids'])
    assert all(i == j or (i == 6 and j == 11) for i, j in zip(x['ids'], y['ids'])), x['id']
EOF

# a split from a separate 'chrom split' file instead of a column; BED strand '-' gives the reverse complement
printf 'chrSynA train\nchrSynB valid\n' > "$T/splits.txt"
printf 'chrSynA\t100\t110\tx\t0\t+\nchrSynB\t200\t210\ty\t0\t-\nchrSynA\t0\t5\tz\t0\t-\n' > "$T/s.bed"
"$SLUICE" tokenize dna --bed "$T/s.bed" --split-file "$T/splits.txt" --split train "$D/synthetic_softmasked_lambda.fa" \
  | "$SLUICE" cat > "$T/sf.jsonl"
"$SLUICE" tokenize dna --bed "$T/s.bed" "$D/synthetic_softmasked_lambda.fa" | "$SLUICE" cat > "$T/all.jsonl"
python3 - "$T/sf.jsonl" "$T/all.jsonl" "$D/synthetic_softmasked_lambda.fa" <<'EOF'
import json, sys
sf = [json.loads(l) for l in open(sys.argv[1])]; al = [json.loads(l) for l in open(sys.argv[2])]
seqs, cur = {}, None
for l in open(sys.argv[3]):
    l = l.strip()
    if l.startswith('>'): cur = l[1:].split()[0]; seqs[cur] = ''
    else: seqs[cur] += l
V = dict(A=7, C=8, G=9, T=10, N=11)
ids = lambda s: [V.get(c.upper(), 6) for c in s]
rc = lambda s: s[::-1].translate(str.maketrans('ACGTacgt', 'TGCAtgca'))
assert [(d['chrom'], d['name'], d['split']) for d in sf] == [('chrSynA', 'x', 'train'), ('chrSynA', 'z', 'train')], sf
assert [d['ids'] for d in al] == [ids(seqs['chrSynA'][100:110]), ids(rc(seqs['chrSynB'][200:210])), ids(rc(seqs['chrSynA'][0:5]))]
assert al[1]['strand'] == '-' and al[0]['strand'] == '+'
EOF
# right padding, N dropped
printf '>a\nACNNGT\n' > "$T/n.fa"
[ "$("$SLUICE" tokenize dna --n drop --max-length 6 --padding-side right --add-eos "$T/n.fa" | "$SLUICE" cat | tr -d ' ')" \
  = '{"id":"a","ids":[7,8,9,10,1,4],"src_bytes":6}' ] || fail "right padding / --n drop"

# Mamba-paper and Caduceus window modes end to end: every window has L bases, ids match the genome
for mode in mamba caduceus; do
  "$SLUICE" tokenize dna --bed "$D/synthetic_intervals.bed" --window 4096 --bed-windows $mode --split-column 4 \
    --split train "$D/synthetic_softmasked_lambda.2bit" | "$SLUICE" cat > "$T/m.jsonl"
  "$SLUICE" tokenize dna "$D/synthetic_softmasked_lambda.2bit" | "$SLUICE" cat > "$T/g.jsonl"
  python3 - "$T/m.jsonl" "$T/g.jsonl" "$mode" "$D/synthetic_intervals.bed" <<'EOF'
import json, sys
w = [json.loads(l) for l in open(sys.argv[1])]; g = {d['id']: d['ids'] for d in map(json.loads, open(sys.argv[2]))}
bed = [l.split() for l in open(sys.argv[4]) if l.split()[3] == 'train']
per = [(int(e) - int(s)) // 4096 if int(e) - int(s) >= 4096 else 2 for c, s, e, _ in bed] if sys.argv[3] == 'mamba' \
    else [256] * len(bed)
assert len(w) == sum(per), (len(w), sum(per))
for d in w:
    assert d['end'] - d['start'] == min(4096, len(g[d['chrom']])) and d['ids'] == g[d['chrom']][d['start']:d['end']]
EOF
done
expect_fail 2 'caduceus: --window must divide 2\^20' -- "$SLUICE" tokenize dna --bed "$D/synthetic_intervals.bed" \
  --window 1000 --bed-windows caduceus "$D/synthetic_softmasked_lambda.fa"

# the genome on standard input (plain and gzip) gives the same intervals as the file
"$SLUICE" tokenize dna -q --bed "$D/synthetic_intervals.bed" --window 256 "$D/synthetic_softmasked_lambda.fa" -o "$T/bf.tok"
"$SLUICE" tokenize dna -q --bed "$D/synthetic_intervals.bed" --window 256 - < "$D/synthetic_softmasked_lambda.fa" -o "$T/bs.tok"
gzip -c "$D/synthetic_softmasked_lambda.fa" | "$SLUICE" tokenize dna -q --bed "$D/synthetic_intervals.bed" --window 256 -o "$T/bz.tok"
cmp "$T/bf.tok" "$T/bs.tok" && cmp "$T/bf.tok" "$T/bz.tok" || fail "genome on stdin differs"

# --- 4. windows tile the sequence; options combine -----------------------------
"$SLUICE" tokenize dna --window 1000 "$D/lambda_virus.fa" | "$SLUICE" cat > "$T/w.jsonl"
"$SLUICE" tokenize dna "$D/lambda_virus.fa" | "$SLUICE" cat > "$T/whole.jsonl"
python3 - "$T/w.jsonl" "$T/whole.jsonl" <<'EOF'
import json, sys
w = [json.loads(l) for l in open(sys.argv[1])]; whole = json.loads(open(sys.argv[2]).readline())
assert len(w) == 49 and w[-1]['end'] == 48502 and w[-1]['start'] == 48000, (len(w), w[-1]['start'])
assert sum((d['ids'] for d in w), []) == whole['ids']
assert w[3]['id'] == 'gi|9626243|ref|NC_001416.1|:3000-4000'
EOF
n=$("$SLUICE" tokenize dna --window 1000 --stride 500 --drop-last "$D/lambda_virus.fa" | "$SLUICE" cat | wc -l)
[ "$n" -eq 96 ] || fail "stride 500 windows: $n"

# streaming windows == slicing the whole record, for strides below, at and above L
for ls in "64 3" "700 300" "300 700" "1000 1000" "2000 1" "5000 5000"; do
  set -- $ls
  for dl in "" --drop-last; do
    "$SLUICE" tokenize dna --window "$1" --stride "$2" $dl "$D/pysam_ex1.fa" "$D/htslib_faidx_edgecases.fa" \
      | "$SLUICE" cat > "$T/sw.jsonl"
    "$SLUICE" tokenize dna "$D/pysam_ex1.fa" "$D/htslib_faidx_edgecases.fa" | "$SLUICE" cat > "$T/sr.jsonl"
    python3 - "$T/sw.jsonl" "$T/sr.jsonl" "$1" "$2" "$dl" <<'EOF'
import json, sys
w = [json.loads(l) for l in open(sys.argv[1])]; recs = [json.loads(l) for l in open(sys.argv[2])]
L, S, drop = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == '--drop-last'
want = []
for r in recs:
    n, i = len(r['ids']), 0
    while i * S + L <= n:
        want.append((r['id'], i * S, i * S + L)); i += 1
    covered = (i - 1) * S + L if i else 0
    if not drop and covered < n and i * S < n:
        want.append((r['id'], i * S, n))
got = [(d['chrom'], d['start'], d['end']) for d in w]
assert got == want, (L, S, drop, got[:5], want[:5])
ids = {r['id']: r['ids'] for r in recs}
assert all(d['ids'] == ids[d['chrom']][d['start']:d['end']] for d in w)
EOF
  done
done

# --- 5. reverse complements ------------------------------------------------------
"$SLUICE" tokenize dna --revcomp "$D/pysam_ex1.fa" | "$SLUICE" cat > "$T/rc.jsonl"
python3 - "$T/rc.jsonl" <<'EOF'
import json, sys
d = [json.loads(l) for l in open(sys.argv[1])]
comp = {7: 10, 10: 7, 8: 9, 9: 8}
assert [x['id'] for x in d] == ['chr1', 'chr1/rc', 'chr2', 'chr2/rc']
for f, r in ((d[0], d[1]), (d[2], d[3])):
    assert r['revcomp'] is True and [comp.get(i, i) for i in reversed(f['ids'])] == r['ids']
EOF
"$SLUICE" tokenize dna --revcomp-prob 0.5 --seed 7 "$D/dm3_upstream2000_first100.fa" -o "$T/p1.tok"
"$SLUICE" tokenize dna -@ 1 --revcomp-prob 0.5 --seed 7 "$D/dm3_upstream2000_first100.fa" -o "$T/p2.tok"
cmp "$T/p1.tok" "$T/p2.tok" || fail "--revcomp-prob is not deterministic across thread counts"
nrc=$("$SLUICE" cat "$T/p1.tok" | grep -c '"revcomp":true' || true)
[ "$nrc" -gt 25 ] && [ "$nrc" -lt 75 ] || fail "--revcomp-prob 0.5 flipped $nrc of 100"
"$SLUICE" tokenize dna --revcomp-prob 0.5 --seed 8 "$D/dm3_upstream2000_first100.fa" -o "$T/p3.tok"
! cmp -s "$T/p1.tok" "$T/p3.tok" || fail "--seed has no effect"

# batches of >= 1 MB of bases are tokenized in parallel: the output must not depend on -@
"$SLUICE" tokenize dna -@ 1 --window 4096 --revcomp-prob 0.5 --seed 2 --case keep "$D/htslib_ce.fa" -o "$T/t1.tok"
"$SLUICE" tokenize dna -@ 4 --window 4096 --revcomp-prob 0.5 --seed 2 --case keep "$D/htslib_ce.fa" -o "$T/t4.tok"
cmp "$T/t1.tok" "$T/t4.tok" || fail "parallel batches change the output"
[ "$("$SLUICE" cat "$T/t4.tok" | wc -l)" -eq $(( 1009800 / 4096 + 1 + 6 * 2 )) ] || fail "window count"

# --- 6. k-mers, stdin, compressed .2bit, threads -----------------------------------
"$SLUICE" tokenize dna --kmer 6 --stride 3 "$D/pysam_ex1.fa" | "$SLUICE" cat --header > "$T/k.json"
python3 -c "import json,sys; h=json.load(open(sys.argv[1])); v=h['extra']['vocab']; assert len(v)==4101 and v[5]=='AAAAAA' and v[6]=='AAAAAT', v[:9]" "$T/k.json"
n=$("$SLUICE" tokenize dna --kmer 6 --stride 3 "$D/pysam_ex1.fa" | "$SLUICE" cat | head -1 | python3 -c "import json,sys; print(len(json.load(sys.stdin)['ids']))")
[ "$n" -eq $(( (1575 - 6) / 3 + 1 )) ] || fail "k-mer count $n"
"$SLUICE" tokenize dna "$D/htslib_ce.fa" -o "$T/a.tok"
gzip -c "$D/htslib_ce.fa" | "$SLUICE" tokenize dna -@ 2 -o "$T/b.tok"
cmp "$T/a.tok" "$T/b.tok" || fail "stdin gzip differs from the file"
"$SLUICE" tokenize dna "$D/synthetic_softmasked_lambda.2bit" -o "$T/c.tok"
zstd -q -c "$D/synthetic_softmasked_lambda.2bit" > "$T/s.2bit.zst"
"$SLUICE" tokenize dna "$T/s.2bit.zst" -o "$T/d.tok"
cmp "$T/c.tok" "$T/d.tok" || fail "compressed .2bit differs"

# --- 7. species: labels, splits, determinism ----------------------------------------
"$SLUICE" dna species --window 50 --samples 200 --seed 5 --valid-chroms CHROMOSOME_II --test-chroms chr2 \
  "$D/htslib_ce.fa" "$D/pysam_ex1.fa" -o "$T/s1.tok"
"$SLUICE" dna species -@ 1 --window 50 --samples 200 --seed 5 --valid-chroms CHROMOSOME_II --test-chroms chr2 \
  "$D/htslib_ce.fa.gz" "$D/pysam_ex1.fa" -q -o "$T/s2.tok"
cmp "$T/s1.tok" "$T/s2.tok" || fail "species output depends on threads or on compression"
"$SLUICE" cat "$T/s1.tok" > "$T/s.jsonl"
python3 - "$T/s.jsonl" <<'EOF'
import json, sys
d = [json.loads(l) for l in open(sys.argv[1])]
assert len(d) == 200
labels = [x['label'] for x in d]
assert 60 < labels.count(0) < 140, labels.count(0)
for x in d:
    assert len(x['ids']) == 50 and x['end'] - x['start'] == 50
    assert x['chrom'] != 'CHROMOSOME_II' and x['chrom'] != 'chr2'      # valid/test chromosomes excluded
    assert x['species'] == ['htslib_ce', 'pysam_ex1'][x['label']]
EOF
"$SLUICE" dna species --window 50 --samples 20 --split test --test-chroms chr2,CHROMOSOME_X \
  "$D/htslib_ce.fa" "$D/pysam_ex1.fa" | "$SLUICE" cat | grep -v -q '"chrom":"chr1"' || fail "test split"
# HyenaDNA's directory layout: species/<name>/chr<N>.fna[.gz], one chromosome per file
mkdir -p "$T/sp/apeA" "$T/sp/apeB"
printf '>NC_1 first\nAAAAAAAAAACCCCCCCCCC\n>ignored\nGGGG\n' > "$T/sp/apeA/chr1.fna"       # valid split
printf '>NC_2\nACGTACGTACGTACGTACGT\n' | gzip -c > "$T/sp/apeA/chr2.fna.gz"              # train
printf '>NC_4\nTTTTTTTTTTTTTTTTTTTT\n' > "$T/sp/apeA/chr4.fa"                           # train
printf '>NC_2x\nCCCCCCCCCCCCCCCCCCCC\n' > "$T/sp/apeB/chr2.fna"                         # train, wins over .gz
printf '>NC_2y\nGGGGGGGGGGGGGGGGGGGG\n' | gzip -c > "$T/sp/apeB/chr2.fna.gz"
printf '>NC_5\nAAAAAAAAAAAAAAAAAAAA\n' > "$T/sp/apeB/chr5.fna"                          # test
"$SLUICE" dna species -q --window 8 --samples 300 --seed 2 "$T/sp/apeA" "$T/sp/apeB/" | "$SLUICE" cat > "$T/sp.jsonl"
"$SLUICE" cat --header <("$SLUICE" dna species -q --window 8 --samples 1 "$T/sp/apeA" "$T/sp/apeB") > "$T/sph.json"
python3 - "$T/sp.jsonl" "$T/sph.json" <<'EOF'
import json, sys
d = [json.loads(l) for l in open(sys.argv[1])]
assert json.load(open(sys.argv[2]))['extra']['species'] == ['apeA', 'apeB']
seen = set()
for x in d:
    seen.add((x['species'], x['chrom']))
    want = {('apeA', 'chr2'): 'ACGT', ('apeA', 'chr4'): 'T', ('apeB', 'chr2'): 'C'}[(x['species'], x['chrom'])]
    V = dict(A=7, C=8, G=9, T=10)
    assert x['ids'] == [V[c] for c in (want * 20)[x['start'] % len(want):][:8]], x
    assert x['label'] == (x['species'] == 'apeB')
assert seen == {('apeA', 'chr2'), ('apeA', 'chr4'), ('apeB', 'chr2')}, seen
EOF
# --weights length: chromosomes drawn in proportion to their length
python3 -c "print('>chr2\n' + 'A' * 1000 + '\n>chr4\n' + 'C' * 9000)" > "$T/w.fa"
for w in uniform length; do
  n=$("$SLUICE" dna species --window 10 --samples 1000 --weights $w "$T/w.fa" | "$SLUICE" cat | grep -c '"chrom":"chr4"')
  case $w in
    uniform) [ "$n" -gt 420 ] && [ "$n" -lt 580 ] || fail "uniform chromosome weights: $n of 1000 from chr4";;
    length) [ "$n" -gt 860 ] && [ "$n" -lt 940 ] || fail "length weights: $n of 1000 from chr4 (expected ~900)";;
  esac
done
# --hyena-tail-quirk: a start in the last 2L bases is cut at length - L and left-padded with N
printf '>chr2\nACGTACGTACGTACGTACGT\n' > "$T/q.fa"
"$SLUICE" dna species --window 8 --samples 200 --seed 3 --hyena-tail-quirk "$T/q.fa" | "$SLUICE" cat > "$T/q.jsonl"
python3 - "$T/q.jsonl" <<'EOF'
import json, sys
seq = 'ACGTACGTACGTACGTACGT'; V = dict(A=7, C=8, G=9, T=10, N=11); L = 8; right = len(seq) - L
for x in map(json.loads, open(sys.argv[1])):
    s = x['start']
    assert x['ids'] == [V[c] for c in seq[s:min(s + L, right)].rjust(L, 'N')], x
EOF

echo ok

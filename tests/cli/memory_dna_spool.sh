# tokenize dna --in-memory N: a record longer than N bases is copied to a
# temporary file and tokenized from there in pieces of 4M bases, twice (to
# count its tokens, which a record states before them, and to write them).
# Its output must be byte-identical to holding the record whole (the 0.1.0
# way, still used below N), for every option that changes the tokens: case
# and N policies, k-mers with strides, reverse complements, add_eos,
# truncation and padding on both sides, soft-mask runs. The records put
# soft-masked and N runs across the piece boundaries (4 MiB, 8 MiB).
. "$SRC/tests/cli/lib.sh"
python3 - "$T/sp.fa" <<'EOF'
import random, sys
rnd = random.Random(5)
P = 4 << 20
acgt = bytes.maketrans(bytes(range(256)), b"ACGT" * 64)
def rec(n):
    s = bytearray(rnd.randbytes(n).translate(acgt))
    for _ in range(n // 50000):
        a, l = rnd.randrange(n), rnd.randrange(1, 300)
        s[a:a + l] = s[a:a + l].lower()
        b, l = rnd.randrange(n), rnd.randrange(1, 40)
        s[b:b + l] = b"N" * len(s[b:b + l])
    for m in (P, 2 * P):  # runs across the piece boundaries
        if m + 23 < n:
            s[m - 5:m + 5] = s[m - 5:m + 5].lower()
            s[m + 20:m + 23] = b"NNN"
            s[m - 30:m - 28] = b"nn"
    return s.decode()
with open(sys.argv[1], "w") as f:
    for name, n in (("small1", 1000), ("big", 2 * P + 100_000), ("small2", 37), ("edge", P), ("tail", 5000)):
        s = rec(n)
        f.write(f">{name} desc of {name}\n" + "\n".join(s[i:i + 60] for i in range(0, n, 60)) + "\n")
EOF
n=0
while read -r opts; do
  # shellcheck disable=SC2086
  TMPDIR=$T "$SLUICE" tokenize dna -q $opts --in-memory 2000 "$T/sp.fa" -o "$T/spooled.tok"
  # shellcheck disable=SC2086
  "$SLUICE" tokenize dna -q $opts "$T/sp.fa" -o "$T/held.tok"
  cmp -s "$T/spooled.tok" "$T/held.tok" || fail "tokenize dna $opts: --in-memory 2000 changes the output"
  n=$((n + 1))
done <<'EOF'
--add-eos
--kmer 6
--kmer 3 --kmer-stride 2
--kmer 5 --kmer-stride 3 --n drop
--revcomp
--revcomp-prob 0.5 --seed 3
--case keep
--case mask-as-unk
--n drop
--n pad
--max-length 5000000 --add-eos
--max-length 20000000
--max-length 20000000 --padding-side right --case keep
--kmer 6 --case keep --n drop --revcomp
--case keep --max-length 3000 --add-eos --revcomp
--kmer 4 --max-length 100000 --add-eos --padding-side right
EOF
[ $n -eq 16 ] || fail "ran $n option sets"
# every record is there, with one token per base
"$SLUICE" tokenize dna --in-memory 2000 "$T/sp.fa" -o "$T/s.tok"
[ "$("$SLUICE" cat "$T/s.tok" | wc -l)" -eq 5 ] || fail "expected 5 documents"
"$SLUICE" cat "$T/s.tok" | grep '"id":"big"' | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); assert len(d["ids"]) == 2 * (4 << 20) + 100000, len(d["ids"])' ||
  fail "record big: wrong token count"
! ls "$T"/sluice-record-* >/dev/null 2>&1 || fail "a temporary file was left in TMPDIR"

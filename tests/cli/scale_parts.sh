# --part R/N (docs/scale-out.md): for N in 1 2 3 7 64 the outputs
# of parts 0..N-1 (JSON Lines: their byte concatenation; token streams: a
# directory of part files read as one stream) equal the output of one run on
# the test corpora (JSON Lines plain and compressed, plain text by lines,
# FASTA, FASTQ, .2bit, audio, species samples, pre-tokenized ids, text
# tokenized by tokenize bpe|char from the raw files); `shard` of
# a part directory equals `shard` of the whole; large plain files are really
# cut (several parts hold some of one file) and never inside a record.
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
NS="1 2 3 7 64"

# a JSON Lines output: parts concatenated byte for byte == one run
same_jsonl() { # NAME ARGS...
  local name=$1; shift
  "$S" "$@" -q -o "$T/whole" || fail "$name: the whole run failed"
  [ -s "$T/whole" ] || fail "$name: empty reference output"
  for N in $NS; do
    : > "$T/cat"
    for ((r = 0; r < N; r++)); do
      "$S" "$@" -q --part "$r/$N" -o "$T/p" || fail "$name: part $r/$N failed"
      cat "$T/p" >> "$T/cat"
    done
    cmp "$T/whole" "$T/cat" || fail "$name: parts of $N concatenated differ from one run"
  done
}
# a token stream: a directory of part files read as one stream == one run,
# and shard of the directory == shard of the whole
same_tokens() { # NAME ARGS...
  local name=$1; shift
  "$S" "$@" -q -o "$T/whole.tok" || fail "$name: the whole run failed"
  "$S" cat "$T/whole.tok" > "$T/whole.jsonl"
  [ -s "$T/whole.jsonl" ] || fail "$name: no documents in the reference"
  for N in $NS; do
    rm -rf "$T/pd"; mkdir "$T/pd"
    for ((r = 0; r < N; r++)); do
      "$S" "$@" -q --part "$r/$N" -o "$T/pd/part-$r-of-$N.tok" || fail "$name: part $r/$N failed"
    done
    "$S" cat "$T/pd" | cmp - "$T/whole.jsonl" || fail "$name: parts of $N read as one stream differ"
  done
  rm -rf "$T/sh.whole" "$T/sh.parts"
  "$S" shard -q --seq-len 64 --pad 0 --shuffle --seed 5 --val-fraction 0.1 --max-file-bytes 4096 "$T/whole.tok" -o "$T/sh.whole"
  "$S" shard -q --seq-len 64 --pad 0 --shuffle --seed 5 --val-fraction 0.1 --max-file-bytes 4096 "$T/pd" -o "$T/sh.parts"
  diff -r "$T/sh.whole" "$T/sh.parts" || fail "$name: shard of the parts differs from shard of the whole"
}

# ---- text: JSON Lines (with and without ids, blank lines), compressed, --lines
B=$DATA/bpe
awk '{ print; if (NR % 9 == 0) print "" }' "$B/corpus.jsonl" > "$T/a.jsonl"
# documents without "id" get SOURCE:N, N counted over the whole file
sed -n 's/^{"id": "[^"]*", /{/p' "$B/corpus.jsonl" | awk '{ print; if (NR % 4 == 0) print "  " }' > "$T/noid.jsonl"
grep -q '"id"' "$T/noid.jsonl" && fail "fixture: noid.jsonl has ids"
head -n 30 "$DATA/read/reference_input.jsonl" | gzip -c > "$T/c.jsonl.gz"
head -n 20 "$B/corpus.jsonl" | zstd -q -c > "$T/d.jsonl.zst"
awk 'NR % 5 == 0 { print "" } { print "line " NR ": " $0 }' "$SRC/docs/architecture.md" > "$T/lines.txt"
: > "$T/empty.jsonl"
same_jsonl "read jsonl" read "$T/a.jsonl" "$T/noid.jsonl" "$T/c.jsonl.gz" "$T/empty.jsonl" "$T/d.jsonl.zst" "$T/a.jsonl"
grep -q '"id":"[^"]*noid.jsonl:1[0-9]"' "$T/whole" || fail "fixture: no generated ids"
same_jsonl "read --lines" read --lines "$T/lines.txt" "$T/noid.jsonl" "$T/lines.txt"
same_jsonl "read whole texts" read "$SRC/docs/architecture.md" "$T/lines.txt" "$SRC/README.md"

# the cut is real: one plain file in 7 parts puts documents in several parts,
# and every part's lines are whole JSON objects
nonempty=0
for ((r = 0; r < 7; r++)); do
  "$S" read -q --part "$r/7" "$T/a.jsonl" -o "$T/p$r"
  [ -s "$T/p$r" ] && nonempty=$((nonempty + 1))
  python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$T/p$r" || fail "part $r/7: not JSON lines"
done
[ "$nonempty" -ge 5 ] || fail "one file in 7 parts: only $nonempty parts hold documents (not cut)"
# N larger than the input: empty parts are empty outputs, and one part has all
"$S" read -q --part 63/64 "$T/empty.jsonl" -o "$T/e"
[ -f "$T/e" ] && [ ! -s "$T/e" ] || fail "an empty part must be an empty file"

# the text pipeline: read --part | tokenize bpe, each part a token stream
"$S" tokenize bpe -q -t "$B/neox-tokenizer.json" "$T/a.jsonl" -o "$T/bpe.whole.tok"
rm -rf "$T/bpe"; mkdir "$T/bpe"
for ((r = 0; r < 3; r++)); do
  "$S" read -q --part "$r/3" "$T/a.jsonl" | "$S" tokenize bpe -q -t "$B/neox-tokenizer.json" -o "$T/bpe/t-$r-of-3.tok"
done
"$S" cat "$T/bpe" | cmp - <("$S" cat "$T/bpe.whole.tok") || fail "read --part | tokenize bpe"

# tokenize bpe|char read raw files themselves: --part on them directly (the
# same cuts as read: JSON Lines and --lines text at line starts, compressed
# and whole-file texts whole), the parts read as one stream == one run, and
# == the read --part | tokenize pipeline above
same_tokens "tokenize bpe" tokenize bpe -t "$B/tiny-tokenizer.json" --append-eos "$T/a.jsonl" "$T/noid.jsonl" \
  "$T/c.jsonl.gz" "$T/empty.jsonl" "$T/d.jsonl.zst" "$T/a.jsonl"
same_tokens "tokenize bpe --lines" tokenize bpe -t "$B/tiny-tokenizer.json" --lines "$T/lines.txt" "$T/noid.jsonl" \
  "$SRC/README.md"
rm -rf "$T/bpe2"; mkdir "$T/bpe2"
for ((r = 0; r < 3; r++)); do
  "$S" tokenize bpe -q -t "$B/neox-tokenizer.json" --part "$r/3" "$T/a.jsonl" -o "$T/bpe2/t-$r-of-3.tok"
done
"$S" cat "$T/bpe2" | cmp - <("$S" cat "$T/bpe.whole.tok") || fail "tokenize bpe --part (GPT-NeoX)"
[ "$("$S" cat "$T/bpe2/t-1-of-3.tok" | wc -l)" -gt 0 ] || fail "tokenize bpe --part 1/3: one file not cut"
same_tokens "tokenize char" tokenize char --prepend-bos "$T/a.jsonl" "$T/c.jsonl.gz" "$T/noid.jsonl"
"$S" tokenize char -q --build-vocab --append-eos --save-vocab "$T/cv.json" "$T/a.jsonl" "$T/noid.jsonl" -o "$T/cv.tok"
same_tokens "tokenize char codepoint" tokenize char --vocab "$T/cv.json" --append-eos "$T/a.jsonl" "$T/noid.jsonl"
"$S" cat "$T/cv.tok" | cmp - "$T/whole.jsonl" || fail "tokenize char --vocab differs from --build-vocab on the same files"
expect_fail 2 'exclude each other' -- "$S" tokenize char --part 0/2 --build-vocab "$T/a.jsonl"
expect_fail 2 'exclude each other' -- "$S" tokenize char --part 0/2 --save-vocab "$T/v2.json" "$T/a.jsonl"
expect_fail 1 'standard input cannot be cut' -- "$S" tokenize bpe -t "$B/tiny-tokenizer.json" --part 0/2 - < "$T/a.jsonl"

# ---- pre-tokenized ids (documents without "id" are named SOURCE:LINE)
awk 'BEGIN { srand(11); for (i = 0; i < 400; i++) { n = int(rand() * 60);
  printf (i % 3 ? "{\"id\":\"d%d\",\"ids\":[" : "{\"ids\":["), i; for (j = 0; j < n; j++) printf "%s%d", j ? "," : "", int(rand() * 999);
  printf "]}\n"; if (i % 13 == 0) print "" } }' > "$T/ids.jsonl"
head -n 50 "$T/ids.jsonl" | gzip -c > "$T/ids2.jsonl.gz"
same_tokens "tokenize ids" tokenize ids --vocab-size 1000 "$T/ids.jsonl" "$T/ids2.jsonl.gz" "$T/ids.jsonl"

# ---- DNA: FASTA, FASTQ (cut between records), .2bit, compressed; windows and reverse complements
D=$DATA/dna
same_tokens "tokenize dna" tokenize dna "$D/pysam_ex1.fa" "$D/lambda_virus.fa" "$D/ce2_chrM.fa.gz" \
  "$D/bowtie2_reads_1_first2000.fq" "$D/htslib_multiline.fq" "$D/dm3_upstream2000_first100.fa"
same_tokens "tokenize dna windows" tokenize dna --window 500 --revcomp "$D/htslib_longline.fq" \
  "$D/lambda_virus.fa" "$D"/*.2bit "$D/pysam_ex1.fa"
# plain 4-line FASTQ is cut between records, also where quality lines begin
# with '@' or '+' (made so here: a quarter of them do)
awk 'BEGIN { srand(3); q = "@+IJ#5?@"; for (i = 0; i < 400; i++) { n = 5 + int(rand() * 70); s = ""; t = "";
  for (j = 0; j < n; j++) { s = s substr("ACGTN", 1 + int(rand() * 5), 1); t = t substr(q, 1 + int(rand() * 8), 1) }
  if (i % 4 == 0) t = "@" substr(t, 2); if (i % 4 == 1) t = "+" substr(t, 2);
  printf "@r%d desc %d\n%s\n+\n%s\n", i, i, s, t } }' > "$T/q.fq"
same_tokens "tokenize dna fastq" tokenize dna "$T/q.fq" "$D/htslib_multiline.fq" "$T/q.fq" "$D/bowtie2_reads_1_first2000.fq"
nonempty=0
for ((r = 0; r < 7; r++)); do
  "$S" tokenize dna -q --part "$r/7" "$T/q.fq" -o "$T/q$r.tok"
  [ -n "$("$S" cat "$T/q$r.tok" | head -n 1)" ] && nonempty=$((nonempty + 1))
done
[ "$nonempty" -ge 5 ] || fail "one FASTQ file in 7 parts: only $nonempty parts hold records (not cut)"
# plain FASTA is cut before '>' lines: 100 records of ~2 kb in 7 parts, all hold records
nonempty=0
for ((r = 0; r < 7; r++)); do
  "$S" tokenize dna -q --part "$r/7" "$D/dm3_upstream2000_first100.fa" -o "$T/f$r.tok"
  [ -n "$("$S" cat "$T/f$r.tok" | head -n 1)" ] && nonempty=$((nonempty + 1))
done
[ "$nonempty" -eq 7 ] || fail "a 100-record FASTA file in 7 parts: only $nonempty parts hold records (not cut)"
# records of very different sizes, with and without windows, a FASTA whose records are
# preceded by blank lines, and one with '>' inside a description
{ printf '\n\n'; cat "$D/htslib_ce.fa"; printf '>x desc with > inside\nACGT\nTTGA\n>y\n\nAC\n'; } > "$T/odd.fa"
same_tokens "tokenize dna fasta cut" tokenize dna "$D/htslib_ce.fa" "$T/odd.fa" "$D/dm3_upstream2000_first100.fa"
same_tokens "tokenize dna fasta windows" tokenize dna --window 300 --stride 150 --revcomp "$T/odd.fa" \
  "$D/dm3_upstream2000_first100.fa"
same_tokens "dna species" dna species --window 128 --samples 70 --seed 4 --valid-chroms x --test-chroms y \
  "$D/htslib_ce.fa" "$D/lambda_virus.fa" "$D/pysam_ex1.fa"

# ---- audio (whole files; the split is drawn over all inputs)
A=$DATA/audio
same_tokens "tokenize audio" tokenize audio --clip-len 4000 "$A/sc09_like_espeak" "$A/alsa_Front_Center_16k.wav"
same_tokens "tokenize audio split" tokenize audio --pad-to 16000 --split 60:20:20 --part train "$A/sc09_like_espeak"

# ---- errors
expect_fail 2 'part slurm: SLURM_ARRAY_TASK_ID is not set' -- env -u SLURM_ARRAY_TASK_ID "$S" read --part slurm "$T/a.jsonl"
expect_fail 2 "needs 0 <= R < N" -- "$S" read --part 3/3 "$T/a.jsonl"
expect_fail 2 "expected R/N" -- "$S" tokenize ids --vocab-size 9 --part 3 "$T/ids.jsonl"
expect_fail 1 'standard input cannot be cut' -- "$S" read --part 0/2 - < "$T/a.jsonl"
expect_fail 2 'revcomp-prob' -- "$S" tokenize dna --part 0/2 --revcomp-prob 0.5 "$D/lambda_virus.fa"
# slurm: R and N from the array (SLURM_ARRAY_TASK_ID - MIN, COUNT)
SLURM_ARRAY_TASK_ID=12 SLURM_ARRAY_TASK_MIN=10 SLURM_ARRAY_TASK_MAX=12 SLURM_ARRAY_TASK_COUNT=3 \
  "$S" read -q --part slurm "$T/a.jsonl" -o "$T/s2"
"$S" read -q --part 2/3 "$T/a.jsonl" -o "$T/p2"
cmp "$T/s2" "$T/p2" || fail "--part slurm is not part 2/3 of an array 10-12"
expect_fail 2 'not a contiguous range' -- env SLURM_ARRAY_TASK_ID=4 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=8 \
  SLURM_ARRAY_TASK_COUNT=5 "$S" read --part slurm "$T/a.jsonl"
echo "scale_parts: stages ok"

# ---- filter --scores: several files or a directory of part files give the
# cutoffs of all the scores (the same selection as one file of all of them)
awk 'BEGIN { srand(9); for (i = 0; i < 500; i++) printf "{\"id\":\"k%03d\",\"ids\":[1,2,%d]}\n", i, i % 50 }' > "$T/k.jsonl"
"$S" tokenize ids -q --vocab-size 100 "$T/k.jsonl" -o "$T/k.tok"
awk 'BEGIN { srand(10); for (i = 0; i < 500; i++) printf "{\"id\":\"k%03d\",\"nll\":%.6f}\n", i, rand() * 1000 }' > "$T/k.scores"
mkdir "$T/ks"
awk '{ print > sprintf("'"$T"'/ks/scores-%d-of-3.jsonl", (NR - 1) * 3 / 500) }' "$T/k.scores"
[ "$(ls "$T/ks" | wc -l)" = 3 ] || fail "fixture: 3 score parts"
for sel in "--keep-pct 10:70" "--bucket middle" "--bucket head --cutoffs 20:50"; do
  # shellcheck disable=SC2086
  "$S" filter -q $sel --field nll --scores "$T/k.scores" "$T/k.tok" -o "$T/kw.tok"
  # shellcheck disable=SC2086
  "$S" filter -q $sel --field nll --scores "$T/ks" "$T/k.tok" -o "$T/kd.tok"
  # shellcheck disable=SC2086
  "$S" filter -q $sel --field nll --scores "$T/ks/scores-0-of-3.jsonl" --scores "$T/ks/scores-1-of-3.jsonl" \
    --scores "$T/ks/scores-2-of-3.jsonl" "$T/k.tok" -o "$T/kf.tok"
  cmp "$T/kw.tok" "$T/kd.tok" || fail "filter $sel --scores DIR differs from one score file"
  cmp "$T/kw.tok" "$T/kf.tok" || fail "filter $sel --scores repeated differs from one score file"
  n=$("$S" cat "$T/kw.tok" | wc -l)
  [ "$n" -gt 50 ] && [ "$n" -lt 450 ] || fail "filter $sel kept $n of 500"
done
rm "$T/ks/scores-1-of-3.jsonl"
expect_fail 1 'part 1 of 3 is missing' -- "$S" filter --keep-pct 10:70 --field nll --scores "$T/ks" "$T/k.tok" -o "$T/x.tok"
echo "scale_parts: filter --scores ok"

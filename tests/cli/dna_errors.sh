# Bad DNA input of every kind: one clear line naming the file and position,
# exit 1 (2 for usage errors), no output file, no crash.
. "$SRC/tests/cli/lib.sh"
D=$DATA/dna
B=$D/bad
O=$T/out.tok
expect_fail 1 'no_header.fa:1: no FASTA/FASTQ header' -- "$SLUICE" tokenize dna "$B/no_header.fa" -o "$O"; no_file "$O"
expect_fail 1 'binary_in_sequence.fa:3: invalid byte 0x00' -- "$SLUICE" tokenize dna "$B/binary_in_sequence.fa" -o "$O"; no_file "$O"
expect_fail 1 'truncated_quality.fq:5: truncated FASTQ record' -- "$SLUICE" tokenize dna "$B/truncated_quality.fq" -o "$O"; no_file "$O"
expect_fail 1 'long_quality.fq:4: .* 6 quality characters for 4 bases' -- "$SLUICE" tokenize dna "$B/long_quality.fq" -o "$O"; no_file "$O"
expect_fail 1 'truncated_gzip.fa.gz: .*truncated' -- "$SLUICE" tokenize dna "$B/truncated_gzip.fa.gz" -o "$O"; no_file "$O"
expect_fail 1 'truncated_bgzf.fa.gz: .*truncated' -- "$SLUICE" tokenize dna "$B/truncated_bgzf.fa.gz" -o "$O"; no_file "$O"
expect_fail 1 'lying_offset.2bit: offset 141: .*record offset 1073741824 outside the file' -- "$SLUICE" tokenize dna "$B/lying_offset.2bit" -o "$O"; no_file "$O"
expect_fail 1 'huge_nblock_count.2bit: offset 149: .*claims 2147483647 N blocks' -- "$SLUICE" tokenize dna "$B/huge_nblock_count.2bit" -o "$O"; no_file "$O"
expect_fail 1 'dna_size_past_end.2bit: offset 161: ' -- "$SLUICE" tokenize dna "$B/dna_size_past_end.2bit" -o "$O"; no_file "$O"
expect_fail 1 'truncated_header.2bit: offset 0: file too short' -- "$SLUICE" tokenize dna "$B/truncated_header.2bit" -o "$O"; no_file "$O"
# a good file then a bad one: still no partial output
expect_fail 1 'no_header.fa:1:' -- "$SLUICE" tokenize dna "$D/lambda_virus.fa" "$B/no_header.fa" -o "$O"; no_file "$O"
# truncated gzip from stdin
head -c 2000 "$D/ce2_chrM.fa.gz" > "$T/cut.gz"
expect_fail 1 'truncated' -- sh -c "cat '$T/cut.gz' | '$SLUICE' tokenize dna -o '$O'"; no_file "$O"
# BED problems
expect_fail 1 'bad_interval.bed:1: BED start 100 is after end 50' -- "$SLUICE" tokenize dna --bed "$B/bad_interval.bed" "$D/synthetic_softmasked_lambda.fa" -o "$O"; no_file "$O"
printf 'chrNope\t0\t10\n' > "$T/x.bed"
expect_fail 1 'x.bed:1: chromosome .chrNope. is not in' -- "$SLUICE" tokenize dna --bed "$T/x.bed" "$D/synthetic_softmasked_lambda.fa" -o "$O"; no_file "$O"
printf 'chrSynC\t0\t20\n' > "$T/y.bed"
expect_fail 1 'y.bed:1: interval chrSynC:0-20 runs past the chromosome end' -- "$SLUICE" tokenize dna --bed "$T/y.bed" "$D/synthetic_softmasked_lambda.fa" -o "$O"; no_file "$O"
# a stale .fai next to a FASTA is detected, not trusted
cp "$D/synthetic_softmasked_lambda.fa" "$T/g.fa"
printf 'chrSynA\t31537\t50\t60\t61\nchrSynB\t18513\t32121\t60\t61\nchrSynC\t10\t50952\t10\t11\n' > "$T/g.fa.fai"
printf 'chrSynA\t0\t100\n' > "$T/z.bed"
expect_fail 1 'g.fa: offset [0-9]+: unexpected byte .* does not match the file' -- "$SLUICE" tokenize dna --bed "$T/z.bed" "$T/g.fa" -o "$O"; no_file "$O"
# an empty record: samtools faidx (1.24, pysam 0.24.1) leaves it out of the .fai it writes
# ("a\t2\t3\t2\t3" and "b\t1\t12\t1\t2" only), pyfaidx 0.9.2.2 indexes it with length 0.
# With that .fai the record is missing and the error says why; without one sluice builds
# its own index (as pyfaidx) and the interval gives one empty document.
printf '>a\nAC\n>e\n>b\nA\n' > "$T/e.fa"
printf 'a\t2\t3\t2\t3\nb\t1\t12\t1\t2\n' > "$T/e.fa.fai"
printf 'e\t0\t0\n' > "$T/e.bed"
expect_fail 1 "e.bed:1: chromosome 'e' is not in .*e.fa [(]its index .*e.fa.fai, which samtools faidx writes without empty records[)]" -- "$SLUICE" tokenize dna --bed "$T/e.bed" "$T/e.fa" -o "$O"; no_file "$O"
rm "$T/e.fa.fai"
"$SLUICE" tokenize dna -q --bed "$T/e.bed" "$T/e.fa" -o "$O"
"$SLUICE" cat "$O" > "$T/e.jsonl"
grep -q '^{"id":"e:0-0","ids":\[\],' "$T/e.jsonl" || { echo "empty record interval: $(cat "$T/e.jsonl")"; exit 1; }
rm -f "$O"
# species: a genome with no chromosome in the split
expect_fail 1 'pysam_ex1.fa: no non-empty chromosome belongs to the test split' -- "$SLUICE" dna species --split test "$D/pysam_ex1.fa" -o "$O"; no_file "$O"
# usage errors
expect_fail 2 "--case: 'lower' is not one of upper|keep|mask-as-unk" -- "$SLUICE" tokenize dna --case lower "$D/pysam_ex1.fa"
expect_fail 2 '--kmer: 13 is out of range' -- "$SLUICE" tokenize dna --kmer 13 "$D/pysam_ex1.fa"
expect_fail 2 '--stride needs --window or --kmer' -- "$SLUICE" tokenize dna --stride 3 "$D/pysam_ex1.fa"
expect_fail 2 '--bed needs exactly one genome file' -- "$SLUICE" tokenize dna --bed "$T/z.bed" "$D/pysam_ex1.fa" "$D/lambda_virus.fa"
expect_fail 2 '--split.* need --bed' -- "$SLUICE" tokenize dna --split train "$D/pysam_ex1.fa"
expect_fail 2 'give one genome file per species' -- "$SLUICE" dna species
expect_fail 2 '--names lists 1 names for 2 files' -- "$SLUICE" dna species --names a "$D/pysam_ex1.fa" "$D/lambda_virus.fa"
expect_fail 2 "--revcomp and --revcomp-prob exclude each other" -- "$SLUICE" tokenize dna --revcomp --revcomp-prob 0.5 "$D/pysam_ex1.fa"
printf ">a\001b\nACGT\n" > "$T/h1.fa"; printf ">a\377b\nACGT\n" > "$T/h2.fa"
expect_fail 1 "h1.fa:1: invalid byte 0x01 in a header line" -- "$SLUICE" tokenize dna "$T/h1.fa" -o "$O"; no_file "$O"
expect_fail 1 "h2.fa:1: header line is not valid UTF-8" -- "$SLUICE" tokenize dna "$T/h2.fa" -o "$O"; no_file "$O"
echo ok

# The defects a reliability review found, one block each; every
# block failed before its fix. (Temporaries after kills: kill_matrix.sh.)
. "$SRC/tests/cli/lib.sh"
cd "$T"

# 6. A file that starts with 512 NUL bytes is not an empty tar: its documents
# must not vanish with exit 0. A real empty tar (all zero) still reads as no
# documents; zeros beyond the first 4 KiB sniff are caught too, also on stdin.
{ head -c 512 /dev/zero; echo '{"text":"hello"}'; } > z512.jsonl
expect_fail 1 '^sluice: read: z512\.jsonl' -- "$SLUICE" read z512.jsonl -o out.jsonl
no_file out.jsonl
{ head -c 8192 /dev/zero; echo '{"text":"hello"}'; } > z8k.jsonl
expect_fail 1 '^sluice: read: z8k\.jsonl: offset 8192: ' -- "$SLUICE" read z8k.jsonl -o out.jsonl
no_file out.jsonl
expect_fail 1 '^sluice: read: <stdin>: offset 8192: ' -- sh -c "\"$SLUICE\" read < z8k.jsonl"
tar -cf empty.tar -T /dev/null
[ "$(stat -c %s empty.tar)" -ge 1024 ] && [ -z "$(tr -d '\0' < empty.tar)" ] || fail "tar made no all-zero empty archive"
"$SLUICE" read empty.tar -o out.jsonl
[ -f out.jsonl ] && [ ! -s out.jsonl ] || fail "an empty tar must give no documents"
rm out.jsonl

# 7. tokenize dna: a header whose name is longer than a document id may be
# is an error at its file and line; a spool that fills its disk names the
# record (file, name, base), not just "temporary file".
{ echo '>short'; echo ACGT; printf '>'; head -c 100000 /dev/zero | tr '\0' N; echo ' desc'; echo ACGT; } > longname.fa
expect_fail 1 '^sluice: tokenize dna: longname\.fa:3: record name of 100000 bytes is too long' -- \
  "$SLUICE" tokenize dna longname.fa -o out.tok
no_file out.tok
{ echo '>big one'; head -c 300000 /dev/zero | tr '\0' A; echo; } > big.fa
mkdir -p full
if mount -t tmpfs -o size=64k tmpfs full 2> mount.err; then
  set +e; TMPDIR=$T/full "$SLUICE" tokenize dna --in-memory 1k big.fa -o out.tok 2> err; rc=$?; set -e
  umount full
  [ $rc -eq 1 ] && grep -Eq "^sluice: tokenize dna: big\.fa: record 'big', base [0-9]+: .*No space left on device" err ||
    fail "spool on a full disk: rc=$rc $(cat err)"
  no_file out.tok
else
  echo "skipping the full spool disk case: cannot mount tmpfs ($(cat mount.err))" >&2
fi

# 8. A --part value with a newline (or a Slurm variable with one) gives a
# one-line message, the bytes escaped (fuzz_parts' seed parts/newline holds
# the input that made the fuzz target abort).
expect_fail 2 "^sluice: read: --part '1\\\\x0a/2': R is not a number$" -- "$SLUICE" read --part $'1\n/2' z8k.jsonl
grep -q '^/2' "$T/err" && fail "--part message broken over lines: $(cat "$T/err")"
SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_COUNT=2 SLURM_ARRAY_TASK_ID=$'1\nx' \
  expect_fail 2 "SLURM_ARRAY_TASK_ID='1\\\\x0ax' is not a number$" -- "$SLUICE" read --part slurm z8k.jsonl
grep -q '^x' "$T/err" && fail "slurm message broken over lines: $(cat "$T/err")"
true

# 10. Positions and wording. A zstd error names the frame it is in (zstd
# leaves positions undefined on an error; a content checksum covers the whole
# frame): the second frame of two, at the first frame's compressed size. A
# gzip CRC is checked after the data it covers: every byte was decoded.
seq 1 1500 | sed 's/.*/{"id":&,"text":"document number & of a test corpus"}/' > small.jsonl
seq 1 9000 | sed 's/.*/{"id":&,"text":"another & document, somewhat different &"}/' > other.jsonl
zstd -q -c small.jsonl > a.zst; zstd -q -c other.jsonl > b.zst
cat a.zst b.zst > two.zst
a=$(stat -c %s a.zst); b=$(stat -c %s b.zst)
flip() { # flip FILE OFFSET: inverts one byte
  local v; v=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "\\$(printf %03o $((255 - v)))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
flip two.zst $((a + b / 2 + 1))
zstd -q -t two.zst 2>/dev/null && fail "zstd accepts the damaged frame"
expect_fail 1 "^sluice: read: two\\.zst: corrupt zstd data in the frame at compressed offset $a \\(its data starts at decoded byte $(stat -c %s small.jsonl)\\): " -- \
  "$SLUICE" read two.zst -o out.jsonl
no_file out.jsonl
gzip -c small.jsonl > crc.gz
g=$(stat -c %s crc.gz)
printf '\x00\x00\x00\x00' | dd of=crc.gz bs=1 seek=$((g - 8)) conv=notrunc 2>/dev/null
gzip -t crc.gz 2>/dev/null && fail "gzip accepts the damaged CRC"
expect_fail 1 "^sluice: read: crc\\.gz: corrupt gzip data after $(stat -c %s small.jsonl) decoded bytes .*incorrect data check" -- \
  "$SLUICE" read crc.gz -o out.jsonl
# An unknown model type lists the supported ones; a file of no tokenizer
# format says so instead of "invalid JSON value".
echo '{"model":{"type":"Foo","vocab":{}}}' > foo.json
expect_fail 1 "^sluice: tokenize text: foo\\.json: model type 'Foo' is not supported \\(tokenizer\\.json models: BPE, Unigram, WordPiece, WordLevel\\)$" -- \
  "$SLUICE" tokenize text --tokenizer foo.json small.jsonl -o out.tok
head -c 3000 "$SLUICE" > garbage.model
expect_fail 1 '^sluice: tokenize text: garbage\.model: not a tokenizer file \(' -- \
  "$SLUICE" tokenize text --tokenizer garbage.model small.jsonl -o out.tok
no_file out.tok

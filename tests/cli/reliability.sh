# Issue 30: the defects a reliability review found, one block each; every
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

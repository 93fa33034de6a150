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

# sluice read against an independent reference: tests/data/read/make_reference.py
# implements the JSON Lines rules of docs/read.md on CPython's json module and wrote
# reference_expected.jsonl for reference_input.jsonl (escapes, surrogates, raw invalid
# UTF-8, numbers as written, duplicate keys, CRLF, BOM, blank lines, 300 random objects).
. "$SRC/tests/cli/lib.sh"
cd "$T"
cp "$DATA/read/reference_input.jsonl" .
"$SLUICE" read -q reference_input.jsonl > out.jsonl
diff out.jsonl "$DATA/read/reference_expected.jsonl" > diff.txt || fail "differs from the reference: $(head -c 2000 diff.txt)"
# the same bytes through gzip and stdin, and one thread
gzip -c reference_input.jsonl | "$SLUICE" read -q -@ 1 | sed 's/"id":"<stdin>:/"id":"reference_input.jsonl:/' > out2.jsonl
cmp out2.jsonl "$DATA/read/reference_expected.jsonl" || fail "stdin/gzip differs from the reference"

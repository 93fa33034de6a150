# A dotted --field reaches into nested JSON objects as it reaches into a
# Parquet struct: tests/data/read/nested_rows.jsonl holds the rows of
# tests/data/parquet/nested.parquet as pyarrow's to_pylist() gives them
# (nested_rows.py), and `read --field doc.body` of it must print what the
# Parquet file gives (nested.expected.jsonl, from pyarrow), the field taken
# out of its object. A key that holds the dots itself is matched first.
. "$SRC/tests/cli/lib.sh"
cd "$T"
ids() { sed 's/"id":"[^"]*:\([0-9]*\)"/"id":"X:\1"/'; }
"$SLUICE" read -q --field doc.body "$DATA/read/nested_rows.jsonl" | ids > got.jsonl || fail "read --field doc.body failed"
ids < "$DATA/parquet/nested.expected.jsonl" > want.jsonl
cmp -s got.jsonl want.jsonl || fail "--field doc.body of JSON Lines differs from the Parquet struct's: $(diff got.jsonl want.jsonl | head -4)"

printf '{"meta.content":"literal","meta":{"content":"nested"}}\n' > lit.jsonl
"$SLUICE" read -q --field meta.content lit.jsonl | grep -qF '"text":"literal","meta":{"content":"nested"}' ||
  fail "a key with the dots in its name is not matched first"
printf '{"a":{"b":{"c":"deep","d":1},"e":2},"z":0}\n' > deep.jsonl
"$SLUICE" read -q --field a.b.c deep.jsonl | grep -qxF '{"id":"deep.jsonl:1","text":"deep","a":{"b":{"d":1},"e":2},"z":0}' ||
  fail "a three-level path: $("$SLUICE" read -q --field a.b.c deep.jsonl)"
printf '[{"a":{"b":"in an array"}}]\n' > arr.json
"$SLUICE" read -q --field a.b arr.json | grep -qF '"text":"in an array","a":{}' || fail "a dotted path in a JSON array"
printf '{"a":"no object","z":1}\n' > flat.jsonl
expect_fail 1 '^sluice: read: flat\.jsonl:1: no "a\.b" field \(fields: a, z\); --field names the text.s$' \
  -- "$SLUICE" read -q --field a.b flat.jsonl
printf '{"a":{"b":5}}\n' > num.jsonl
expect_fail 1 '^sluice: read: num\.jsonl:1: field "a\.b" is not a string$' -- "$SLUICE" read -q --field a.b num.jsonl
# a table's row has no line number for the warning that drops "text"
"$SLUICE" read --field url "$DATA/parquet/fw_duckdb.parquet" > /dev/null 2> err
grep -q 'fw_duckdb\.parquet: input field "text" dropped: "text" is the --field value$' err ||
  fail "no dropped-text warning for a Parquet file: $(cat err)"
printf '{"text":"t","meta":{"content":"a"}}\n' > both.jsonl
"$SLUICE" read --field meta.content both.jsonl > /dev/null 2>> err
grep -q '^sluice: read: warning: both\.jsonl:1: input field "text" dropped: "text" is the --field value$' err &&
  ! grep -q ':0: input field' err || fail "the dropped-text warning: $(cat err)"
true

# sluice read on JSON Lines that tests/data/read/diff_jsonl.py (the randomized comparison with
# CPython's json) found read differently; expected outputs from tests/data/read/make_regress.py,
# which computes them with that script's reference, not with sluice.
. "$SRC/tests/cli/lib.sh"
cd "$T"
cp "$DATA/read/regress_input.jsonl" .
# {"__float__": "NaN"} is an object, as json.loads reads it (was the number NaN); with --field,
# the input "text" is dropped also from a line holding NaN or Infinity (was kept: two "text")
"$SLUICE" read -q --on-error skip regress_input.jsonl > out.jsonl
diff out.jsonl "$DATA/read/regress_expected.jsonl" || fail "--field text differs from the reference"
for f in content __float__; do
  "$SLUICE" read -q --on-error skip --field "$f" -@ 2 regress_input.jsonl > out.jsonl
  diff out.jsonl "$DATA/read/regress_expected_$(echo "$f" | tr -d _).jsonl" || fail "--field $f differs from the reference"
done
"$SLUICE" read --on-error skip regress_input.jsonl 2> err > /dev/null
grep -q '^sluice: read: warning: 3 malformed line(s) skipped$' err || fail "skip count: $(cat err)"
# an id {"__float__": "NaN"} is an object: a bad line; a line that is only such an object has no text
sed -n 7p regress_input.jsonl > id.jsonl
expect_fail 1 '^sluice: read: id\.jsonl:1: field "id" is not a string or a number$' -- "$SLUICE" read id.jsonl -o out2.jsonl
no_file out2.jsonl
sed -n 8p regress_input.jsonl > nf.jsonl
expect_fail 1 '^sluice: read: nf\.jsonl:1: no "text" field \(fields: __float__\); --field names the text.s$' -- "$SLUICE" read nf.jsonl -o out2.jsonl
no_file out2.jsonl

# --max-doc-bytes bounds each line, also the blank lines before the first document and those
# of a source that is only blank lines (which was an error as soon as they held more bytes
# than the limit, or more than the first read, however short each line)
printf '\xef\xbb\xbf \n \n\n' > blank.jsonl
"$SLUICE" read --max-doc-bytes 1 blank.jsonl > out.jsonl 2> err
[ ! -s out.jsonl ] && grep -q 'blank.jsonl: empty, no documents' err || fail "blank lines: $(cat err)"
{ head -c $((3 << 20)) /dev/zero | tr '\0' '\n'; printf '{"text":"a"}\n'; } > late.jsonl
"$SLUICE" read -q --max-doc-bytes 100 late.jsonl > out.jsonl
printf '{"id":"late.jsonl:1","text":"a"}\n' | diff - out.jsonl || fail "blank lines before the first document"
"$SLUICE" read -q --max-doc-bytes 100 < late.jsonl > out.jsonl
printf '{"id":"<stdin>:1","text":"a"}\n' | diff - out.jsonl || fail "blank lines before the first document (stdin)"
{ head -c $((3 << 20)) /dev/zero | tr '\0' '\n'; head -c 101 /dev/zero | tr '\0' ' '; printf '\n{"text":"a"}\n'; } > long.jsonl
expect_fail 1 "^sluice: read: long\.jsonl:$(((3 << 20) + 1)): line longer than --max-doc-bytes \(100 bytes\)$" -- \
  "$SLUICE" read --max-doc-bytes 100 long.jsonl -o out2.jsonl
{ head -c $((3 << 20)) /dev/zero | tr '\0' ' '; } > spaces.jsonl
expect_fail 1 '^sluice: read: spaces\.jsonl:1: line longer than --max-doc-bytes \(100 bytes\)$' -- \
  "$SLUICE" read --max-doc-bytes 100 spaces.jsonl -o out2.jsonl
# a whole-file plain-text document whose blank lines alone are longer than the limit
{ head -c $((3 << 20)) /dev/zero | tr '\0' '\n'; printf 'abc\n'; } > late.txt
expect_fail 1 '^sluice: read: late\.txt: document longer than --max-doc-bytes \(100 bytes\)' -- \
  "$SLUICE" read --max-doc-bytes 100 late.txt -o out2.jsonl
"$SLUICE" read -q --lines --max-doc-bytes 100 late.txt > out.jsonl
printf '{"id":"late.txt:1","text":"abc"}\n' | diff - out.jsonl || fail "--lines after blank lines"

# the same for Parquet (fw_delta.parquet has a "text" column and a float column holding NaN)
"$SLUICE" read -q --field dump "$DATA/parquet/fw_delta.parquet" > pq.jsonl
grep -q NaN pq.jsonl || fail "fw_delta.parquet: no NaN (the check needs one)"
python3 - pq.jsonl <<'PY' || fail "--field dump on Parquet: an input \"text\" kept"
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    keys = [k for k, _ in json.loads(line, object_pairs_hook=lambda pairs: pairs)]
    assert keys.count("text") == 1, line[:300]
PY

# A JSON array of objects ('[' then '{') is read as the JSON Lines of its
# elements, as Hugging Face datasets' json loader reads such a file, and so are
# objects pretty-printed one after another (what `jq .` writes): each
# array must read exactly as the same objects written one per line (what
# `jq -c '.[]'` or `for o in json.load(f): print(json.dumps(o))` gives; the
# JSON Lines path itself is checked against Python's json module by
# tests/data/read/diff_jsonl.py, the arrays by diff_json_array.py). What is
# not a JSON array is an error naming the byte, and a text that only starts
# with '[' stays text.
. "$SRC/tests/cli/lib.sh"
cd "$T"
same() { # same ARRAY_FILE JSONL_FILE [read options]: both read alike
  local a=$1 j=$2
  shift 2
  "$SLUICE" read -q "$@" "$a" | sed 's/"id":"[^"]*\.json:/"id":"X:/' > got.jsonl || fail "$a: read failed"
  "$SLUICE" read -q "$@" "$j" | sed 's/"id":"[^"]*\.jsonl:/"id":"X:/' > want.jsonl
  cmp -s got.jsonl want.jsonl || fail "$a does not read as $j: $(diff got.jsonl want.jsonl | head -5)"
}
printf '[{"text":"a","id":1},\n{"text":"b","id":2}]\n' > a1.json
printf '{"text":"a","id":1}\n{"text":"b","id":2}\n' > a1.jsonl
same a1.json a1.jsonl
# pretty-printed, a BOM, CRLF, brackets, commas and quotes inside strings, nesting
printf '\xef\xbb\xbf [\r\n  {\r\n    "text": "x\\n y ]",\r\n    "meta": {"a": [1, {"b": "],["}], "c": []}\r\n  } ,\r\n  {"text": "z,\\"]\\\\", "n": -1.5e3}\r\n]\r\n\r\n' > a2.json
printf '{"text":"x\\n y ]","meta":{"a":[1,{"b":"],["}],"c":[]}}\n{"text":"z,\\"]\\\\","n":-1.5e3}\n' > a2.jsonl
same a2.json a2.jsonl
# ids count documents (as in JSON Lines), errors name the element; --field, --on-error skip
printf '[{"body":"one"},{"body":"two"},{"nobody":3},{"body":"four"}]' > a3.json
printf '{"body":"one"}\n{"body":"two"}\n{"nobody":3}\n{"body":"four"}\n' > a3.jsonl
same a3.json a3.jsonl --field body --on-error skip
"$SLUICE" read -q --field body --on-error skip a3.json | grep -q '"id":"a3.json:3","text":"four"' ||
  fail "the third document (the fourth element) is not a3.json:3"
expect_fail 1 "^sluice: read: a3.json:3: no \"body\" field" -- "$SLUICE" read -q --field body a3.json
# from standard input, and through tokenize text
"$SLUICE" read -q < a2.json | sed 's/"id":"<stdin>:/"id":"X:/' > got.jsonl
"$SLUICE" read -q a2.jsonl | sed 's/"id":"[^"]*\.jsonl:/"id":"X:/' | cmp -s - got.jsonl || fail "a JSON array from stdin"
mkdir -p arr lines && cp a2.json arr/in.json && cp a2.jsonl lines/in.json # (the same ids)
(cd arr && "$SLUICE" tokenize char -q -o ../x1.tok in.json) && (cd lines && "$SLUICE" tokenize char -q -o ../x2.tok in.json)
cmp -s x1.tok x2.tok || fail "tokenize char over a JSON array differs from its JSON Lines"
# an empty array: no documents, a warning
printf '[ ]\n' > e.json
"$SLUICE" read e.json > e.out 2> err || fail "an empty array failed"
[ ! -s e.out ] && grep -q "e.json: an empty JSON array, no documents" err || fail "an empty array: $(cat err)"
# text that starts with '[' is text
printf '[Verse 1]\nla {la}\n' > v.txt
printf '[] todo\n' > t.txt
"$SLUICE" read -q v.txt t.txt | grep -c '"text":"\[' | grep -qx 2 || fail "a text starting with '[' was not read as text"
# --format text reads an array as text
"$SLUICE" read -q --format text a1.json | grep -q '"text":"\[{' || fail "--format text read the array as documents"
# not an array: the byte named, no output file
bad() {
  printf '%s' "$1" > bad.json
  expect_fail 1 "^sluice: read: bad.json: byte $2: $3" -- "$SLUICE" read -q bad.json -o out.jsonl
  no_file out.jsonl
}
bad '[{"text":"a"} {"text":"b"}]' 14 "',' or '\]' expected after a JSON array's element"
bad '[{"text":"a"},,{"text":"b"}]' 14 "',' where a JSON array's element should be"
bad '[{"text":"a"},]' 14 "'\]' where a JSON array's element should be"
bad '[{"text":"a"}]x' 14 "bytes after the end of the JSON array"
bad '[{"text":"a"}]  ]' 16 "bytes after the end of the JSON array"
bad '[{"text":"a"}' 13 "the JSON array is not closed"
bad '  [ {"text":"a"}, {"t":"]' 25 "the JSON array is not closed"
# an element that is no object, or not JSON, is a bad line of JSON Lines
printf '[{"text":"a"}, 5]' > n.json
expect_fail 1 "^sluice: read: n.json:2: not a JSON object" -- "$SLUICE" read -q n.json
printf '[{"text":"raw\nnewline"}]' > r.json
expect_fail 1 "^sluice: read: r.json:1: " -- "$SLUICE" read -q r.json
# --part gives the whole array to one part
for r in 0 1 2; do "$SLUICE" read -q --part $r/3 a2.json; done > parts.jsonl
"$SLUICE" read -q a2.json | cmp -s - parts.jsonl || fail "--part R/3 of a JSON array"
# objects pretty-printed one after another (jq . without -c): read as their JSON Lines
printf '{\n  "text": "x\\n y ]",\n  "meta": {"a": [1, {"b": "],["}], "c": []}\n}\r\n{"text": "z,\\"]\\\\", "n": -1.5e3}\n' > pp.json
same pp.json a2.jsonl
printf '\xef\xbb\xbf{\n  "text": "one"\n}\n\n  {\n"text": "two"}\n' > pp2.json
printf '{"text":"one"}\n{"text":"two"}\n' > pp2.jsonl
same pp2.json pp2.jsonl
for r in 0 1 2; do "$SLUICE" read -q --part $r/3 pp2.json; done > pp2.parts
"$SLUICE" read -q pp2.json | cmp -s - pp2.parts || fail "--part R/3 of pretty-printed objects"
printf '{\n "text": "a"\n}{\n "text": "b"}\n' > adj.json
expect_fail 1 "^sluice: read: adj.json:1: offset 16: unexpected data after JSON value" -- "$SLUICE" read -q adj.json
printf '{\n "text": "a"\n}\n{\n "text": "b"\n' > cut.json
expect_fail 1 "^sluice: read: cut.json:2: " -- "$SLUICE" read -q cut.json
# a line of JSON Lines cut after a comma is one bad line, not the start of pretty-printed objects
printf '{"text": "a",\n{"text":"b"}\n' > corrupt.jsonl
"$SLUICE" read -q --on-error skip corrupt.jsonl | grep -qxF '{"id":"corrupt.jsonl:1","text":"b"}' ||
  fail "a cut first line of JSON Lines took the lines after it"
# --format jsonl reads JSON Lines as it says: a first line that is an array is one bad line
# (diff_jsonl.py seed 3007 case 54), a first line "{" alone too
printf '[{"text":"a"}]\n{"text":"b"}\n' > al.jsonl
"$SLUICE" read -q --format jsonl --on-error skip al.jsonl | grep -qxF '{"id":"al.jsonl:1","text":"b"}' ||
  fail "--format jsonl took a first line '[{' for a JSON array"
printf '{\n"text": "a"}\n{"text":"b"}\n' > pl.jsonl
"$SLUICE" read -q --format jsonl --on-error skip pl.jsonl | grep -qxF '{"id":"pl.jsonl:1","text":"b"}' ||
  fail "--format jsonl took a first line '{' alone for pretty-printed objects"
# ... while a text that starts with '[' is still cut by lines
for i in $(seq 1 3000); do echo "[line $i] text"; done > br.txt
for r in 0 1 2; do "$SLUICE" read -q --lines --part $r/3 br.txt > br.$r; done
[ -s br.0 ] && [ -s br.1 ] && [ -s br.2 ] || fail "a text starting with '[' was not cut into parts"
cat br.0 br.1 br.2 | cmp -s - <("$SLUICE" read -q --lines br.txt) || fail "--lines --part of a text starting with '['"
true

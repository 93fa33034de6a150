# sluice filter on the record's own numbers: --field tokens and
# --field src_bytes with --min/--max (--min-ppl/--max-ppl are aliases) and
# percentiles. Expected selections come from the input text, computed here
# with Python (code point and UTF-8 byte counts) and numpy's linear percentile method.
. "$SRC/tests/cli/lib.sh"

# 30 documents of 1..60 code points, some two- and three-byte characters, so
# that token counts (code points) and source bytes differ
python3 - "$T/docs.jsonl" <<'PY'
import json, random, sys
r = random.Random(11)
alpha = "abcdefgh é€ü"
with open(sys.argv[1], "w", encoding="utf-8") as f:
    for d in range(30):
        n = r.randint(1, 60)
        f.write(json.dumps({"id": "d%02d" % d, "text": "".join(r.choice(alpha) for _ in range(n))}) + "\n")
PY
"$SLUICE" tokenize char --unit codepoint --build-vocab -q "$T/docs.jsonl" -o "$T/docs.tok"
ids() { "$SLUICE" cat --no-ids "$1" | sed 's/^{"id":"\([^"]*\)".*/\1/'; }
# want FIELD LO HI: ids whose count is in [LO, HI] (empty = no bound)
want() {
  python3 - "$T/docs.jsonl" "$@" <<'PY'
import json, sys
path, field, lo, hi = sys.argv[1:5]
for line in open(path, encoding="utf-8"):
    o = json.loads(line)
    v = len(o["text"]) if field == "tokens" else len(o["text"].encode("utf-8"))
    if (lo == "" or v >= float(lo)) and (hi == "" or v <= float(hi)):
        print(o["id"])
PY
}

"$SLUICE" filter -q --field tokens --min 10 --max 40 "$T/docs.tok" -o "$T/t.tok"
ids "$T/t.tok" > "$T/got"; want tokens 10 40 > "$T/want"
[ -s "$T/want" ] && [ "$(wc -l < "$T/want")" -lt 30 ] || fail "test setup: tokens 10..40 selects nothing or everything"
cmp -s "$T/got" "$T/want" || fail "--field tokens --min 10 --max 40: $(diff "$T/got" "$T/want")"
"$SLUICE" filter -q --field tokens --min-ppl 10 --max-ppl 40 "$T/docs.tok" -o "$T/t2.tok"
cmp -s "$T/t.tok" "$T/t2.tok" || fail "--min-ppl/--max-ppl are not aliases of --min/--max"

"$SLUICE" filter -q --field src_bytes --min 50 "$T/docs.tok" -o "$T/b.tok"
ids "$T/b.tok" > "$T/got"; want src_bytes 50 "" > "$T/want"
[ -s "$T/want" ] || fail "test setup: no document of >= 50 bytes"
cmp -s "$T/got" "$T/want" || fail "--field src_bytes --min 50: $(diff "$T/got" "$T/want")"
want tokens 50 "" | cmp -s - "$T/want" && fail "test setup: bytes and code points select the same documents"

# percentiles of the token counts: numpy's linear percentiles
"$SLUICE" filter -q --field tokens --keep-pct 20:80 --summary "$T/s.json" "$T/docs.tok" -o "$T/p.tok"
ids "$T/p.tok" > "$T/got"
python3 - "$T/docs.jsonl" > "$T/want" <<'PY'
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
v = [len(o["text"]) for o in docs]
s = sorted(v)
def pct(p):  # numpy.percentile's default "linear" method
    pos = p / 100 * (len(s) - 1)
    i = int(pos)
    return s[i] + (s[min(i + 1, len(s) - 1)] - s[i]) * (pos - i)
lo, hi = pct(20), pct(80)
for o, x in zip(docs, v):
    if lo <= x <= hi:
        print(o["id"])
PY
cmp -s "$T/got" "$T/want" || fail "--field tokens --keep-pct 20:80: $(diff "$T/got" "$T/want")"
grep -q '^{"field":"tokens","documents":30,"kept":'"$(wc -l < "$T/want")"',' "$T/s.json" || fail "summary: $(cat "$T/s.json")"

# a stream without source byte counts: src_bytes is unknown, i.e. unscored
printf '{"id":"a","ids":[1,2]}\n{"id":"b","ids":[3]}\n' | "$SLUICE" tokenize ids --vocab-size 9 -o "$T/ids.tok"
"$SLUICE" filter -q --field src_bytes --min 0 "$T/ids.tok" -o "$T/u.tok"
[ -z "$(ids "$T/u.tok")" ] || fail "unknown src_bytes should be unscored (dropped)"
"$SLUICE" filter -q --field src_bytes --keep-unscored "$T/ids.tok" -o "$T/u2.tok"
[ "$(ids "$T/u2.tok" | tr '\n' ' ')" = "a b " ] || fail "--keep-unscored keeps unknown src_bytes"

printf '{"id":"d00","tokens":1}\n' > "$T/sc.jsonl"
expect_fail 2 "--field tokens cannot be combined with --scores" -- "$SLUICE" filter --field tokens --scores "$T/sc.jsonl" --min 1 "$T/docs.tok"
expect_fail 2 "--min: 'x'" -- "$SLUICE" filter --field tokens --min x "$T/docs.tok"
echo ok

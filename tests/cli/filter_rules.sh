# sluice filter --rules: datatrove 0.10.1's GopherQualityFilter,
# GopherRepetitionFilter, C4QualityFilter and FineWebQualityFilter ran on the
# fixture corpus (tests/data/rules/make_rules_fixtures.py): for eleven
# configurations (each rule alone, all four in two orders, non-default
# parameters of each) sluice keeps the same documents, gives the same rule
# and reason for each dropped one, and writes C4's rewritten text as
# datatrove leaves it; --annotate's signals equal datatrove's values (to
# 1e-9), and on n-grams past 64 KiB exactly. Independent of -@; --part R/N
# parts concatenate to the whole;
# metadata kept; bad rules and parameters refused with one line.
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
D=$DATA/rules
C=$D/corpus.jsonl

names=$(python3 -c "import json,sys; print(' '.join(json.load(open(sys.argv[1]))))" "$D/configs.json")
[ "$(echo $names | wc -w)" -eq 11 ] || fail "configs: $names"
for c in $names; do
  mapfile -t args < <(python3 -c "import json,sys; print('\n'.join(json.load(open(sys.argv[1]))[sys.argv[2]]))" "$D/configs.json" "$c")
  "$S" filter -q "${args[@]}" "$C" -o "$T/$c.jsonl" --rejected "$T/$c.rej" --summary "$T/$c.sum"
  python3 "$D/check_rules.py" expect "$C" "$D/expect-$c.jsonl" "$T/$c.jsonl" "$T/$c.rej" >"$T/diff" \
    || fail "$c: differs from datatrove: $(head -5 "$T/diff")"
done
grep -q "\"documents\":$(wc -l < "$C")," "$T/all.sum" || fail "summary: $(head -c 300 "$T/all.sum")"
python3 - "$T/all.sum" "$D/expect-all.jsonl" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
want = [json.loads(l) for l in open(sys.argv[2])]
assert s["kept"] == sum(w["keep"] for w in want), s["kept"]
for r in s["rules"]:
    n = {}
    for w in want:
        if w["rule"] == r["rule"]:
            n[w["reason"]] = n.get(w["reason"], 0) + 1
    assert r["reasons"] == n, (r["rule"], r["reasons"], n)
assert s["rules"][0]["params"]["min_doc_words"] == 50 and s["rules"][1]["params"]["top_n_grams"][0] == [2, 0.2]
PY

# --annotate: every document, the text unchanged, the signals of datatrove's code
"$S" filter -q --rules gopher-quality,gopher-repetition,c4,fineweb --annotate "$C" -o "$T/ann.jsonl"
python3 "$D/check_rules.py" signals "$D/signals.jsonl" "$T/ann.jsonl" >"$T/diff" || fail "annotate: $(head -5 "$T/diff")"
"$S" read -q "$C" > "$T/read.jsonl"
python3 - "$T/read.jsonl" "$T/ann.jsonl" <<'PY'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
assert [(d["id"], d["text"], d["src"]) for d in a] == [(d["id"], d["text"], d["src"]) for d in b]
PY
# annotating an annotated file replaces the fields, it does not repeat them
"$S" filter -q --rules fineweb --annotate "$T/ann.jsonl" -o "$T/ann2.jsonl"
[ "$(grep -o '"fineweb_reason"' "$T/ann2.jsonl" | wc -l)" -eq "$(wc -l < "$C")" ] || fail "annotate twice: fields repeated"

# threads and parts
"$S" filter -q -@ 1 --rules gopher-repetition,gopher-quality,c4,fineweb "$C" -o "$T/t1.jsonl" --rejected "$T/t1.rej"
"$S" filter -q -@ 3 --rules gopher-repetition,gopher-quality,c4,fineweb "$C" -o "$T/t3.jsonl" --rejected "$T/t3.rej"
cmp -s "$T/t1.jsonl" "$T/t3.jsonl" && cmp -s "$T/t1.rej" "$T/t3.rej" || fail "-@ 1 and -@ 3 differ"
cmp -s "$T/t1.jsonl" "$T/fineweb-order.jsonl" || fail "-@ 1 differs from the default thread count"
for r in 0 1 2; do
  "$S" filter -q --part $r/3 --rules gopher-repetition,gopher-quality,c4,fineweb "$C" -o "$T/p$r.jsonl" --rejected "$T/p$r.rej"
done
cat "$T"/p[012].jsonl | cmp -s - "$T/t1.jsonl" || fail "--part 0..2/3 concatenated differ from the whole"
cat "$T"/p[012].rej | cmp -s - "$T/t1.rej" || fail "--part rejected files differ"
# another text field: read as `read` reads it
python3 - "$C" > "$T/body.jsonl" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    print(json.dumps({"id": d["id"], "body": d["text"], "src": d["src"]}, ensure_ascii=False))
PY
"$S" filter -q -f body --rules c4 "$T/body.jsonl" -o "$T/body.out"
cmp -s "$T/body.out" "$T/c4.jsonl" || fail "--field body differs"
# plain text input, gzip, from stdin
gzip -c "$C" | "$S" filter -q --rules fineweb -o "$T/gz.jsonl"
cmp -s "$T/gz.jsonl" "$T/fineweb.jsonl" || fail "stdin gzip differs"

# n-grams past 64 KiB (words of 15,000+ letters: the hash base's powers
# past rules.c's table): gopher repetition's signals as datatrove computes
# them (tests/data/rules/make_longwords_fixture.py), exactly
python3 - "$D" > "$T/lw.jsonl" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
import longwords
print(json.dumps({"id": "longwords", "text": longwords.doc()}))
PY
"$S" filter -q --rules gopher-repetition --annotate "$T/lw.jsonl" -o "$T/lw.out"
python3 - "$D/longwords-signals.json" "$T/lw.out" <<'PY' || fail "signals of 64 KiB n-grams differ from datatrove's"
import json, sys
want = json.load(open(sys.argv[1]))
got = json.loads(open(sys.argv[2]).readline())
bad = [(k, want[k], got.get(k)) for k in want if got.get(k) != want[k]]
if bad:
    print(bad)
    sys.exit(1)
PY

# bad input: one line, exit 2, no output
expect_fail 2 "unknown rule 'gopher'" -- "$S" filter --rules gopher "$C" -o "$T/bad.jsonl"
no_file "$T/bad.jsonl"
expect_fail 2 "gopher-quality has no parameter 'min_words'" -- "$S" filter --rule gopher-quality:min_words=3 "$C" -o "$T/bad.jsonl"
expect_fail 2 "max_doc_words=lots: not a number or none" -- "$S" filter --rule gopher-quality:max_doc_words=lots "$C"
expect_fail 2 "split_paragraph=maybe: not true or false" -- "$S" filter --rule c4:split_paragraph=maybe "$C"
expect_fail 2 "min_num_sentences=none: not a number" -- "$S" filter --rule c4:min_num_sentences=none "$C"
expect_fail 2 "'min_doc_words' is not KEY=VALUE" -- "$S" filter --rule gopher-quality:min_doc_words "$C"
expect_fail 2 "language=de: only en" -- "$S" filter --rule fineweb:language=de "$C"
expect_fail 2 "top_0_gram=0.1: N from 1" -- "$S" filter --rule gopher-repetition:top_0_gram=0.1 "$C"
expect_fail 2 "unknown rule 'c5'" -- "$S" filter --rule c5:x=1 "$C"
expect_fail 2 "with --annotate nothing is dropped" -- "$S" filter --rules c4 --annotate --rejected "$T/r" "$C"
printf '{"id":"a","text":"ok"}\n{"id":"b","text":\n' > "$T/broken.jsonl"
expect_fail 1 "broken.jsonl:2" -- "$S" filter --rules c4 "$T/broken.jsonl" -o "$T/bad.jsonl" --rejected "$T/bad.rej"
no_file "$T/bad.jsonl"
no_file "$T/bad.rej"
true

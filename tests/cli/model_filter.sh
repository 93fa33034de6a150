# sluice filter end to end: thresholds, percentiles (first pass, stdin spool,
# --scores), CCNet buckets, summary and plot, errors. Expected selections are
# recomputed here with awk from the scores sluice score printed.
. "$SRC/tests/cli/lib.sh"
M=$DATA/model

# 40 documents of varied length and content from the ssm_f32 model's vocabulary
awk 'BEGIN { srand(7); for (d = 0; d < 40; d++) { n = 2 + int(rand() * 60); s = "";
  for (i = 0; i < n; i++) s = s (i ? "," : "") (d % 3 == 0 ? int(rand() * 5) : int(rand() * 77));
  printf "{\"id\":\"doc%02d\",\"ids\":[%s]}\n", d, s } print "{\"id\":\"one\",\"ids\":[5]}" }' > "$T/docs.jsonl"
"$SLUICE" tokenize ids --vocab-size 77 "$T/docs.jsonl" -o "$T/docs.tok"
"$SLUICE" score -m "$M/ssm_f32" "$T/docs.tok" -o "$T/scores.jsonl"
"$SLUICE" score -m "$M/ssm_f32" --to-stream "$T/docs.tok" -o "$T/scored.tok"
ids() { "$SLUICE" cat --no-ids "$1" | sed 's/^{"id":"\([^"]*\)".*/\1/'; }
ppl() { sed -n 's/^{"id":"\([^"]*\)".*"ppl":\([-0-9.eE+][-0-9.eE+]*\).*/\1 \2/p' "$T/scores.jsonl"; }  # scored docs only

# --max-ppl / --min-ppl: exactly the documents with lo <= ppl <= hi
lo=$(ppl | sort -k2 -g | sed -n 8p | cut -d' ' -f2)
hi=$(ppl | sort -k2 -g | sed -n 30p | cut -d' ' -f2)
"$SLUICE" filter -q --min-ppl "$lo" --max-ppl "$hi" "$T/scored.tok" -o "$T/band.tok"
ids "$T/band.tok" > "$T/got"
ppl | awk -v lo="$lo" -v hi="$hi" '$2 >= lo && $2 <= hi { print $1 }' > "$T/want"
[ "$(wc -l < "$T/want")" = 23 ] || fail "test setup: expected 23 documents in the band"
cmp -s "$T/got" "$T/want" || fail "--min-ppl/--max-ppl selection: $(diff "$T/got" "$T/want")"

# --keep-pct LO:HI keeps the documents between numpy-style linear percentiles
"$SLUICE" filter -q --keep-pct 25:75 --summary "$T/sum.json" "$T/scored.tok" -o "$T/pct.tok"
ppl | sort -k2 -g | awk '{ v[NR] = $2; id[NR] = $1 } END {
  n = NR; for (k = 0; k < 2; k++) { p = k ? 75 : 25; pos = p / 100 * (n - 1); i = int(pos); f = pos - i;
    c[k] = v[i + 1] + (i + 2 <= n ? (v[i + 2] - v[i + 1]) * f : 0) }
  for (j = 1; j <= n; j++) if (v[j] >= c[0] && v[j] <= c[1]) print id[j] }' | sort > "$T/want"
ids "$T/pct.tok" | sort > "$T/got"
cmp -s "$T/got" "$T/want" || fail "--keep-pct 25:75: $(diff "$T/got" "$T/want")"
grep -q '"documents":41,"kept":'"$(wc -l < "$T/want")"',' "$T/sum.json" || fail "summary counts: $(cat "$T/sum.json")"
grep -q '"unscored":1,' "$T/sum.json" || fail "summary unscored"
grep -q '"histogram":{"scale":"log10","edges":\[' "$T/sum.json" || fail "summary histogram"

# the same from stdin (spooled first pass) and from --scores
mkdir "$T/tmp"
TMPDIR=$T/tmp "$SLUICE" filter -q --keep-pct 25:75 < "$T/scored.tok" > "$T/pct_stdin.tok"
cmp -s "$T/pct.tok" "$T/pct_stdin.tok" || fail "stdin spool gives a different result"
[ -z "$(ls -A "$T/tmp")" ] || fail "spool file left behind: $(ls "$T/tmp")"
"$SLUICE" filter -q --keep-pct 25:75 --scores "$T/scores.jsonl" "$T/docs.tok" -o "$T/pct_scores.tok"
[ "$(ids "$T/pct_scores.tok")" = "$(ids "$T/pct.tok")" ] || fail "--scores gives a different selection"

# CCNet buckets partition the scored documents; head is below p30, tail from p60
for b in head middle tail; do "$SLUICE" filter -q --bucket $b "$T/scored.tok" -o "$T/$b.tok"; ids "$T/$b.tok"; done | sort > "$T/got"
ppl | cut -d' ' -f1 | sort > "$T/want"
cmp -s "$T/got" "$T/want" || fail "buckets do not partition the scored documents"
p30=$(ppl | sort -k2 -g | awk '{ v[NR] = $2 } END { pos = 0.3 * (NR - 1); i = int(pos); printf "%.17g", v[i+1] + (v[i+2] - v[i+1]) * (pos - i) }')
ids "$T/head.tok" | while read -r id; do
  awk -v id="$id" -v c="$p30" '$1 == id { exit !($2 < c) }' <(ppl) || fail "head doc $id is not below p30"; done
"$SLUICE" filter -q --keep-unscored --max-ppl 1e300 "$T/scored.tok" -o "$T/unsc.tok"
[ "$(ids "$T/unsc.tok" | grep -c '^one$')" = 1 ] || fail "--keep-unscored"

# text summary on stderr, SVG plot
"$SLUICE" filter --bucket middle --plot "$T/p.svg" "$T/scored.tok" -o "$T/m.tok" 2> "$T/err"
grep -q '^sluice: filter: kept [0-9]* of 41 documents' "$T/err" || fail "summary line: $(cat "$T/err")"
grep -q 'histogram of ppl' "$T/err" || fail "text histogram"
[ "$(head -c 4 "$T/p.svg")" = "<svg" ] || fail "plot is not SVG"
grep -q 'stroke-dasharray' "$T/p.svg" || fail "plot has no threshold lines"

# errors
expect_fail 1 "docs.tok: document 'doc00' has no \"ppl\" in its metadata" -- "$SLUICE" filter --max-ppl 10 "$T/docs.tok" -o "$T/o1"
no_file "$T/o1"
head -n 5 "$T/scores.jsonl" > "$T/few.jsonl"
expect_fail 1 "document 'doc05' has no score in .*few.jsonl" -- "$SLUICE" filter --scores "$T/few.jsonl" "$T/docs.tok" -o "$T/o2"
no_file "$T/o2"
printf '{"id":"a","ppl":1}\n{"id":"a","ppl":2}\n' > "$T/dup.jsonl"
expect_fail 1 "dup.jsonl:2: id 'a' appears twice" -- "$SLUICE" filter --scores "$T/dup.jsonl" "$T/docs.tok"
printf '{"id":"a","ppl":"x"}\n' > "$T/bad.jsonl"
expect_fail 1 'bad.jsonl:1: expected an object' -- "$SLUICE" filter --scores "$T/bad.jsonl" "$T/docs.tok"
expect_fail 2 "--keep-pct: '90:10' is not LO:HI" -- "$SLUICE" filter --keep-pct 90:10 "$T/scored.tok"
expect_fail 2 "--bucket: 'top' is not one of head\|middle\|tail" -- "$SLUICE" filter --bucket top "$T/scored.tok"
head -c 300 "$T/scored.tok" > "$T/trunc.tok"
expect_fail 1 'trunc.tok' -- "$SLUICE" filter --keep-pct 10:90 "$T/trunc.tok" -o "$T/o3"
no_file "$T/o3"

# --field: any numeric score, e.g. long_context; --cutoffs moves the CCNet cuts
"$SLUICE" score -m "$M/ssm_f32" --long-context 8 --to-stream "$T/docs.tok" -o "$T/lc.tok"
"$SLUICE" score -m "$M/ssm_f32" --long-context 8 "$T/docs.tok" -o "$T/lc.jsonl"
"$SLUICE" filter -q --field long_context --min-ppl 0.5 "$T/lc.tok" -o "$T/lc_kept.tok"
ids "$T/lc_kept.tok" > "$T/got"
sed -n 's/^{"id":"\([^"]*\)".*"long_context":\([-0-9.eE+][-0-9.eE+]*\).*/\1 \2/p' "$T/lc.jsonl" | awk '$2 >= 0.5 { print $1 }' > "$T/want"
[ -s "$T/want" ] || fail "test setup: no document with long_context >= 0.5"
cmp -s "$T/got" "$T/want" || fail "--field long_context: $(diff "$T/got" "$T/want")"
"$SLUICE" filter -q --bucket head --cutoffs 50:80 "$T/scored.tok" -o "$T/h50.tok"
p50=$(ppl | sort -k2 -g | awk '{ v[NR] = $2 } END { pos = 0.5 * (NR - 1); i = int(pos); printf "%.17g", v[i+1] + (v[i+2] - v[i+1]) * (pos - i) }')
ppl | awk -v c="$p50" '$2 < c { print $1 }' | sort > "$T/want"
ids "$T/h50.tok" | sort > "$T/got"
cmp -s "$T/got" "$T/want" || fail "--cutoffs 50:80 head: $(diff "$T/got" "$T/want")"

# Global filter cutoffs from score summaries (docs/scale-out.md):
# `score --summary` per part, `filter --cutoffs-from` the parts' summaries.
# For N in 1 2 3 7: merging the parts' summaries in any order or grouping
# gives the bytes of one summary of the whole run; the cutoffs are within
# relative 2^-10 of numpy's percentiles of the scores (computed here with
# numpy from the JSON Lines), and as no score lies that close to a cutoff
# (checked), the documents kept are exactly those the exact filter keeps.
# Then ties, negative scores (long_context), unscored documents, stdin,
# --skip-existing and bad summaries.
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
M=$DATA/model/ssm_f32
PY=""
for p in /usr/bin/python3 python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || fail "python3 with numpy is required (apt-get install python3-numpy, see scripts/install-deps)"

# 150 documents: varied lengths; every 5th has its length from {8, 16, 24}
# (ties in 'tokens'); one of one token (ppl null: unscored)
awk 'BEGIN { srand(11); for (d = 0; d < 150; d++) { n = d % 5 ? 2 + int(rand() * 70) : 8 * (1 + d % 3); s = "";
  for (i = 0; i < n; i++) s = s (i ? "," : "") (d % 4 == 0 ? int(rand() * 6) : int(rand() * 77));
  printf "{\"id\":\"doc%03d\",\"ids\":[%s]}\n", d, s } print "{\"id\":\"one\",\"ids\":[5]}" }' > "$T/docs.jsonl"
"$S" tokenize ids -q --vocab-size 77 "$T/docs.jsonl" -o "$T/docs.tok"
# --batch-tokens 1: each document is scored alone, so its scores do not depend
# on the documents it shares a batch with (the last digits could), and the
# parts' scores are bit for bit those of the whole run
SC="-m $M --long-context 4 --batch-tokens 1"
# shellcheck disable=SC2086
"$S" score -q $SC "$T/docs.tok" -o "$T/scores.jsonl" --summary "$T/whole.sum"
# shellcheck disable=SC2086
"$S" score -q $SC --to-stream "$T/docs.tok" -o "$T/scored.tok" --summary "$T/whole2.sum"
cmp "$T/whole.sum" "$T/whole2.sum" || fail "JSON Lines and --to-stream runs give different summaries"
[ "$(stat -c %s "$T/whole.sum")" -lt 20000 ] || fail "summary of 151 documents is $(stat -c %s "$T/whole.sum") bytes"
head -c 8 "$T/whole.sum" | grep -q SLSUMMRY || fail "no magic"

# exact percentiles (numpy) of a field, and whether any score lies within
# the bound of a cutoff: prints "LO HI" cutoffs or fails
numpy_cuts() { # FIELD PLO PHI
  "$PY" - "$T/scores.jsonl" "$1" "$2" "$3" <<'EOF'
import json, sys, numpy as np
path, field, lo, hi = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
rows = [json.loads(l) for l in open(path)]
if field == "tokens_own":  # the record's own length: the input's ids
    rows = [json.loads(l) for l in open(path.replace("scores.jsonl", "docs.jsonl"))]
    v = np.array([len(r["ids"]) for r in rows], dtype=float)
else:
    v = np.array([r[field] for r in rows if r.get(field) is not None], dtype=float)
out = []
for p in (lo, hi):
    c = float(np.percentile(v, p))
    s = np.sort(v); pos = p / 100 * (len(s) - 1); i = int(np.floor(pos)); f = pos - i
    j = min(i + 1, len(s) - 1)
    bound = 2.0**-10 * ((1 - f) * abs(s[i]) + f * abs(s[j])) + 1e-12 * abs(c)
    # a score strictly inside the bound, other than the order statistics themselves
    near = [x for x in v if abs(x - c) <= bound and x not in (s[i], s[j])]
    if near:
        sys.exit("test setup: score %r lies within %g of the cutoff %r" % (near[0], bound, c))
    out.append("%.17g %.17g" % (c, bound))
print(" ".join(out))
EOF
}
thresholds() { "$PY" -c 'import json,sys; t=json.load(open(sys.argv[1]))["thresholds"]; print(t["min"], t["max"])' "$1"; }
within() { "$PY" -c 'import sys; g,w,b=map(float,sys.argv[1:]); sys.exit(0 if abs(g-w)<=b else 1)' "$1" "$2" "$3"; }
ids() { "$S" cat --no-ids "$1" | sed 's/^{"id":"\([^"]*\)".*/\1/'; }

for N in 1 2 3 7; do
  mkdir -p "$T/p$N/tok" "$T/p$N/scored" "$T/p$N/sum"
  for ((r = 0; r < N; r++)); do
    nm=$(printf '%05d-of-%05d' "$r" "$N")
    "$S" tokenize ids -q --vocab-size 77 --part "$r/$N" "$T/docs.jsonl" -o "$T/p$N/tok/t-$nm.tok"
    # shellcheck disable=SC2086
    "$S" score -q $SC --to-stream "$T/p$N/tok/t-$nm.tok" -o "$T/p$N/scored/s-$nm.tok" --summary "$T/p$N/sum/sum-$nm.bin"
  done
  # merges in any order and grouping == the summary of the whole run
  mapfile -t parts < <(ls "$T/p$N/sum"/*.bin)
  "$S" score --merge-summaries "${parts[@]}" -o "$T/m_in.sum"
  mapfile -t rev < <(ls "$T/p$N/sum"/*.bin | sort -r)
  "$S" score --merge-summaries "${rev[@]}" -o "$T/m_rev.sum"
  half=$(( (N + 1) / 2 ))
  "$S" score --merge-summaries "${parts[@]:0:$half}" -o "$T/m_a.sum"
  if [ "$N" -gt 1 ]; then
    "$S" score --merge-summaries "${parts[@]:$half}" -o "$T/m_b.sum"
    "$S" score --merge-summaries "$T/m_b.sum" "$T/m_a.sum" -o "$T/m_tree.sum"
  else
    cp "$T/m_a.sum" "$T/m_tree.sum"
  fi
  for m in m_in m_rev m_tree; do
    cmp "$T/$m.sum" "$T/whole.sum" || fail "N=$N: merge '$m' differs from the summary of one run"
  done

  # cutoffs within the bound of numpy's; the same documents kept as the exact filter
  for sel in "ppl 10 90" "nll 25 75" "long_context 5 95" "tokens_own 30 70" "ppl 0 50"; do
    set -- $sel
    f=$1; [ "$f" = tokens_own ] && f=tokens
    read -r clo blo chi bhi <<< "$(numpy_cuts "$1" "$2" "$3")"
    "$S" filter -q --field "$f" --keep-pct "$2:$3" --cutoffs-from "$T/p$N/sum" "$T/p$N/scored" \
      -o "$T/approx.tok" --summary "$T/approx.json"
    "$S" filter -q --field "$f" --keep-pct "$2:$3" "$T/p$N/scored" -o "$T/exact.tok" --summary "$T/exact.json"
    read -r glo ghi <<< "$(thresholds "$T/approx.json")"
    read -r elo ehi <<< "$(thresholds "$T/exact.json")"
    if [ "$2" != 0 ]; then
      within "$elo" "$clo" "$("$PY" -c "print(1e-12*abs($clo)+1e-300)")" || fail "exact $f p$2 $elo is not numpy's $clo"
      within "$glo" "$clo" "$blo" || fail "N=$N $f p$2: cutoff $glo not within $blo of numpy's $clo"
    fi
    within "$ghi" "$chi" "$bhi" || fail "N=$N $f p$3: cutoff $ghi not within $bhi of numpy's $chi"
    cmp -s "$T/approx.tok" "$T/exact.tok" || fail "N=$N $sel: --cutoffs-from keeps other documents: $(diff <(ids "$T/approx.tok") <(ids "$T/exact.tok"))"
  done
  # buckets partition the scored documents the same way; per part with the global cutoffs
  for b in head middle tail; do
    "$S" filter -q --bucket $b --cutoffs-from "$T/p$N/sum" "$T/p$N/scored" -o "$T/approx.tok"
    "$S" filter -q --bucket $b "$T/p$N/scored" -o "$T/exact.tok"
    cmp -s "$T/approx.tok" "$T/exact.tok" || fail "N=$N bucket $b differs"
    for f in "$T/p$N/scored"/*.tok; do
      "$S" filter -q --bucket $b --cutoffs-from "$T/p$N/sum" "$f" -o "$T/one.tok"; ids "$T/one.tok"
    done > "$T/per_part"
    [ "$(ids "$T/exact.tok")" = "$(cat "$T/per_part")" ] || fail "N=$N bucket $b: per-part filtering with global cutoffs differs"
  done
done

# --scores with --cutoffs-from; standard input in one pass (nothing spooled)
"$S" filter -q --keep-pct 10:90 --cutoffs-from "$T/whole.sum" --scores "$T/scores.jsonl" "$T/docs.tok" -o "$T/a.tok"
"$S" filter -q --keep-pct 10:90 --scores "$T/scores.jsonl" "$T/docs.tok" -o "$T/b.tok"
cmp -s "$T/a.tok" "$T/b.tok" || fail "--scores with --cutoffs-from differs"
mkdir "$T/tmp"
TMPDIR=$T/tmp "$S" filter -q --keep-pct 10:90 --cutoffs-from "$T/whole.sum" < "$T/scored.tok" > "$T/c.tok"
[ -z "$(ls -A "$T/tmp")" ] || fail "stdin was spooled"
"$S" filter -q --keep-pct 10:90 "$T/scored.tok" -o "$T/d.tok"
cmp -s "$T/c.tok" "$T/d.tok" || fail "stdin with --cutoffs-from differs"
# the report says where the percentiles came from
"$S" filter --keep-pct 10:90 --cutoffs-from "$T/whole.sum" "$T/scored.tok" -o "$T/e.tok" --summary "$T/e.json" 2> "$T/err"
grep -q '; percentiles from 1 score summary (within relative 2^-10)$' "$T/err" || fail "report line: $(cat "$T/err")"
grep -q '"from_summaries":1,"relative_bound":0.0009765625}' "$T/e.json" || fail "JSON summary: $(cat "$T/e.json")"
# unscored documents (ppl null) are counted apart, and kept only when asked
"$S" filter -q --keep-unscored --keep-pct 0:100 --cutoffs-from "$T/whole.sum" "$T/scored.tok" -o "$T/u.tok"
[ "$(ids "$T/u.tok" | grep -c '^one$')" = 1 ] || fail "--keep-unscored with --cutoffs-from"

# --skip-existing skips only when the summary is there too
"$S" score -q -m "$M" --skip-existing "$T/docs.tok" -o "$T/sk.jsonl" --summary "$T/sk.sum"
rm "$T/sk.sum"
"$S" score -m "$M" --skip-existing "$T/docs.tok" -o "$T/sk.jsonl" --summary "$T/sk.sum" 2> "$T/err"
grep -q 'the summary does not verify' "$T/err" || fail "missing summary: $(cat "$T/err")"
[ -s "$T/sk.sum" ] || fail "the summary was not written again"
"$S" score -m "$M" --skip-existing "$T/docs.tok" -o "$T/sk.jsonl" --summary "$T/sk.sum" 2> "$T/err"
grep -q 'nothing to do' "$T/err" || fail "no skip with the summary present: $(cat "$T/err")"

# bad summaries: one-line errors naming the file, no output
P="$T/scored.tok"
sz=$(stat -c %s "$T/whole.sum")
head -c $((sz - 3)) "$T/whole.sum" > "$T/trunc.sum"
expect_fail nz "trunc.sum: score summary checksum mismatch \(truncated or damaged\)" -- "$S" filter --keep-pct 10:90 --cutoffs-from "$T/trunc.sum" "$P" -o "$T/o.tok"
no_file "$T/o.tok"
expect_fail nz "scores.jsonl: not a sluice score summary" -- "$S" filter --keep-pct 10:90 --cutoffs-from "$T/scores.jsonl" "$P" -o "$T/o.tok"
no_file "$T/o.tok"
{ head -c 8 "$T/whole.sum"; printf '\002'; tail -c +10 "$T/whole.sum"; } > "$T/v2.sum"
expect_fail nz "v2.sum: score summary version 2; this sluice reads version 1" -- "$S" filter --keep-pct 10:90 --cutoffs-from "$T/whole.sum" --cutoffs-from "$T/v2.sum" "$P" -o "$T/o.tok"
expect_fail nz "v2.sum: score summary version 2" -- "$S" score --merge-summaries "$T/whole.sum" "$T/v2.sum" -o "$T/o.sum"
no_file "$T/o.sum"
expect_fail nz "nope.sum" -- "$S" filter --keep-pct 10:90 --cutoffs-from "$T/nope.sum" "$P" -o "$T/o.tok"
rm "$T/p7/sum/sum-00003-of-00007.bin"
expect_fail nz "p7/sum: part 3 of 7 is missing" -- "$S" filter --keep-pct 10:90 --cutoffs-from "$T/p7/sum" "$P" -o "$T/o.tok"
expect_fail nz "no field bpb in the score summary \(it has: long_context, nll, nll_reset, ppl, scored_tokens, src_bytes, tokens\)" -- \
  "$S" filter --field bpb --keep-pct 10:90 --cutoffs-from "$T/whole.sum" "$P" -o "$T/o.tok"
no_file "$T/o.tok"
expect_fail 2 "--cutoffs-from: .*p3/sum/sum-00001-of-00003.bin is given twice" -- \
  "$S" filter --keep-pct 10:90 --cutoffs-from "$T/p3/sum" --cutoffs-from "$T/p3/sum/sum-00001-of-00003.bin" "$P" -o "$T/o.tok"
expect_fail 2 "cutoffs-from.*needs --keep-pct or --bucket" -- "$S" filter --max 5 --cutoffs-from "$T/whole.sum" "$P" -o "$T/o.tok"
expect_fail 2 "--summary needs a file of its own" -- "$S" score -m "$M" "$T/docs.tok" -o "$T/x.jsonl" --summary "$T/x.jsonl"
expect_fail 2 "merge-summaries takes summary files" -- "$S" score --merge-summaries -m "$M" "$T/whole.sum" -o "$T/o.sum"
echo ok

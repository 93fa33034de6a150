# Peak memory of each stage is bounded by its documented budget (docs/cli.md,
# "Memory") and does not grow with the input: every stage runs on generated
# heavy-tailed inputs of 1x, 4x and 16x the same pattern (rounds of tiny
# documents with one large document, 1 to 4 MiB, at a different position
# each round), and the peak resident size of the child (GNU time's %M, from
# getrusage) must stay under the budget, and at 16x within a small slack of
# 1x.
. "$SRC/tests/cli/lib.sh"
[ -x /usr/bin/time ] || fail "/usr/bin/time (GNU time, Debian package 'time') is needed"
MiB=1024

# peak_kb NAME command...: runs the command (output to files, never to a
# pipe), records its peak RSS in KiB in $T/NAME.kb and prints it.
peak_kb() {
  local name=$1; shift
  /usr/bin/time -f %M -o "$T/$name.kb" "$@" >"$T/$name.out" 2>"$T/$name.err" || {
    cat "$T/$name.err" >&2; fail "$name: exit status non-zero: $*"; }
  tail -n 1 "$T/$name.kb"
}
# check STAGE BUDGET_KIB SLACK_KIB KB1 KB4 KB16: each peak under the budget,
# and 16x no more than 1x + slack.
check() {
  local stage=$1 budget=$2 slack=$3 a=$4 b=$5 c=$6
  echo "$stage: peak RSS 1x ${a} KiB, 4x ${b} KiB, 16x ${c} KiB (budget ${budget} KiB)"
  for v in "$a" "$b" "$c"; do
    [ "$v" -le "$budget" ] || fail "$stage: peak RSS $v KiB over the budget of $budget KiB"
  done
  [ "$c" -le $((a + slack)) ] || fail "$stage: peak RSS grows with the input: 1x $a KiB, 16x $c KiB"
}

# JSON Lines: ROUNDS rounds of 256 documents, the large one of round r at
# position r*97 % 256, of 1, 2, 1, 4 MiB in turn (mean 2 MiB).
python3 - "$T" <<'EOF'
import json, sys
T = sys.argv[1]
words = "the of and to in is that for it with as was on be at by this from".split()
big = {}
for mib in (1, 2, 4):
    line = " ".join(words[(i * 7) % len(words)] for i in range(97)) + "\n"
    big[mib] = (line * ((mib << 20) // len(line) + 1))[: mib << 20]
for x, rounds in ((1, 4), (4, 16), (16, 64)):
    with open(f"{T}/docs{x}.jsonl", "w") as f:
        for r in range(rounds):
            pos = r * 97 % 256
            for i in range(256):
                t = big[(1, 2, 1, 4)[r % 4]] if i == pos else f"small document {r} {i}"
                f.write(json.dumps({"id": f"{r}.{i}", "text": t, "src": "gen"}) + "\n")
EOF

# ---- read: --mem-budget (default 64 MiB) + 8 x the longest document
for x in 1 4 16; do
  peak_kb read$x "$SLUICE" read --mem-budget 16M "$T/docs$x.jsonl" -o "$T/read$x.jsonl" >/dev/null
  [ "$(wc -l < "$T/read$x.jsonl")" -eq $((x * 4 * 256)) ] || fail "read: wrong document count"
done
check "read --mem-budget 16M" $(((16 + 8 * 4 + 16) * MiB)) $((8 * MiB)) \
  "$(cat "$T/read1.kb")" "$(cat "$T/read4.kb")" "$(cat "$T/read16.kb")"
peak_kb read_default "$SLUICE" read "$T/docs16.jsonl" -o "$T/read_default.jsonl" >/dev/null
v=$(cat "$T/read_default.kb")
echo "read: peak RSS 16x ${v} KiB at the default budget"
[ "$v" -le $(((64 + 8 * 4 + 16) * MiB)) ] || fail "read: peak RSS $v KiB over the default budget"
cmp -s "$T/read_default.jsonl" "$T/read16.jsonl" || fail "read: output depends on --mem-budget"

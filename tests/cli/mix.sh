# `sluice mix` (docs/longctx.md section 1): python/test_sluice_mix.py
# re-derives every run's output from the specification (section 1.1) and
# checks shares (within 0.5% at 10^6 tokens), the up-sampling factor, a
# length target and the report's histograms on a generated corpus with known
# length distributions; here: same seed -> same bytes, another seed differs,
# `shard` after `mix` keeps the source, the plot, and the errors.
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
PY=/usr/bin/python3
command -v $PY >/dev/null || PY=python3
M=$T/mix
mkdir -p "$M"
# three sources: (documents, [(fraction, min length, max length)])
$PY - "$M" <<'PYGEN'
import json, random, sys
spec = {"web": (3000, [(0.9, 20, 1500), (0.1, 2048, 4000)]),
        "books": (120, [(0.4, 300, 2048), (0.6, 2048, 4000)]),
        "code": (300, [(0.95, 10, 600), (0.05, 2048, 3000)])}
rnd = random.Random(7)
for name, (n, parts) in spec.items():
    with open("%s/%s.jsonl" % (sys.argv[1], name), "w") as f:
        k = 0
        for frac, lo, hi in parts:
            for _ in range(round(n * frac)):
                ids = [rnd.randrange(2, 500) for _ in range(rnd.randrange(lo, hi))]
                f.write(json.dumps({"id": "%s-%d" % (name, k), "ids": ids, "lang": "x" if k % 2 else "y"}) + "\n")
                k += 1
        if name == "code":  # an empty document is never taken
            f.write(json.dumps({"id": "code-empty", "ids": [], "lang": "y"}) + "\n")
PYGEN
for s in web books code; do $S tokenize ids --vocab-size 512 --eos 1 "$M/$s.jsonl" -o "$M/$s.tok"; done
SRCS="--source web=$M/web.tok:0.6 --source books=$M/books.tok:0.3 --source code=$M/code.tok:0.1"
srcs_json='[["web",0.6],["books",0.3],["code",0.1]]'
run() { # NAME ARGS-JSON -- mix options...
  local name=$1 args=$2; shift 3
  $S mix "$@" --report "$M/$name.json" -o "$M/$name.tok" 2>"$M/$name.err"
  $S cat "$M/$name.tok" >"$M/$name.cat"
  echo "$args" >"$M/$name.args"
}
run up1 "{\"sources\":$srcs_json,\"tokens\":1000000,\"seed\":1,\"max_epochs\":4,\"policy\":[\"upsample\",2048,3]}" -- \
  $SRCS --tokens 1000000 --upsample-long 2048:3 --seed 1 --plot "$M/up1.svg"
run up2 "{\"sources\":$srcs_json,\"tokens\":1000000,\"seed\":2,\"max_epochs\":4,\"policy\":[\"upsample\",2048,3]}" -- \
  $SRCS --tokens 1000000 --upsample-long 2048:3 --seed 2
run up3 "{\"sources\":$srcs_json,\"tokens\":1500000,\"seed\":3,\"max_epochs\":6,\"policy\":[\"upsample\",1000,2.5]}" -- \
  $SRCS --tokens 1500000 --upsample-long 1000:2.5 --seed 3 --max-epochs 6
run plain "{\"sources\":$srcs_json,\"tokens\":1000000,\"seed\":5,\"max_epochs\":4,\"policy\":[\"none\"]}" -- \
  $SRCS --tokens 1000000 --seed 5
echo '{"bins":[{"lo":0,"hi":2048,"share":1},{"lo":2048,"hi":null,"share":1}]}' >"$M/target.json"
run target "{\"sources\":$srcs_json,\"tokens\":1000000,\"seed\":4,\"max_epochs\":4,\"policy\":[\"target\",[{\"lo\":0,\"hi\":2048,\"share\":1},{\"lo\":2048,\"hi\":null,\"share\":1}]]}" -- \
  $SRCS --tokens 1000000 --length-target "$M/target.json" --seed 4 --max-epochs 4
SLUICE_TEST_MIX="$M" SLUICE_TEST_RUNS="up1 up2 up3 plain target" "$PY" "$SRC/python/test_sluice_mix.py" 2>&1 | tee "$T/py.log"
grep -q "^OK" "$T/py.log" || fail "python tests did not pass"

# same seed, same bytes (stream, report, plot); another seed, another mix
$S mix $SRCS --tokens 1000000 --upsample-long 2048:3 --seed 1 --report "$T/r.json" --plot "$T/p.svg" -o "$T/again.tok" 2>/dev/null
cmp "$M/up1.tok" "$T/again.tok" || fail "same seed, different output"
cmp "$M/up1.json" "$T/r.json" || fail "same seed, different report"
cmp "$M/up1.svg" "$T/p.svg" || fail "same seed, different plot"
! cmp -s "$M/up1.tok" "$M/up2.tok" || fail "seeds 1 and 2 give the same output"
# the summary on stderr, one line per source
grep -Eq '^  books +[0-9]+ tokens +30\.[0-9]+% \(target  30\.00%\)' "$M/up1.err" || fail "summary: $(cat "$M/up1.err")"
# the plot: an SVG with one input and one mixed panel per source
$PY -c 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); assert len(d.getElementsByTagName("svg")) == 7' "$M/up1.svg" \
  || fail "plot is not an SVG with 6 panels"
grep -q "books, mixed" "$M/up1.svg" || fail "plot panel titles"
# shard follows: documents.jsonl carries each document's source
$S shard "$M/up1.tok" --seq-len 4096 -o "$T/sh" 2>/dev/null
[ "$(jq -r '.meta.source' "$T/sh/documents.jsonl" | sort | uniq -c | awk '{print $2}' | tr '\n' ' ')" = "books code web " ] \
  || fail "shard lost the sources"

# an impossible request: books (about 274k tokens, long documents weighing 3)
# cannot give 30% of 1M within one epoch; the message names it and the shortfall
$PY - "$M" >"$T/want" <<'PY'
import json, math, sys
d = sys.argv[1]
n = [len(json.loads(l)["ids"]) for l in open(d + "/books.jsonl")]
f = [3.0 if x >= 2048 else 1.0 for x in n]
M = 0.0
for a, b in zip(f, n):
    M += a * float(b)
T = 1000000.0 * (0.3 / 1.0)
emax = max(T / M * a for a in f)
can = math.floor(T * (1.0 / emax))
print("source 'books': .* more than --max-epochs 1: within it the source gives at most %d tokens, %d \\(" % (can, T - can))
PY
expect_fail 1 "$(cat "$T/want")" -- $S mix $SRCS --tokens 1000000 --upsample-long 2048:3 --max-epochs 1 -o "$T/x.tok"
no_file "$T/x.tok"
expect_fail 2 "expected NAME=FILE:WEIGHT" -- $S mix --source web --tokens 10 -o "$T/x.tok"
expect_fail 2 "weight 'abc' is not a positive number" -- $S mix --source web=$M/web.tok:abc --tokens 10
expect_fail 2 "--tokens N is required" -- $S mix --source web=$M/web.tok:1
expect_fail 2 "exclude each other" -- $S mix --source web=$M/web.tok:1 --tokens 10 --upsample-long 5:2 --length-target "$M/target.json"
expect_fail 2 "not from standard input" -- $S mix --source web=-:1 --tokens 10
expect_fail 1 "source 'web' is given twice" -- $S mix --source web=$M/web.tok:1 --source web=$M/code.tok:1 --tokens 10
echo '{"bins":[{"lo":0,"hi":100,"share":1},{"lo":5000,"hi":null,"share":1}]}' >"$T/t2.json"
expect_fail 1 "source 'web': no document with \\[5000, inf\\) tokens for --length-target bin 1" -- \
  $S mix --source web=$M/web.tok:1 --tokens 1000 --length-target "$T/t2.json"
echo '{"bins":[{"lo":10,"hi":5}]}' >"$T/t3.json"
expect_fail 1 "t3.json: bin 0: expected" -- $S mix --source web=$M/web.tok:1 --tokens 1000 --length-target "$T/t3.json"
$S tokenize ids --vocab-size 600 "$M/code.jsonl" -o "$T/v600.tok"
expect_fail 1 "source 'other' .*header differs from source 'web': vocab size" -- \
  $S mix --source web=$M/web.tok:1 --source other=$T/v600.tok:1 --tokens 1000
no_file "$T/x.tok"

# memory: documents are streamed, never held: mixing 10 concatenated copies
# of web.tok (10x the bytes and documents) costs only the 6-14 bytes per input
# document of the plan more than mixing one copy
for i in 1 2 3 4 5 6 7 8 9 10; do cat "$M/web.tok"; done >"$T/web10.tok"
rss() { # peak RSS in KiB of a command, measured by the kernel for the child
  # (an ASan build would otherwise keep every freed block in its quarantine)
  ASAN_OPTIONS=quarantine_size_mb=0${ASAN_OPTIONS:+:$ASAN_OPTIONS} "$PY" -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}
r1=$(rss $S mix --source web=$M/web.tok:1 --tokens 2900000 -o "$T/w1.tok")
r10=$(rss $S mix --source web=$T/web10.tok:1 --tokens 29000000 -o "$T/w10.tok")
echo "peak RSS: 1 copy ${r1} KiB, 10 copies ${r10} KiB (input $(($(stat -c %s "$T/web10.tok") / 1024)) KiB)"
[ $((r10 - r1)) -lt 2048 ] || fail "memory grows with the input: ${r1} KiB -> ${r10} KiB"

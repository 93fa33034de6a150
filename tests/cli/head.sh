# `sluice head`: the first N documents or T tokens of a token
# stream, as a token stream with the same header; reading stops when the head is
# complete (the input here is a FIFO that never ends).
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
cd "$T"
awk 'BEGIN { for (i = 0; i < 50; i++) { n = 1 + (i * 7) % 20; printf "{\"id\":\"d%d\",\"k\":%d,\"ids\":[", i, i;
      for (j = 0; j < n; j++) printf "%s%d", (j ? "," : ""), 1 + (i + j) % 90; print ",0]}" } }' >docs.jsonl
$S tokenize ids --vocab-size 100 --eos 0 --ends-with-eos docs.jsonl -o all.tok
$S cat all.tok >all.jsonl
# -n N: the first N documents, the header unchanged (doc_eos included)
$S head -n 7 all.tok -o h7.tok
$S cat h7.tok | cmp - <(head -n 7 all.jsonl) || fail "head -n 7: other documents"
[ "$($S cat --header h7.tok | head -n 1 | sed 's/"file":"[^"]*",//')" = "$($S cat --header all.tok | head -n 1 | sed 's/"file":"[^"]*",//')" ] \
  || fail "head changed the header"
$S cat --header h7.tok | head -n 1 | grep -q '"doc_eos":0' || fail "doc_eos lost"
[ "$($S head all.tok | $S cat | wc -l)" = 10 ] || fail "the default is 10 documents"
[ "$($S head -n 0 all.tok | $S cat | wc -l)" = 0 ] || fail "-n 0"
[ "$($S head -n 500 all.tok | $S cat | wc -l)" = 50 ] || fail "-n beyond the end"
# --tokens T: exactly T tokens, the last document cut (id and metadata kept)
$S head --tokens 100 all.tok -o t.tok 2>err
grep -q 'was cut to fit --tokens' err || fail "no warning for the cut document: $(cat err)"
/usr/bin/python3 - all.jsonl <($S cat t.tok) <<'PY' || fail "--tokens 100"
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
assert sum(len(d["ids"]) for d in b) == 100, sum(len(d["ids"]) for d in b)
for x, y in zip(a, b[:-1]):
    assert x == y
last = b[-1]; full = a[len(b) - 1]
assert last["id"] == full["id"] and last["k"] == full["k"] and full["ids"][:len(last["ids"])] == last["ids"]
assert len(last["ids"]) < len(full["ids"])
PY
[ "$($S head -n 3 --tokens 1000 all.tok | $S cat | wc -l)" = 3 ] || fail "-n and --tokens: the first limit"
# it stops reading: a FIFO held open by a writer that never finishes
mkfifo pipe
exec 3<>pipe
cat all.tok >&3
timeout 10 $S head -n 5 <pipe >five.tok || fail "head waited for the end of its input"
exec 3>&-
[ "$($S cat five.tok | wc -l)" = 5 ] || fail "head of a pipe"
# a packed stream: whole rows only
$S pack --seq-len 16 all.tok -o p.tok
$S head -n 2 p.tok | $S cat | wc -l | grep -qx 2 || fail "head of a packed stream"
expect_fail 1 'a packed stream: its rows cannot be cut' -- $S head --tokens 5 p.tok
expect_fail 1 'bad.tok' -- $S head -n 2 bad.tok

# `mix --source-ids`: two sources whose documents share ids
# (line-numbered ids of same-named files, both "a.jsonl:1") mix into a stream
# whose ids are unique, so `shard --unique-ids` holds and `shard` does not warn;
# without it the collision is kept (shard warns). The documents, their order
# and their tokens are those of the run without the option.
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
cd "$T"
mkdir x y
for i in $(seq 1 40); do printf '{"ids":[%d,%d,%d]}\n' $((i % 9 + 1)) $((i % 7 + 1)) 0; done >x/a.jsonl
for i in $(seq 1 40); do printf '{"ids":[%d,%d]}\n' $((i % 5 + 1)) 0; done >y/a.jsonl
(cd x && $S tokenize ids --vocab-size 16 --eos 0 a.jsonl -o ../x.tok)
(cd y && $S tokenize ids --vocab-size 16 --eos 0 a.jsonl -o ../y.tok)
$S mix -q --source x=x.tok:0.5 --source y=y.tok:0.5 --tokens 200 --seed 1 -o plain.tok
$S mix -q --source x=x.tok:0.5 --source y=y.tok:0.5 --tokens 200 --seed 1 --source-ids -o ids.tok
$S shard --seq-len 16 plain.tok -o s1 2>err1
grep -q 'repeat an earlier id' err1 || fail "the collision should show without --source-ids: $(cat err1)"
$S shard --seq-len 16 --unique-ids ids.tok -o s2 2>err2 || fail "--source-ids: ids still collide: $(cat err2)"
[ ! -s err2 ] || fail "shard warned: $(cat err2)"
/usr/bin/python3 - plain.tok ids.tok <<'PY' || fail "--source-ids changed more than the ids"
import json, subprocess, sys, os
def docs(p):
    out = subprocess.run([os.environ["SLUICE"], "cat", p], capture_output=True, text=True, check=True).stdout
    return [json.loads(l) for l in out.splitlines()]
a, b = docs(sys.argv[1]), docs(sys.argv[2])
assert len(a) == len(b) > 20
for x, y in zip(a, b):
    assert y["id"] == x["meta"]["source"] + "/" + x["id"] if "meta" in x else x["source"] + "/" + x["id"], (x, y)
    assert x["ids"] == y["ids"]
assert len({d["id"] for d in b}) == len(b)
PY

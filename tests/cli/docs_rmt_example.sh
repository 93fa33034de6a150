# The shard examples of docs/shards.md (section 0) and docs/longctx.md run as
# typed (the RMT example once named a memory id the GPT-NeoX
# vocabulary rejects): every `sluice shard tokens.tok ...` command of those
# pages, continuation lines joined, runs on a tokens.tok made with the real
# GPT-NeoX tokenizer (tests/data/bpe/neox-tokenizer.json, vocab 50277), and
# `sluice stats` reads what it wrote.
. "$SRC/tests/cli/lib.sh"
cd "$T"
for f in "$SRC"/examples/data/text/*.txt; do
  /usr/bin/python3 -c 'import json,sys; print(json.dumps({"id": sys.argv[1], "text": open(sys.argv[1]).read()[:3000]}))' "$f"
done >docs.jsonl
"$SLUICE" tokenize bpe -t "$SRC/tests/data/bpe/neox-tokenizer.json" --append-eos docs.jsonl -o tokens.tok
/usr/bin/python3 - "$SRC/docs/shards.md" "$SRC/docs/longctx.md" >cmds.sh <<'PY'
import re, sys
for path in sys.argv[1:]:
    text = open(path).read()
    for block in re.findall(r"^```(?:sh)?\n(.*?)^```", text, flags=re.S | re.M):
        for cmd in re.sub(r"\\\n\s*", " ", block).splitlines():
            cmd = cmd.split(" #")[0].strip()
            if cmd.startswith("sluice shard tokens.tok"):
                print(cmd)
PY
n=$(grep -c . cmds.sh)
[ "$n" -ge 3 ] || fail "expected at least 3 shard examples, found $n"
grep -q -- '--memory-id' cmds.sh || fail "no RMT example found"
i=0
while read -r cmd; do
  i=$((i + 1)); rm -rf shards-rec shards-rmt
  (PATH="$(dirname "$SLUICE"):$PATH"; eval "$cmd") 2>err || fail "docs example failed: $cmd: $(cat err)"
  out=$(echo "$cmd" | grep -oE -- '-o [^ ]+' | cut -c4-)
  "$SLUICE" stats "$out" >/dev/null || fail "stats of $out"
done <cmds.sh
echo "$i examples ran"

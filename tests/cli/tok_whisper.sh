# Whisper's multilingual.tiktoken (openai-whisper's asset, rank 50256 spelled
# "=", the empty token as tiktoken reads it): it loads, the ids equal
# tiktoken 0.14's encode_ordinary under Whisper's pattern, and ids with the
# empty token decode as tiktoken's decode_bytes does (whisper-expected.jsonl,
# made by tests/data/tiktoken/make_whisper.py). detokenize takes --pattern
# and --special, as tokenize does, for a stream that does not record them
# ('tokenize ids' output).
. "$SRC/tests/cli/lib.sh"
D="$DATA/tiktoken"
xz -dc "$D/multilingual.tiktoken.xz" > "$T/multilingual.tiktoken"
python3 - "$D/texts.jsonl" "$D/whisper-expected.jsonl" "$T" <<'PY'
import json, sys
texts = [json.loads(l)['text'] for l in open(sys.argv[1], encoding='utf-8')][:400]
exp = [json.loads(l) for l in open(sys.argv[2], encoding='utf-8')]
with open(sys.argv[3] + '/docs.jsonl', 'w', encoding='utf-8') as f:
    for i, t in enumerate(texts):
        f.write(json.dumps({'id': 'd%d' % i, 'text': t}) + '\n')
with open(sys.argv[3] + '/ids.jsonl', 'w') as f:
    for i, r in enumerate(exp[400:]):
        f.write(json.dumps({'id': 'x%d' % i, 'ids': r['ids']}) + '\n')
PY
"$SLUICE" tokenize text -t "$T/multilingual.tiktoken" --pattern gpt2 --special '<|endoftext|>=50257' \
  "$T/docs.jsonl" -o "$T/w.tok"
"$SLUICE" cat "$T/w.tok" > "$T/w.jsonl"
python3 - "$D/whisper-expected.jsonl" "$T/w.jsonl" <<'PY' || fail "Whisper ids differ from tiktoken's"
import json, sys
want = [json.loads(l)['ids'] for l in open(sys.argv[1], encoding='utf-8')][:400]
got = [json.loads(l)['ids'] for l in open(sys.argv[2], encoding='utf-8')]
bad = [i for i, (w, g) in enumerate(zip(want, got)) if w != g]
assert len(got) == len(want) == 400 and not bad, bad[:10]
PY
"$SLUICE" detokenize -t "$T/multilingual.tiktoken" "$T/w.tok" | python3 -c "
import json, sys
want = [json.loads(l)['text'] for l in open(sys.argv[1], encoding='utf-8')]
got = [json.loads(l)['text'] for l in sys.stdin]
assert got == want" "$T/docs.jsonl" || fail "Whisper round trip"

# ids from elsewhere ('tokenize ids': no pattern in the header) with the empty token
"$SLUICE" tokenize ids --vocab-size 50258 "$T/ids.jsonl" -o "$T/ids.tok"
expect_fail 1 "multilingual.tiktoken: a tiktoken rank file needs a pattern" -- \
  "$SLUICE" detokenize -t "$T/multilingual.tiktoken" "$T/ids.tok"
"$SLUICE" detokenize -t "$T/multilingual.tiktoken" --pattern gpt2 --special '<|endoftext|>=50257' "$T/ids.tok" \
  > "$T/dec.jsonl"
python3 - "$D/whisper-expected.jsonl" "$T/dec.jsonl" <<'PY' || fail "decoded ids differ from tiktoken's decode_bytes"
import json, sys
want = [json.loads(l) for l in open(sys.argv[1], encoding='utf-8')][400:]
got = [json.loads(l)['text'] for l in open(sys.argv[2], encoding='utf-8')]
assert len(got) == len(want) == 50
for w, g in zip(want, got):
    assert g == bytes.fromhex(w['hex']).decode('utf-8', 'replace'), (w, g)
PY
# the options are refused for a tokenizer that is not a rank file
expect_fail 1 "--pattern and --special are for tiktoken rank files" -- \
  "$SLUICE" detokenize -t "$DATA/bpe/neox-tokenizer.json" --pattern gpt2 "$T/ids.tok"
expect_fail 2 "--special takes NAME=ID" -- "$SLUICE" detokenize -t "$T/multilingual.tiktoken" --special parse "$T/ids.tok"

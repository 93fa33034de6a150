# sluice tokenize bpe with tiktoken rank files and Mistral's tekken JSON: ids
# equal tiktoken 0.14's encode_ordinary (expected.jsonl.gz, made by
# tests/data/tiktoken/make_fixtures.py) for every pattern name, a regex, the
# special tokens parsed, and Mistral's Tekkenizer ids of two tekken files; the
# same for any thread count; the PCRE2 pre-tokenizer agrees with the scanners
# on text that PCRE2's Unicode 14 tables know; detokenize gives the text
# back (tiktoken's decode) using the pattern and special tokens recorded in
# the header; bad files and options give one line naming the file and line.
. "$SRC/tests/cli/lib.sh"
D="$DATA/tiktoken"
RANKS="$D/small.tiktoken"
SPECIALS='<|endoftext|>=7000,<|fim_prefix|>=7001,<|endofprompt|>=7010'

python3 -c "
import json, sys
for i, l in enumerate(open(sys.argv[1], encoding='utf-8')):
    print(json.dumps({'id': 'd%d' % i, 'text': json.loads(l)['text']}))" "$D/texts.jsonl" > "$T/docs.jsonl"

# check KEY OUT.jsonl [unicode14]: the ids of OUT equal the expected column
# KEY; with unicode14 only on texts whose characters Unicode 14 assigns (what
# PCRE2 10.42 and Python 3.11's unicodedata know)
check() {
  python3 - "$D/expected.jsonl.gz" "$D/texts.jsonl" "$@" <<'PY' || fail "ids of $1 differ from tiktoken"
import gzip, json, sys, unicodedata
want = [json.loads(l) for l in gzip.open(sys.argv[1], 'rt', encoding='utf-8')]
texts = [json.loads(l)['text'] for l in open(sys.argv[2], encoding='utf-8')]
key, out = sys.argv[3], sys.argv[4]
u14 = len(sys.argv) > 5
got = [json.loads(l) for l in open(out, encoding='utf-8')]
assert len(got) == len(want) == len(texts) > 4500, (len(got), len(want))
known = lambda t: all(unicodedata.category(c) != 'Cn' or 0xE000 <= ord(c) for c in t)
checked = [i for i in range(len(want)) if not u14 or known(texts[i])]
assert len(checked) > 4000, len(checked)
bad = [i for i in checked if got[i]['ids'] != want[i][key] or got[i]['id'] != 'd%d' % i]
assert not bad, (key, bad[:10])
PY
}
for p in gpt2 cl100k qwen2 o200k tekken; do
  "$SLUICE" tokenize bpe -t "$RANKS" --pattern $p "$T/docs.jsonl" -o "$T/$p.tok"
  "$SLUICE" cat "$T/$p.tok" > "$T/$p.jsonl"
  check $p "$T/$p.jsonl"
  # PCRE2 with the spelled-out whitespace class: the same split where it knows the characters
  "$SLUICE" tokenize bpe -t "$RANKS" --pattern $p --pretokenizer pcre2 "$T/docs.jsonl" | "$SLUICE" cat > "$T/pcre.jsonl"
  check $p "$T/pcre.jsonl" unicode14
done
# the same ranks in another order, with CRLF line ends and an empty line
# (the careful line parse, not the one-pass one; ranks out of order): the same ids
tac "$RANKS" | awk 'NR == 100 { print "" } { printf "%s\r\n", $0 }' > "$T/reordered.tiktoken"
"$SLUICE" tokenize bpe -t "$T/reordered.tiktoken" --pattern cl100k "$T/docs.jsonl" | "$SLUICE" cat > "$T/reordered.jsonl"
check cl100k "$T/reordered.jsonl"
# the rank file gzip'd (as tiktoken caches ship them): read decoded, the same ids
gzip -c "$RANKS" > "$T/small.tiktoken.gz"
"$SLUICE" tokenize bpe -t "$T/small.tiktoken.gz" --pattern cl100k "$T/docs.jsonl" | "$SLUICE" cat > "$T/gz.jsonl"
check cl100k "$T/gz.jsonl"
# llama3 is cl100k's split (the same ids and fingerprint), and so is the pattern written out
"$SLUICE" tokenize bpe -t "$RANKS" --pattern llama3 "$T/docs.jsonl" | cmp - "$T/cl100k.tok" || fail "llama3 != cl100k"
CL100K="'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++\$|\s*[\r\n]|\s+(?!\S)|\s"
"$SLUICE" tokenize bpe -t "$RANKS" --pattern "$CL100K" "$T/docs.jsonl" | cmp - "$T/cl100k.tok" ||
  fail "cl100k's pattern in full is not recognised"
# a regex of one's own (PCRE2; text it does not match is dropped, as tiktoken does)
"$SLUICE" tokenize bpe -t "$RANKS" --pattern '\p{L}+|\p{N}{1,2}| ?[.,!?]' "$T/docs.jsonl" | "$SLUICE" cat > "$T/re.jsonl"
check regex "$T/re.jsonl" unicode14
# special tokens parsed (tiktoken's encode(allowed_special="all")), two threads
"$SLUICE" tokenize bpe -t "$RANKS" --pattern o200k --special "$SPECIALS" --special parse -@ 2 "$T/docs.jsonl" -o "$T/parse.tok"
"$SLUICE" cat "$T/parse.tok" > "$T/parse.jsonl"
check o200k_parse "$T/parse.jsonl"
"$SLUICE" tokenize bpe -t "$RANKS" --pattern o200k -@ 2 "$T/docs.jsonl" | cmp - "$T/o200k.tok" ||
  fail "output depends on the thread count"
# tekken files: Mistral's ids (vocabulary ranks offset by the special tokens)
for k in small specials; do
  "$SLUICE" tokenize bpe -t "$D/tekken-$k.json" "$T/docs.jsonl" -o "$T/tekken-$k.tok"
  "$SLUICE" cat "$T/tekken-$k.tok" > "$T/tk.jsonl"
  check tekken_$k "$T/tk.jsonl"
done

# decoding gives the text back (tiktoken's decode of its own encoding)
roundtrip() { # STREAM [TOKENIZER]
  "$SLUICE" detokenize -t "$2" "$1" > "$T/dec.jsonl"
  python3 - "$D/texts.jsonl" "$T/dec.jsonl" <<'PY' || fail "decoding $1 does not give the texts back"
import json, sys
want = [json.loads(l)['text'] for l in open(sys.argv[1], encoding='utf-8')]
got = [json.loads(l)['text'] for l in open(sys.argv[2], encoding='utf-8')]
bad = [i for i, (w, g) in enumerate(zip(want, got)) if w != g]
assert len(got) == len(want) and not bad, bad[:10]
PY
}
roundtrip "$T/parse.tok" "$RANKS" # pattern and special tokens from the header
roundtrip "$T/gpt2.tok" "$RANKS"
roundtrip "$T/tekken-small.tok" "$D/tekken-small.json"

# header: name, vocab size (to the last special id), special ids, fingerprint
"$SLUICE" cat --header "$T/parse.tok" > "$T/h"
grep -q '"tokenizer":"tiktoken:small.tiktoken"' "$T/h" || fail "header name: $(cat "$T/h")"
grep -q '"vocab_size":7011,.*"eos":7000' "$T/h" || fail "header ids: $(cat "$T/h")"
"$SLUICE" cat --header "$T/tekken-small.tok" | grep -q '"vocab_size":7000,.*"eos":2,"bos":1,"pad":11,"unk":0' ||
  fail "tekken header: $("$SLUICE" cat --header "$T/tekken-small.tok")"
fp() { "$SLUICE" cat --header "$1" | sed 's/.*"fingerprint":"\([^"]*\)".*/\1/'; }
[ "$(fp "$T/o200k.tok")" != "$(fp "$T/cl100k.tok")" ] || fail "the pattern is not in the fingerprint"
[ "$(fp "$T/o200k.tok")" != "$(fp "$T/parse.tok")" ] || fail "the special tokens are not in the fingerprint"
sha=$(sha256sum "$D/tekken-small.json" | cut -d' ' -f1)
[ "$(fp "$T/tekken-small.tok")" = "sha256:$sha" ] || fail "tekken fingerprint is not the file's sha256"
printf '{"id":"a","text":"Hello world"}\n' > "$T/one.jsonl"
"$SLUICE" tokenize bpe -t "$D/tekken-small.json" --append-eos --prepend-bos "$T/one.jsonl" | "$SLUICE" cat |
  grep -q '"ids":\[1,.*,2\]' || fail "tekken bos/eos"
# a stream of another rank file does not decode without --force
head -n 6000 "$RANKS" > "$T/other.tiktoken"
expect_fail 1 "made with tokenizer sha256:" -- "$SLUICE" detokenize -t "$T/other.tiktoken" "$T/o200k.tok"

# bad input: one line naming the file (and line), no output
bad() { # FILE PATTERN [options]
  local f=$1 pat=$2
  shift 2
  expect_fail 1 "$pat" -- "$SLUICE" tokenize bpe -t "$f" "$@" "$T/one.jsonl" -o "$T/z.tok"
  no_file "$T/z.tok"
  [ "$(wc -l < "$T/err")" -eq 1 ] || fail "more than one line: $(cat "$T/err")"
}
sed '5s/.*/QUJD!! 4/' "$RANKS" > "$T/b64.tiktoken"
bad "$T/b64.tiktoken" "b64.tiktoken:5: 'QUJD!!' is not base64" --pattern gpt2
sed '7s/ 6$/ 5/' "$RANKS" > "$T/dup.tiktoken"
bad "$T/dup.tiktoken" "dup.tiktoken:7: rank 5 is given twice \(also on line 6\)" --pattern gpt2
sed '10d' "$RANKS" > "$T/gap.tiktoken"
bad "$T/gap.tiktoken" "gap.tiktoken: rank 9 is missing" --pattern gpt2
sed '300s/.*/AA== 299/' "$RANKS" > "$T/twice.tiktoken"
bad "$T/twice.tiktoken" "twice.tiktoken:300: the token of rank 299 is also rank 0 \(line 1\)" --pattern gpt2
n=$(wc -l < "$T/reordered.tiktoken") # rank 0 on its last line; line 300 holds rank n - 300
sed '300s/.*/AA== '$((n - 300))'\r/' "$T/reordered.tiktoken" > "$T/twice2.tiktoken"
bad "$T/twice2.tiktoken" "twice2.tiktoken:$n: the token of rank 0 is also rank $((n - 300)) \(line 300\)" --pattern gpt2
sed '3s/ 2$/ x/' "$RANKS" > "$T/rank.tiktoken"
bad "$T/rank.tiktoken" "rank.tiktoken:3: rank 'x' is not an integer" --pattern gpt2
sed '3d' "$RANKS" | awk '{ print $1, NR - 1 }' > "$T/nobyte.tiktoken"
bad "$T/nobyte.tiktoken" "nobyte.tiktoken: no token for the byte 0x02" --pattern gpt2
bad "$RANKS" "small.tiktoken: a tiktoken rank file needs a pattern"
bad "$RANKS" "small.tiktoken: pattern at offset 3: " --pattern '(ab'
bad "$RANKS" "small.tiktoken: special tokens: 'x=1y' is not NAME=ID" --pattern gpt2 --special 'x=1y'
bad "$RANKS" "small.tiktoken: special tokens: id 7000 is given twice" --pattern gpt2 --special 'a=7000,b=7000'
bad "$RANKS" "small.tiktoken: special token 'a' has id 5, the id of an ordinary token" --pattern gpt2 --special 'a=5'
bad "$D/tekken-small.json" "tekken-small.json: a tekken file has its own pattern" --pattern gpt2
sed 's/"token_bytes":"AQ=="/"token_bytes":"AQ="/' "$D/tekken-small.json" > "$T/tk.json"
bad "$T/tk.json" "tk.json:1: vocab\[1\].token_bytes 'AQ=' is not base64"
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
d['config']['default_vocab_size'] = 10**6
json.dump(d, open(sys.argv[2], 'w'), indent=1)" "$D/tekken-small.json" "$T/tk2.json"
bad "$T/tk2.json" "tk2.json:[0-9]+: config.default_vocab_size must be an integer in 1256..7000"

# A tekken file is read one way when it is written as Mistral writes them
# (entries of rank, token_bytes, token_str in that order) and the whole-tree
# way otherwise: the same file written both ways (pretty-printed, or with
# the members and one entry's keys in another order, an escape in a
# token_str, an extra member) gives the same ids and the same messages, line
# numbers included
python3 - "$D/tekken-small.json" "$T" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
out = sys.argv[2]
json.dump(d, open(out + "/tkp.json", "w"), indent=3)  # the usual way, pretty
e = dict(d)
e["image"] = {"x": [1, 2.5, None, True]}
e["vocab"] = [dict(v) for v in d["vocab"]]
last = e["vocab"][-1]
e["vocab"][-1] = {"token_str": last["token_str"], "token_bytes": last["token_bytes"], "rank": last["rank"]}
json.dump(e, open(out + "/tkr.json", "w"), indent=3)  # the whole tree's way (keys reordered)
e = {"config": d["config"], "x": "\u00e9\n", "vocab": d["vocab"]}
json.dump(e, open(out + "/tko.json", "w"), ensure_ascii=True)  # another member, escapes: still one pass
for name, f in (("tkpb", out + "/tkp.json"), ("tkrb", out + "/tkr.json")):
    x = json.load(open(f))
    x["config"]["default_vocab_size"] = 10**6
    json.dump(x, open(out + "/" + name + ".json", "w"), indent=3)
    x["config"]["default_vocab_size"] = 7000
    x["vocab"][7]["token_bytes"] = "AQ="
    json.dump(x, open(out + "/" + name + "2.json", "w"), indent=3)
d = json.load(open(sys.argv[1].replace("small", "specials")))  # special_tokens after the vocab
json.dump(d, open(out + "/tks.json", "w"), indent=2)
d["special_tokens"][5]["rank"] = 6
json.dump(d, open(out + "/tkpb3.json", "w"), indent=2)
v = d["vocab"][3]
d["vocab"][3] = {"token_str": v["token_str"], "rank": v["rank"], "token_bytes": v["token_bytes"]}
json.dump(d, open(out + "/tkrb3.json", "w"), indent=2)
PY
"$SLUICE" tokenize bpe -t "$T/tks.json" "$T/docs.jsonl" -o "$T/tks.tok"
"$SLUICE" cat "$T/tks.tok" | cmp -s - <("$SLUICE" cat "$T/tekken-specials.tok") ||
  fail "tks.json: ids differ from tekken-specials.json's"
for f in tkp tkr tko; do
  "$SLUICE" tokenize bpe -t "$T/$f.json" "$T/docs.jsonl" -o "$T/$f.tok"
  "$SLUICE" cat "$T/$f.tok" | cmp -s - <("$SLUICE" cat "$T/tekken-small.tok") ||
    fail "$f.json: ids differ from tekken-small.json's"
done
for k in "" 2 3; do
  expect_fail 1 "" -- "$SLUICE" tokenize bpe -t "$T/tkpb$k.json" "$T/one.jsonl" -o "$T/z.tok"
  sed 's/tkpb/X/' "$T/err" > "$T/err.p"
  expect_fail 1 "" -- "$SLUICE" tokenize bpe -t "$T/tkrb$k.json" "$T/one.jsonl" -o "$T/z.tok"
  sed 's/tkrb/X/' "$T/err" > "$T/err.r"
  cmp -s "$T/err.p" "$T/err.r" || fail "messages differ: $(cat "$T/err.p") / $(cat "$T/err.r")"
  grep -Eq "X$k.json:[0-9]+: (config.default_vocab_size|vocab\[7\].token_bytes|special_tokens\[5\])" "$T/err.p" ||
    fail "message: $(cat "$T/err.p")"
done

# OpenAI's r50k_base.tiktoken, made from GPT-2's vocab.json + merges.txt the
# way tiktoken's data_gym_to_mergeable_bpe_ranks does: its sha256 is the one
# tiktoken pins, so no --pattern is needed (gpt2, <|endoftext|>=50256) and
# the ids are GPT-2's (expected-gpt2.jsonl: HF's, cross-checked with tiktoken)
B="$DATA/bpe"
python3 - "$B/gpt2/vocab.json" "$B/gpt2/merges.txt" "$T/r50k_base.tiktoken" <<'PY'
import base64, json, sys
enc = json.load(open(sys.argv[1], encoding='utf-8'))
merges = open(sys.argv[2], encoding='utf-8').read().split("\n")[1:-1]
order = [b for b in range(256) if chr(b).isprintable() and chr(b) != " "]
dg = {chr(b): b for b in order}
n = 0
for b in range(256):
    if b not in order:
        order.append(b)
        dg[chr(256 + n)] = b
        n += 1
ranks = {bytes([b]): i for i, b in enumerate(order)}
for m in merges:
    a, b = m.split()
    ranks[bytes(dg[c] for c in a) + bytes(dg[c] for c in b)] = len(ranks)
assert all(ranks[bytes(dg[c] for c in k)] == v for k, v in enc.items() if k != "<|endoftext|>")
with open(sys.argv[3], "wb") as f:
    for tok, r in sorted(ranks.items(), key=lambda x: x[1]):
        f.write(base64.b64encode(tok) + b" " + str(r).encode() + b"\n")
PY
[ "$(sha256sum "$T/r50k_base.tiktoken" | cut -d' ' -f1)" = 306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930 ] ||
  fail "the rebuilt r50k_base.tiktoken is not OpenAI's file"
"$SLUICE" tokenize bpe -t "$T/r50k_base.tiktoken" --special parse "$B/corpus.jsonl" -o "$T/r50k.tok"
"$SLUICE" cat "$T/r50k.tok" > "$T/r50k.jsonl"
python3 - "$B/expected-gpt2.jsonl" "$T/r50k.jsonl" <<'PY' || fail "r50k_base ids differ from GPT-2's"
import json, sys
want = [json.loads(l)['parse'] for l in open(sys.argv[1], encoding='utf-8')]
got = [json.loads(l)['ids'] for l in open(sys.argv[2], encoding='utf-8')]
bad = [i for i, (w, g) in enumerate(zip(want, got)) if w != g]
assert len(got) == len(want) > 180 and not bad, bad[:10]
PY
"$SLUICE" cat --header "$T/r50k.tok" | grep -q '"vocab_size":50257,.*"eos":50256' || fail "r50k header"
roundtrip_corpus() { "$SLUICE" detokenize -t "$T/r50k_base.tiktoken" "$T/r50k.tok" | python3 -c "
import json, sys
want = [json.loads(l)['text'] for l in open(sys.argv[1], encoding='utf-8')]
got = [json.loads(l)['text'] for l in sys.stdin]
assert got == want" "$B/corpus.jsonl" || fail "r50k decode"; }
roundtrip_corpus

# the rank-file options are refused for other tokenizers, not ignored
expect_fail 2 "--pattern and --special NAME=ID are for tiktoken rank files" -- \
  "$SLUICE" tokenize bpe -t "$B/gpt2" --pattern o200k "$T/one.jsonl" -o "$T/z.tok"
no_file "$T/z.tok"

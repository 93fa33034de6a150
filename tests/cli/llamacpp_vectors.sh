# sluice tokenize bpe on llama.cpp's tokenizer test vectors: the 46 cases of
# ggml-vocab.inp, whose ids (NAME.out) HF tokenizers made from the original
# models' tokenizers, with tokenizer.json files rebuilt from llama.cpp's GGUF
# vocabularies (tests/data/llamacpp/make_tokenizers.py, which first checks
# each file with HF against the same vectors: 46/46 for every one here).
# - families sluice runs (Phi-3 = Llama-2's SentencePiece BPE; Qwen2's Split +
#   ByteLevel; StarCoder2's and Refact's Digits + ByteLevel; Falcon's
#   Punctuation, ByteLevel, Digits, Split; DeepSeek's several Split steps):
#   ids equal for every case and thread count, and detokenize
#   gives each text back (as HF's decode does, checked by the script);
#   DeepSeek's several Split steps run through the general pre-tokenizer, as
#   do the pipelines above given as a nested Sequence (on the random strings).
. "$SRC/tests/cli/lib.sh"
D="$DATA/llamacpp"

python3 - "$D/ggml-vocab.inp" > "$T/docs.jsonl" <<'PY'
import json, sys
SEP = "\n__ggml_vocab_test__\n"  # every case, the last too, is followed by it
texts = open(sys.argv[1], encoding="utf-8").read().split(SEP)
assert texts[-1] == "" and len(texts) == 47, len(texts)
for i, t in enumerate(texts[:-1]):
    print(json.dumps({"id": "case%d" % i, "text": t}))
PY

ids() { # NAME [DECODES]: sluice's ids are NAME.out's, decoding gives the texts back (or, for
  # the cases in the JSON object DECODES, what HF's decode gives)
  zstd -q -d "$D/$1.json.zst" -o "$T/$1.json"
  "$SLUICE" tokenize bpe -q -t "$T/$1.json" "$T/docs.jsonl" -o "$T/$1.tok"
  "$SLUICE" tokenize bpe -q -t "$T/$1.json" -@ 3 "$T/docs.jsonl" | cmp - "$T/$1.tok" || fail "$1: output depends on the thread count"
  "$SLUICE" cat "$T/$1.tok" > "$T/$1.jsonl"
  python3 - "$T/$1.jsonl" "$D/$1.out" <<'PY' || fail "$1: ids differ from llama.cpp's vectors"
import json, sys
got = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
want = [[int(x) for x in l.split()] for l in open(sys.argv[2], encoding="utf-8").read().split("\n")[:-1]]
assert len(got) == len(want) == 46, (len(got), len(want))
bad = [(g["id"], g["ids"], w) for i, (g, w) in enumerate(zip(got, want)) if g["ids"] != w or g["id"] != "case%d" % i]
assert not bad, bad[:3]
PY
  "$SLUICE" detokenize -t "$T/$1.json" "$T/$1.tok" > "$T/$1.dec.jsonl"
  python3 - "$T/$1.dec.jsonl" "$T/docs.jsonl" "${2:-{\}}" <<'PY' || fail "$1: detokenize does not give the texts back"
import json, sys
got = [json.loads(l)["text"] for l in open(sys.argv[1], encoding="utf-8")]
want = [json.loads(l)["text"] for l in open(sys.argv[2], encoding="utf-8")]
for k, v in json.loads(sys.argv[3]).items():
    want[int(k)] = v
bad = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
assert len(got) == len(want) == 46 and not bad, bad
PY
}

refused() { # NAME MESSAGE: loading NAME's tokenizer.json fails with MESSAGE
  zstd -q -d "$D/$1.json.zst" -o "$T/$1.json"
  expect_fail 1 "$1.json: $2" -- "$SLUICE" tokenize bpe -t "$T/$1.json" "$T/docs.jsonl" -o "$T/$1.tok"
  no_file "$T/$1.tok"
}

ids phi-3 # = llama-spm (Llama-2): the same vocabulary, merges and .out
ids qwen2 # = deepseek-r1-qwen: the same .out
ids starcoder # Digits(individual_digits) + ByteLevel
ids refact
ids falcon # Punctuation, ByteLevel, Digits, Split [0-9]{3}

# random strings: HF's ids for the scanner and for PCRE2 (which lacks Unicode
# 17: those strings are left to the scanner; Falcon has no PCRE2 form and is
# scanned under either setting)
random_ids() { # TOKENIZER STRINGS
  for pre in scan pcre2; do
    python3 - "$2" "$pre" > "$T/rnd.jsonl" <<'PY'
import json, sys
for i, l in enumerate(open(sys.argv[1], encoding="utf-8")):
    o = json.loads(l)
    if sys.argv[2] == "scan" or o["pcre2"]:
        print(json.dumps({"id": "r%d" % i, "text": o["text"]}))
PY
    "$SLUICE" tokenize bpe -q -t "$1" --pretokenizer "$pre" "$T/rnd.jsonl" | "$SLUICE" cat > "$T/rnd.out"
    python3 - "$2" "$T/rnd.out" "$pre" <<'PY' || fail "$(basename "$2"): ids differ from HF (--pretokenizer $pre)"
import json, sys
want = {"r%d" % i: json.loads(l) for i, l in enumerate(open(sys.argv[1], encoding="utf-8"))}
got = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
assert len(got) == (2500 if sys.argv[3] == "scan" else sum(w["pcre2"] for w in want.values())) > 1900, len(got)
bad = [(g["id"], want[g["id"]]["text"]) for g in got if g["ids"] != want[g["id"]]["ids"]]
assert not bad, bad[:3]
PY
  done
}
# StarCoder2's vocabulary on 2500 strings of numbers of every kind (two of
# Unicode 17), whitespace around them, contractions
random_ids "$T/starcoder.json" "$D/starcoder-random.jsonl"
# the real vocabularies were trained with their pipelines, so a wrong split
# can give the same ids; these two 1000-token BPEs were trained without any
# split and then given the pipeline, so every split shows in their ids
random_ids "$D/starcoder-tiny.json" "$D/starcoder-tiny-random.jsonl"
random_ids "$D/falcon-tiny.json" "$D/falcon-tiny-random.jsonl"

# Other settings of these pipelines are none of the fast forms: the general
# pre-tokenizer runs them (tok_bpe_pipeline.sh checks it against HF). The
# same pipelines given as a nested Sequence also take the general path: its
# ids must be HF's on the random strings too (all of them: its ByteLevel
# split is the scanner, whatever --pretokenizer says)
nested() { # TOKENIZER OUT: the pre_tokenizer wrapped in one more Sequence
  python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
d["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [d["pre_tokenizer"]]}
json.dump(d, open(sys.argv[2], "w", encoding="utf-8"), ensure_ascii=False)
PY
}
nested "$D/starcoder-tiny.json" "$T/starcoder-tiny-nested.json"
random_ids "$T/starcoder-tiny-nested.json" "$D/starcoder-tiny-random.jsonl"
nested "$D/falcon-tiny.json" "$T/falcon-tiny-nested.json"
random_ids "$T/falcon-tiny-nested.json" "$D/falcon-tiny-random.jsonl"
for v in 's/"individual_digits":true/"individual_digits":false/' \
         's/"ByteLevel","add_prefix_space":false/"ByteLevel","add_prefix_space":true/'; do
  sed "$v" "$T/starcoder.json" > "$T/d2.json"
  cmp -s "$T/d2.json" "$T/starcoder.json" && fail "$v changed nothing"
  "$SLUICE" tokenize bpe -q -t "$T/d2.json" "$T/docs.jsonl" -o "$T/d2.tok"
  [ "$("$SLUICE" cat "$T/d2.tok" | wc -l)" -eq 46 ] || fail "$v: not 46 documents"
done
for v in 's/"Contiguous"/"Isolated"/' 's/\[0-9\]\[0-9\]\[0-9\]/[0-9][0-9]/'; do
  sed "$v" "$T/falcon.json" > "$T/f2.json"
  cmp -s "$T/f2.json" "$T/falcon.json" && fail "$v changed nothing"
  "$SLUICE" tokenize bpe -q -t "$T/f2.json" "$T/docs.jsonl" -o "$T/f2.tok"
  [ "$("$SLUICE" cat "$T/f2.tok" | wc -l)" -eq 46 ] || fail "$v: not 46 documents"
done

# several Split steps (DeepSeek): the general pre-tokenizer
# (their vocabularies rebuilt from the GGUF have a token "ü", which HF's ids of
# "Führer" use: F, ü, h, rer; in the byte-level alphabet "ü" stands for the lone
# byte 0xFC, so HF's decode gives "F\ufffdhrer", checked with tokenizers 0.23.3)
ids deepseek-coder '{"1": "F\ufffdhrer"}' # Split x4, Digits, ByteLevel
ids deepseek-llm '{"1": "F\ufffdhrer"}'   # Split x5, Digits, ByteLevel

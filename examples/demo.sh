#!/usr/bin/env bash
# The sluice demo: real text, DNA and audio through the whole path.
# Run by `make demo`; writes everything under $DEMO_OUT (default ./demo-out).
set -euo pipefail
cd "$(dirname "$0")/.."
S=${SLUICE:-./build/sluice}
OUT=${DEMO_OUT:-demo-out}
rm -rf "$OUT" && mkdir -p "$OUT"
step() { printf '\n== %s\n' "$*"; }

step "text: a tar.gz of 8 license texts -> sluice read -> JSON Lines documents"
tar -czf "$OUT/licenses.tar.gz" -C examples/data/text .
"$S" read "$OUT/licenses.tar.gz" -o "$OUT/text.jsonl"
echo "$(wc -l < "$OUT/text.jsonl") documents"

step "text: GPT-NeoX-20B BPE (the Mamba/Pythia tokenizer) -> token stream"
"$S" tokenize bpe --tokenizer tests/data/bpe/neox-tokenizer.json --append-eos "$OUT/text.jsonl" -o "$OUT/text.tok"
"$S" stats "$OUT/text.tok" | head -n 8

step "text: decode back and compare with the input"
"$S" detokenize --tokenizer tests/data/bpe/neox-tokenizer.json "$OUT/text.tok" -o "$OUT/text.decoded.jsonl"
python3 - "$OUT/text.jsonl" "$OUT/text.decoded.jsonl" <<'PY'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
same = sum(x["text"] + "<|endoftext|>" == y["text"] for x, y in zip(a, b))
print(f"{same} of {len(a)} documents decode to their input text (+ the appended <|endoftext|>)")
sys.exit(0 if same == len(a) == len(b) else 1)
PY

step "text: shards with sequence-length warmup 128 -> 512, and a Megatron dataset"
"$S" shard "$OUT/text.tok" --seq-len 512 --warmup double:128..512 --val-fraction 0.1 -o "$OUT/shards-text"
"$S" stats "$OUT/shards-text" | head -n 12
"$S" export megatron "$OUT/text.tok" -o "$OUT/megatron-text"
ls -l "$OUT"/megatron-text.*

step "text: one <|endoftext|> (id 0) per document: --append-eos put it there and the stream's header says so, so shard and export add no second one"
PYN=python3; /usr/bin/python3 -c 'import numpy' 2>/dev/null && PYN=/usr/bin/python3   # the check needs numpy
"$PYN" tests/shard/one_eos.py 0 "$OUT/shards-text" "$OUT/megatron-text"

step "text: length-aware mix (Fu et al. 2024): copyleft vs permissive licenses 50:50, long ones up-sampled 2x"
python3 - "$OUT/text.jsonl" "$OUT" <<'PY'
import json, sys
with open(sys.argv[2] + "/copyleft.jsonl", "w") as c, open(sys.argv[2] + "/permissive.jsonl", "w") as p:
    for line in open(sys.argv[1]):
        (c if any(k in json.loads(line)["id"] for k in ("GPL", "GFDL", "MPL")) else p).write(line)
PY
for s in copyleft permissive; do
  "$S" tokenize bpe --tokenizer tests/data/bpe/neox-tokenizer.json --append-eos "$OUT/$s.jsonl" -o "$OUT/$s.tok"
done
"$S" mix --source copyleft="$OUT/copyleft.tok":0.5 --source permissive="$OUT/permissive.tok":0.5 --tokens 20000 \
  --upsample-long 2000:2 --seed 1 --report "$OUT/mix.json" --plot "$OUT/mix.svg" -q -o "$OUT/mixed.tok"
python3 -c '
import json, sys
for s in json.load(open(sys.argv[1]))["sources"]:
    print("report: %-10s %5d input tokens -> %5d (%.1f%%), effective epochs %.2f" % (
        s["name"], s["tokens_in"], s["tokens"], 100 * s["share"],
        s["effective_epochs"]))' "$OUT/mix.json"

step "text: RMT segments (recurrent layout, 8 read + 8 write memory slots per row), read back in Python"
"$S" shard "$OUT/text.tok" --seq-len 256 --layout recurrent --batch 4 --memory-tokens 8 --memory-id 50276 \
  --memory-write -o "$OUT/shards-rmt"
"$S" stats "$OUT/shards-rmt" | python3 -c '
import json, sys
t = json.load(sys.stdin)["splits"]["train"]
print("rows %d: memory %d, padding %d tokens (overhead %.1f%%)" % (t["rows"], t["memory_tokens"], t["pad_tokens"],
      100 * t["overhead_fraction"]))'
PY=python3; /usr/bin/python3 -c 'import numpy' 2>/dev/null && PY=/usr/bin/python3   # the reader needs numpy
PYTHONPATH=python "$PY" - "$OUT/shards-rmt" <<'PY'
import sys
from sluice_data import ShardIterable
it = ShardIterable(sys.argv[1])
b = next(iter(it))
m = b["memory_mask"]
print("step 0: tokens %s, memory positions per row %s, first row starts %s" % (
    tuple(b["tokens"].shape), m.sum(axis=1).tolist(), b["tokens"][0, :10].tolist()))
PY

step "web: a FineWeb-shaped Parquet sample -> Gopher/C4/FineWeb rules -> language ID -> English -> MinHash dedup"
"$S" read examples/data/web/sample.parquet \
  | "$S" filter --rules gopher-quality,gopher-repetition,c4,fineweb --rejected "$OUT/web.rejected.jsonl" -q \
  | "$S" classify --model tests/data/classify/lid.176.ftz -q \
  | "$S" filter --field lang --in en -q \
  | "$S" dedup minhash --removed "$OUT/web.duplicates.jsonl" --summary "$OUT/web.dedup.json" -q -o "$OUT/web.jsonl"
python3 - "$OUT" <<'PY'
import collections, json, sys
out = sys.argv[1]
rej = collections.Counter(json.loads(l)["reason"] for l in open(out + "/web.rejected.jsonl"))
print("rules dropped %d documents; most often: %s" % (sum(rej.values()), ", ".join(f"{r} {n}" for r, n in rej.most_common(4))))
dup = [json.loads(l) for l in open(out + "/web.duplicates.jsonl")]
web = [json.loads(l) for l in open(out + "/web.jsonl")]
print("dedup removed %d near-duplicates; %d English documents kept, e.g. lang %s (p %.2f): %r" % (
    len(dup), len(web), web[0]["lang"], web[0]["lang_score"], web[0]["text"][:60]))
PY

step "web: GPT-NeoX tokens -> scored by a tiny random Mamba with the NeoX vocabulary -> middle 80% -> shards"
mkdir -p "$OUT/tiny-mamba-neox"
PYN=python3; /usr/bin/python3 -c 'import numpy' 2>/dev/null && PYN=/usr/bin/python3   # it needs numpy
"$PYN" examples/tiny_mamba.py tests/data/model/ssm_f32 "$OUT/tiny-mamba-neox"
"$S" tokenize text --tokenizer tests/data/bpe/neox-tokenizer.json --append-eos "$OUT/web.jsonl" -q \
  | "$S" score -m "$OUT/tiny-mamba-neox" --to-stream -q \
  | "$S" filter --keep-pct 10:90 -q \
  | "$S" shard --seq-len 2048 -o "$OUT/shards-web"
"$S" stats "$OUT/shards-web" | python3 -c '
import json, sys
t = json.load(sys.stdin)["splits"]["train"]
print("shards-web: %d documents in %d rows of 2048, %d tokens" % (t["documents"], t["rows"], t["document_tokens"]))'

step "DNA: lambda phage FASTA -> HyenaDNA character tokens in 4 kb windows -> shards"
"$S" tokenize dna tests/data/dna/lambda_virus.fa --window 4096 --stride 4096 -o "$OUT/dna.tok"
"$S" shard "$OUT/dna.tok" --seq-len 4096 --warmup double:1024..4096 -o "$OUT/shards-dna"
"$S" stats "$OUT/shards-dna" | head -n 8

step "DNA: species classification (lambda phage = label 0, C. elegans = label 1) -> shards; labels read back"
"$S" dna species tests/data/dna/lambda_virus.fa tests/data/dna/htslib_ce.fa --window 1024 --samples 64 --seed 1 \
  -o "$OUT/species.tok"
"$S" shard "$OUT/species.tok" --seq-len 2048 --shuffle --seed 1 --val-fraction 0.2 -o "$OUT/shards-species"
head -n 2 "$OUT/shards-species/documents.jsonl"
"$S" cat "$OUT/shards-species" | python3 -c '
import collections, json, sys
seen, labels = set(), collections.Counter()
for line in sys.stdin:  # one line per document piece; "meta" is the document metadata
    p = json.loads(line)
    if p["doc"] in seen:
        continue
    seen.add(p["doc"])
    labels[(p["split"], p["meta"]["label"], p["meta"]["species"])] += 1
    if len(seen) <= 4:
        row, doc, split, label, name = p["row"], p["doc"], p["split"], p["meta"]["label"], p["id"]
        print(f"row {row:2}  doc {doc:2}  {split:5}  label {label}  {name}")
for (split, label, species), n in sorted(labels.items()):
    print(f"{split:5} label {label} ({species}): {n} documents")
'

step "model: score the DNA windows with a tiny Mamba checkpoint (random weights) and keep the middle"
"$S" score -m tests/data/model/ssm_f32 "$OUT/dna.tok" --force -o "$OUT/dna.scores.jsonl"
head -n 3 "$OUT/dna.scores.jsonl"
"$S" score -m tests/data/model/ssm_f32 "$OUT/dna.tok" --force --to-stream \
  | "$S" filter --keep-pct 10:90 --summary "$OUT/filter-summary.json" -o "$OUT/dna.kept.tok"
"$S" stats "$OUT/dna.kept.tok" | head -n 4

step "model: the loss by token position (log2 bins; docs/longctx.md section 3), as JSON, SVG and a table"
"$S" score -m tests/data/model/ssm_f32 "$OUT/dna.tok" --force --position-curve "$OUT/dna.curve.json" \
  --plot "$OUT/dna.curve.svg" -o /dev/null 2> "$OUT/dna.curve.txt"
head -n 8 "$OUT/dna.curve.txt"

step "audio: SC09-like spoken digits -> SaShiMi 8-bit mu-law, 1 s clips -> shards, and back to WAV"
"$S" tokenize audio tests/data/audio/sc09_like_espeak --pad-to 16000 -o "$OUT/audio.tok"
"$S" shard "$OUT/audio.tok" --seq-len 16000 --no-eos -o "$OUT/shards-audio"
"$S" detokenize audio "$OUT/audio.tok" -o "$OUT/audio-decoded"
ls "$OUT/audio-decoded" | head -n 3

step "done: outputs are in $(cd "$OUT" && pwd)/"
ls "$OUT"

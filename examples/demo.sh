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

step "audio: SC09-like spoken digits -> SaShiMi 8-bit mu-law, 1 s clips -> shards, and back to WAV"
"$S" tokenize audio tests/data/audio/sc09_like_espeak --pad-to 16000 -o "$OUT/audio.tok"
"$S" shard "$OUT/audio.tok" --seq-len 16000 --no-eos -o "$OUT/shards-audio"
"$S" detokenize audio "$OUT/audio.tok" -o "$OUT/audio-decoded"
ls "$OUT/audio-decoded" | head -n 3

step "done: outputs are in $(cd "$OUT" && pwd)/"
ls "$OUT"

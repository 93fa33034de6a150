# README.md as typed: every ```sh block of the README runs, in
# order, in one directory, with `sluice` on PATH. The files the README names
# are made here from the repository's test and demo data under the same
# names, so the commands are not edited:
#   corpus/*.jsonl.zst, corpus.tar.zst, part-*.jsonl.gz  the demo's license texts
#   gpt-neox-20b/tokenizer.json   tests/data/bpe/neox-tokenizer.json (the real one)
#   mamba-130m/                   a tiny Mamba-1 (random weights) with mamba-130m's
#                                 padded GPT-NeoX vocabulary (50280) and config keys
#   hg38.ml.fa, human-sequences.bed   a 3-chromosome random genome, HyenaDNA BED
#   youtube_mix/, sc09/           tests/data/audio files (16 kHz WAV)
# Blocks that only run make (the set-up block) are skipped: the test suite is
# itself run by make. Each block must exit 0; afterwards the outputs the
# README promises exist and are read back.
. "$SRC/tests/cli/lib.sh"
W=$T/work
mkdir -p "$W/bin" "$W/corpus" "$W/gpt-neox-20b" "$W/mamba-130m" "$W/youtube_mix" "$W/sc09"
ln -s "$SLUICE" "$W/bin/sluice"
cd "$W"
PY=/usr/bin/python3
# text: one JSON Lines file per license, compressed as the README names them
# (their first 1500 bytes: scoring with a 50280-token head is the slow part)
n=0
mkdir texts
for f in "$SRC"/examples/data/text/*.txt; do
  n=$((n + 1))
  head -c 1500 "$f" >"texts/$(basename "$f")"
  $PY -c 'import json,sys; print(json.dumps({"id": sys.argv[2], "text": open(sys.argv[1]).read(), "source": "licenses"}))' "texts/$(basename "$f")" "$(basename "$f")" >"doc$n.jsonl"
  zstd -q "doc$n.jsonl" -o "corpus/part-$n.jsonl.zst"
  gzip -c "doc$n.jsonl" >"part-$n.jsonl.gz"
done
tar -cf - -C texts . | zstd -q -o corpus.tar.zst
cp "$SRC/tests/data/bpe/neox-tokenizer.json" gpt-neox-20b/tokenizer.json
# a tiny model with the GPT-NeoX vocabulary (examples/tiny_mamba.py: ssm_f32's
# tensors, the embedding and head (tied) widened to 50280 rows of random values)
$PY "$SRC/examples/tiny_mamba.py" "$SRC/tests/data/model/ssm_f32" mamba-130m
# web text: the demo's FineWeb-shaped Parquet sample, lid.176.ftz from tests/data/classify
mkdir -p fineweb/data
cp "$SRC/examples/data/web/sample.parquet" fineweb/data/train-00000-of-00001.parquet
cp "$SRC/tests/data/classify/lid.176.ftz" lid.176.ftz
# DNA: chromosomes of 100 kb, the BED in HyenaDNA's (chrom, start, end, split)
$PY - <<'PY'
import random
r = random.Random(5)
with open("hg38.ml.fa", "w") as f, open("human-sequences.bed", "w") as b:
    for c in ("chr1", "chr2", "chr3"):
        s = "".join(r.choice("ACGTN" if i % 9000 < 50 else "ACGT") for i in range(100_000))
        f.write(f">{c}\n" + "".join(s[i:i + 60] + "\n" for i in range(0, len(s), 60)))
        for k in range(6):
            st = r.randrange(0, 60_000)
            b.write(f"{c}\t{st}\t{st + 32768}\t{['train', 'train', 'train', 'valid', 'test', 'train'][k]}\n")
PY
for i in $(seq 1 12); do ln -s "$SRC/tests/data/audio/synthetic_pluck_melody_16k.wav" "youtube_mix/mix$i.wav"; done
cp "$SRC"/tests/data/audio/sc09_like_espeak/*.wav sc09/

# the blocks, in order
$PY - "$SRC/README.md" "$T/blocks" <<'PY'
import os, re, sys
text = open(sys.argv[1]).read()
blocks = re.findall(r"^```sh\n(.*?)^```", text, flags=re.S | re.M)
os.makedirs(sys.argv[2])
k = 0
for b in blocks:
    cmds = [l for l in b.splitlines() if l.strip() and not l.lstrip().startswith("#")]
    if all(l.lstrip().startswith("make ") for l in cmds):
        continue
    k += 1
    open(os.path.join(sys.argv[2], f"{k:02d}.sh"), "w").write(b)
print(k)
PY
nb=$(ls "$T/blocks" | wc -l)
[ "$nb" -ge 6 ] || fail "expected at least 6 runnable sh blocks in README.md, found $nb"
for b in "$T"/blocks/*.sh; do
  PATH="$W/bin:$PATH" bash -e "$b" >"$T/block.out" 2>"$T/block.err" \
    || fail "README block $(basename "$b") failed: $(tail -n 3 "$T/block.err")
$(cat "$b")"
  ! grep -q 'Sanitizer\|Segmentation' "$T/block.err" || fail "crash in README block $(basename "$b")"
done
# what the README says the blocks make
for d in shards shards/text shards/hg38-train; do [ -f "$d/manifest.json" ] || fail "$d/manifest.json missing"; done
[ -s megatron/corpus.bin ] && [ -s megatron/corpus.idx ] || fail "megatron/corpus.{bin,idx} missing"
# one <|endoftext|> (0) per document, not two: tokenize --append-eos, then shard / export
$PY "$SRC/tests/shard/one_eos.py" 0 shards/text megatron/corpus >"$T/eos.out" || fail "README text pipeline: $(cat "$T/eos.out")"
# the web pipeline: rules, language ID, dedup wrote their reports; every kept document is English
[ -s rejected.jsonl ] && [ -f duplicates.jsonl ] && [ -s web.jsonl ] || fail "web pipeline outputs missing"
$PY -c 'import json, sys
docs = [json.loads(l) for l in open("web.jsonl")]
assert docs and all(d["lang"] == "en" for d in docs), "web.jsonl: not all English"
rej = [json.loads(l) for l in open("rejected.jsonl")]
assert all(r["rule"] in ("gopher-quality", "gopher-repetition", "c4", "fineweb") for r in rej), rej[:3]' \
  || fail "web pipeline outputs"
[ -f shards/web/manifest.json ] || fail "shards/web/manifest.json missing"
[ -s ytmix-train.tok ] && [ -s sc09.tok ] && [ -d listen ] || fail "audio outputs missing"
[ "$(ls listen | grep -c '\.wav$')" = "$(ls sc09 | wc -l)" ] || fail "detokenize audio: $(ls listen)"
[ "$(wc -l <scores.jsonl)" = "$(sluice_docs=$("$SLUICE" stats corpus.tok | $PY -c 'import json,sys; print(json.load(sys.stdin)["documents"])'); echo "$sluice_docs")" ] \
  || fail "scores.jsonl: one line per document of corpus.tok"
$PY -c 'import json, sys; c = json.load(open("curve.json")); n = [g["name"] for g in c["groups"]]
assert c["group_by"] == "source" and n == ["all", "licenses"], n' || fail "curve.json: groups all and licenses"
grep -q '<polyline' curve.svg || fail "curve.svg has no curve"
echo "README: $nb blocks ran as typed"

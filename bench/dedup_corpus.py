#!/usr/bin/env python3
"""A synthetic JSON Lines corpus for bench/dedup.sh: documents of 100 to 3,000
words (lognormal, median ~450) drawn as a seeded random walk over the words of
the real English texts in examples/data/text (punctuation and line breaks as
they come), with near-duplicates planted: 8% of the documents copy an earlier
one with 0-15% of its words replaced, 2% copy one exactly.

  dedup_corpus.py OUT.jsonl MB [SEED]
"""
import json
import math
import os
import random
import sys

out, mb = sys.argv[1], float(sys.argv[2])
seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
here = os.path.dirname(os.path.abspath(__file__))
tdir = os.path.join(here, "..", "examples", "data", "text")
words = []
for name in sorted(os.listdir(tdir)):
    words += open(os.path.join(tdir, name), encoding="utf-8").read().split()
rng = random.Random(seed)
target = int(mb * 1e6)
size, docs, recent = 0, 0, []
with open(out, "w", encoding="utf-8") as f:
    while size < target:
        r = rng.random()
        if recent and r < 0.10:
            base = rng.choice(recent).split(" ")
            if r < 0.08:
                for _ in range(int(len(base) * rng.uniform(0, 0.15))):
                    base[rng.randrange(len(base))] = rng.choice(words)
            text = " ".join(base)
        else:
            n = min(3000, max(100, int(math.exp(rng.gauss(math.log(450), 0.7)))))
            at = rng.randrange(len(words))
            out_w = []
            for _ in range(n):  # a random walk: runs of the source text with jumps
                if rng.random() < 0.1:
                    at = rng.randrange(len(words))
                out_w.append(words[at % len(words)])
                at += 1
            text = " ".join(out_w)
        recent.append(text)
        if len(recent) > 2000:
            recent.pop(rng.randrange(len(recent)))
        line = json.dumps({"id": f"b{seed}-{docs}", "text": text}, ensure_ascii=False) + "\n"
        f.write(line)
        size += len(line.encode("utf-8"))
        docs += 1
print(f"corpus: {out}: {size / 1e6:.1f} MB, {docs} documents", file=sys.stderr)

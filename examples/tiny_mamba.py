#!/usr/bin/env python3
"""A tiny Mamba-1 checkpoint with the GPT-NeoX vocabulary, for demos and tests
that score GPT-NeoX tokens without a real model: the tensors of SRC (a small
checkpoint, e.g. tests/data/model/ssm_f32) with the embedding and the tied head
widened to 50280 rows of random values (seeded), written as DST/config.json
(vocab_size 50277, padded to 50280 as mamba-130m) and DST/model.safetensors.
Its scores mean nothing; the pipeline around them is real.

usage: tiny_mamba.py SRC DST   (needs numpy; DST must exist)
"""
import json, struct, sys
import numpy as np
src, dst = sys.argv[1], sys.argv[2]
cfg = json.load(open(f"{src}/config.json"))
cfg["vocab_size"] = 50277
json.dump(cfg, open(f"{dst}/config.json", "w"))
raw = open(f"{src}/model.safetensors", "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
hdr = json.loads(raw[8:8 + n])
body = raw[8 + n:]
out_h, chunks, off = {"__metadata__": {"format": "pt"}}, [], 0
rng = np.random.default_rng(3)
emb = None
for k, v in hdr.items():
    if k == "__metadata__":
        continue
    a = np.frombuffer(body[v["data_offsets"][0]:v["data_offsets"][1]], dtype="<f4").reshape(v["shape"])
    if k in ("backbone.embedding.weight", "lm_head.weight"):  # tied: the same rows
        if emb is None:
            emb = (rng.standard_normal((50280, a.shape[1])) * 0.02).astype("<f4")
        a = emb
    b = a.astype("<f4").tobytes()
    out_h[k] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
    chunks.append(b)
    off += len(b)
h = json.dumps(out_h).encode()
h += b" " * (-len(h) % 8)
with open(f"{dst}/model.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + b"".join(chunks))

#!/usr/bin/env python3
"""Whisper's multilingual.tiktoken and tiktoken's ids for it.

Source: the sdist of `openai-whisper` 20250625 (PyPI, MIT), whisper/assets/
multilingual.tiktoken (sha256 b34b360d…), whose line 50257 is "= 50256": a
token that tiktoken (base64.b64decode) reads as the empty byte string.
Writes, beside this script:
  multilingual.tiktoken.xz  the file, xz-compressed
  whisper-expected.jsonl    per text (the first 400 of texts.jsonl): "ids",
                            tiktoken 0.14.0's encode_ordinary under Whisper's
                            pattern (whisper/tokenizer.py, the gpt2 split);
                            then 50 records {"ids", "hex"}: seeded random id
                            lists with rank 50256 among them and the hex of
                            tiktoken's decode_bytes
Run (a venv with tiktoken==0.14.0):
  pip download --no-deps openai-whisper==20250625   # the sdist
  tar xzf openai_whisper-20250625.tar.gz
  python tests/data/tiktoken/make_whisper.py openai_whisper-20250625/whisper/assets/multilingual.tiktoken"""
import json
import lzma
import os
import random
import sys

import tiktoken
from tiktoken.load import load_tiktoken_bpe

HERE = os.path.dirname(os.path.abspath(__file__))
PAT = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def main():
    path = sys.argv[1]
    data = open(path, "rb").read()
    ranks = load_tiktoken_bpe(path)
    assert ranks[b""] == 50256 and len(ranks) == 50257
    enc = tiktoken.Encoding("whisper-multilingual", pat_str=PAT, mergeable_ranks=ranks,
                            special_tokens={"<|endoftext|>": 50257})
    with open(os.path.join(HERE, "multilingual.tiktoken.xz"), "wb") as f:
        f.write(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME))
    texts = [json.loads(l)["text"] for l in open(os.path.join(HERE, "texts.jsonl"), encoding="utf-8")][:400]
    rng = random.Random(50256)
    with open(os.path.join(HERE, "whisper-expected.jsonl"), "w", encoding="utf-8") as f:
        for t in texts:
            f.write(json.dumps({"ids": enc.encode_ordinary(t)}) + "\n")
        for _ in range(50):
            ids = [rng.choice([50256, rng.randrange(50256)]) for _ in range(rng.randrange(1, 30))]
            f.write(json.dumps({"ids": ids, "hex": enc.decode_bytes(ids).hex()}) + "\n")
    print("wrote multilingual.tiktoken.xz, whisper-expected.jsonl")


if __name__ == "__main__":
    main()

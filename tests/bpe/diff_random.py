#!/usr/bin/env python3
"""Randomized differential test: sluice tokenize bpe vs Hugging Face
`tokenizers` on thousands of random documents (random Unicode code points
from many blocks, byte soups decoded with errors="replace" as sluice's
reader does, and word/whitespace/special-token mixtures), for GPT-NeoX-20B,
GPT-2 and the tiny test tokenizer, in --special=parse and plain modes.
Also checks the round trip (detokenize) against HF's decode.

Developer tool (needs the venv with tokenizers; not part of make test):
    /work/venv-bpe/bin/python tests/bpe/diff_random.py [--n 5000] [--seed 1] [--sluice build/sluice]
Exit status 0 when every document agrees."""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from refs import hf_gpt2, hf_neox, hf_tiny  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DATA = os.path.join(ROOT, "tests", "data", "bpe")

BLOCKS = [(0x20, 0x7E), (0x00, 0x1F), (0x80, 0xFF), (0x100, 0x24F), (0x300, 0x36F), (0x370, 0x3FF),
          (0x400, 0x4FF), (0x590, 0x6FF), (0x900, 0x97F), (0xE00, 0xE7F), (0x1100, 0x11FF),
          (0x1800, 0x18AF), (0x2000, 0x206F), (0x2070, 0x22FF), (0x3000, 0x30FF), (0x4E00, 0x4FFF),
          (0xAC00, 0xAD00), (0xE000, 0xE0FF), (0xFB00, 0xFB4F), (0xFE00, 0xFFFD), (0x1F300, 0x1F6FF),
          (0x1D400, 0x1D4FF), (0x10000, 0x1007F),
          # assigned in Unicode 10-16 (HF's regex knows 16.0, its normalizer 9.0)
          (0x1E030, 0x1E08F), (0x31350, 0x3135F), (0x11F00, 0x11F5F), (0x10D40, 0x10D8F), (0x1C80, 0x1C8F),
          (0xA7C0, 0xA7DF), (0x0890, 0x08A0), (0x1DF6, 0x1DFF), (0x11900, 0x1195F), (0x1AB0, 0x1ACF)]
PIECES = ["the", " the", "  ", "   ", " " * 25, "\t", "\n", "\r\n", "'s", "'RE", "'ll", "don't", "123", "4567",
          "<|endoftext|>", "<|padding|>", "<|sep|>", "[MASK]", "fox", "Quick", "e\u0301", "\u00a0", "\u3000",
          "\u0085", "\u180e", "\u2028", "\U0001f600", "\u200d", "...", "-->", "__init__", "x" * 40]


def random_doc(rng):
    kind = rng.randrange(3)
    if kind == 0:  # random code points
        out = []
        for _ in range(rng.randrange(0, 80)):
            lo, hi = rng.choice(BLOCKS)
            c = rng.randint(lo, hi)
            if 0xD800 <= c <= 0xDFFF:
                continue
            out.append(chr(c))
        return "".join(out)
    if kind == 1:  # byte soup, repaired as the reader repairs it
        return bytes(rng.randrange(256) for _ in range(rng.randrange(0, 120))).decode("utf-8", errors="replace")
    return "".join(rng.choice(PIECES) + rng.choice(["", " ", "  ", "\n"]) for _ in range(rng.randrange(0, 30)))


def run(cmd, data=None):
    r = subprocess.run(cmd, input=data, capture_output=True)
    if r.returncode:
        sys.exit("command failed: %s\n%s" % (" ".join(cmd), r.stderr.decode(errors="replace")))
    return r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sluice", default=os.path.join(ROOT, "build", "sluice"))
    a = ap.parse_args()
    rng = random.Random(a.seed)
    docs = [random_doc(rng) for _ in range(a.n)]
    tmp = tempfile.mkdtemp()
    src = os.path.join(tmp, "docs.jsonl")
    with open(src, "w", encoding="utf-8") as f:
        for i, t in enumerate(docs):
            f.write(json.dumps({"id": str(i), "text": t}) + "\n")
    bad = 0
    toks = [("neox", hf_neox(DATA), os.path.join(DATA, "neox-tokenizer.json")),
            ("gpt2", hf_gpt2(DATA), os.path.join(DATA, "gpt2")),
            ("tiny", hf_tiny(DATA), os.path.join(DATA, "tiny-tokenizer.json"))]
    for name, tok, path in toks:
        for mode in ("parse", "plain"):
            stream = os.path.join(tmp, "out.tok")
            run([a.sluice, "tokenize", "bpe", "-q", "-t", path, "--special", mode, src, "-o", stream])
            got = [json.loads(l)["ids"] for l in run([a.sluice, "cat", stream]).decode().split("\n")[:-1]]
            tok.encode_special_tokens = mode == "plain"
            want = [e.ids for e in tok.encode_batch(docs, add_special_tokens=False)]
            tok.encode_special_tokens = False
            n_bad = sum(1 for g, w in zip(got, want) if g != w) + abs(len(got) - len(want))
            shown = 0
            for i, (g, w) in enumerate(zip(got, want)):
                if g != w and shown < 4:
                    shown += 1
                    print("MISMATCH %s %s doc %d %r\n  sluice %s\n  hf     %s" % (name, mode, i, docs[i], g, w))
            if mode == "parse":
                dec = [json.loads(l)["text"] for l in run([a.sluice, "detokenize", "-t", path, stream]).decode().split("\n")[:-1]]
                hf_dec = tok.decode_batch(want, skip_special_tokens=False)
                d_bad = sum(1 for x, y in zip(dec, hf_dec) if x != y)
                print("%-5s decode: %d/%d differ from HF decode" % (name, d_bad, len(dec)))
                n_bad += d_bad
            print("%-5s %-5s: %d/%d documents differ" % (name, mode, n_bad, len(docs)))
            bad += n_bad
    print("TOTAL: %d mismatches over %d documents x %d runs" % (bad, len(docs), 6))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

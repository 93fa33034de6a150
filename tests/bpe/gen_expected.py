#!/usr/bin/env python3
"""Generates the expected ids for tests/data/bpe/corpus.jsonl with the
reference implementations: Hugging Face `tokenizers` for GPT-NeoX-20B and
GPT-2, and `tiktoken` (built offline from the same GPT-2 files) as a second
reference for GPT-2, which must agree with HF on every document.

Developer tool, not run by `make test`:
    python3 -m venv /work/venv-bpe && /work/venv-bpe/bin/pip install tokenizers tiktoken
    /work/venv-bpe/bin/python tests/bpe/gen_expected.py
Writes tests/data/bpe/expected-{neox,gpt2}.jsonl, one line per document:
    {"id":..., "parse":[ids, HF default], "plain":[ids with encode_special_tokens=True],
     "decoded": HF decode(parse ids, skip_special_tokens=False)}"""
import hashlib
import json
import struct
import os
import sys

from refs import hf_gpt2, hf_neox, hf_tiny, tiktoken_gpt2

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DATA = os.path.join(ROOT, "tests", "data", "bpe")


def main():
    docs = [json.loads(l) for l in open(os.path.join(DATA, "corpus.jsonl"), encoding="utf-8")]
    tk = tiktoken_gpt2(DATA)
    for name, tok in (("neox", hf_neox(DATA)), ("gpt2", hf_gpt2(DATA)), ("tiny", hf_tiny(DATA))):
        out = open(os.path.join(DATA, "expected-%s.jsonl" % name), "w", encoding="utf-8", newline="\n")
        for d in docs:
            tok.encode_special_tokens = False
            parse = tok.encode(d["text"], add_special_tokens=False).ids
            tok.encode_special_tokens = True
            plain = tok.encode(d["text"], add_special_tokens=False).ids
            tok.encode_special_tokens = False
            dec = tok.decode(parse, skip_special_tokens=False)
            if name == "gpt2":
                tp = tk.encode(d["text"], allowed_special="all")
                tq = tk.encode_ordinary(d["text"])
                if tp != parse or tq != plain:
                    sys.exit("tiktoken and HF disagree on %s" % d["id"])
            out.write(json.dumps({"id": d["id"], "parse": parse, "plain": plain, "decoded": dec},
                                 ensure_ascii=False) + "\n")
        out.close()
        print("wrote expected-%s.jsonl (%d docs)" % (name, len(docs)))
    long_runs()


# Pathological inputs: long runs that are one pre-token (or, for NeoX spaces,
# all added tokens). Stored as the id count, the sha256 of the ids as
# little-endian uint32, and the first 64 ids.
LONG = [("a", 1000000), (" ", 1000000), ("-", 300000), ("ab", 200000), ("0123456789", 50000),
        ("\u00e9", 200000), ("\n", 100000)]


def long_runs():
    out = open(os.path.join(DATA, "expected-long.jsonl"), "w", encoding="utf-8", newline="\n")
    for name, tok in (("neox", hf_neox(DATA)), ("gpt2", hf_gpt2(DATA))):
        for unit, count in LONG:
            text = unit * count
            ids = tok.encode(text, add_special_tokens=False).ids
            # (no tiktoken cross-check here: with the GPT-2 pattern its
            # fancy-regex backtracking panics with StackOverflow on these runs)
            h = hashlib.sha256(struct.pack("<%dI" % len(ids), *ids)).hexdigest()
            out.write(json.dumps({"tokenizer": name, "unit": unit, "count": count, "n": len(ids),
                                  "sha256": h, "head": ids[:64]}, ensure_ascii=False) + "\n")
    out.close()
    print("wrote expected-long.jsonl")


if __name__ == "__main__":
    main()

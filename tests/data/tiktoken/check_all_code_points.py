#!/usr/bin/env python3
"""Developer check (not in make test: it needs tiktoken and takes minutes):
every Unicode scalar value in 12 contexts (after capitals, before lower case,
after a space or a mark, before an apostrophe, digits, CR/LF and '/', Lt/Lm
neighbours), 22,242 documents, through `sluice tokenize bpe` with
small.tiktoken under the gpt2, cl100k, o200k and tekken patterns, against
tiktoken's encode_ordinary_batch of the same texts. Prints the differing
documents per pattern (none on 2026-11-24: 86.6M ids each).
usage: V/bin/python tests/data/tiktoken/check_all_code_points.py [build/sluice]"""
import base64
import json
import os
import subprocess
import sys
import tempfile

import tiktoken

HERE = os.path.dirname(os.path.abspath(__file__))
sys.argv += [] if len(sys.argv) > 1 else [os.path.join(HERE, "..", "..", "..", "build", "sluice")]
ns = {"__file__": os.path.join(HERE, "make_fixtures.py"), "__name__": "fixtures"}
exec(open(ns["__file__"]).read(), ns)  # its PATTERNS
ranks = {}
for line in open(os.path.join(HERE, "small.tiktoken")):
    t, r = line.split()
    ranks[base64.b64decode(t)] = int(r)
tekken = json.load(open(os.path.join(HERE, "tekken-small.json"), encoding="utf-8"))["config"]["pattern"]
CTX = [("AB", "cd"), ("ab", "CD"), (" ", "x"), ("x", "'s"), ("\u0301", "a"), ("", "\u0301"), ("1", "23"),
       (" ", " x"), ("\n", "/"), ("/", "\r\n"), ("'", "'T"), ("\u01c5", "\u02b0")]
docs, cur = [], []
for cp in range(0x110000):
    if 0xD800 <= cp <= 0xDFFF:
        continue
    cur += [a + chr(cp) + b for a, b in CTX]
    if len(cur) >= 600:
        docs.append("".join(cur))
        cur = []
docs.append("".join(cur))
with tempfile.TemporaryDirectory() as tmp:
    inp = os.path.join(tmp, "docs.jsonl")
    with open(inp, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps({"text": d}) + "\n")
    for name, pat in [("gpt2", ns["PATTERNS"]["gpt2"]), ("cl100k", ns["PATTERNS"]["cl100k"]),
                      ("o200k", ns["PATTERNS"]["o200k"]), ("tekken", tekken)]:
        want = tiktoken.Encoding("c_" + name, pat_str=pat, mergeable_ranks=ranks,
                                 special_tokens={}).encode_ordinary_batch(docs)
        tok = os.path.join(tmp, "out.tok")
        subprocess.run([sys.argv[1], "tokenize", "bpe", "-q", "-t", os.path.join(HERE, "small.tiktoken"),
                        "--pattern", name, inp, "-o", tok], check=True)
        out = subprocess.run([sys.argv[1], "cat", tok], check=True, capture_output=True, text=True).stdout
        got = [json.loads(line)["ids"] for line in out.splitlines()]
        bad = [i for i in range(len(docs)) if got[i] != want[i]]
        print("%s: %d documents, %d ids, %d differ %s" % (name, len(docs), sum(map(len, want)), len(bad), bad[:5]))

#!/usr/bin/env python3
"""Builds code.jsonl: source-code-like texts (where the SentencePiece BPE
families cut stretches most: indentation runs, identifiers joined by
punctuation, operators, long runs of one character, mixed scripts) with the
ids of the reference libraries, for tests/cli/tok_code.sh.

    python3 -m venv V && V/bin/pip install tokenizers==0.23.3 sentencepiece==0.2.3
    V/bin/python tests/data/spm/make_code_fixture.py

Per line of code.jsonl: "text", "spm" (sentencepiece encode(text) with
mistral-v1.model), "hf" (HF tokenizers encode(text, add_special_tokens=False)
with ../tok/mistral-v1.json, encode_special_tokens=True). The texts come from
a seeded generator (below), so the file is reproducible."""
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))

WORDS = ("self data value index result items config path name token stream shard batch "
         "encode decode merge score window length offset count total buffer reader writer").split()
KEYWORDS = "if elif else for while return def class try except with import from raise yield pass".split()
OPS = ["=", "==", "!=", "+=", "-", "*", "/", "//", "%", "**", "->", ":", ",", ".", "(", ")", "[", "]", "{", "}",
       "<", ">", "<=", ">=", "&&", "||", "::", ";", "@", "#"]
PROSE = ["The quick brown fox", "jumps over the lazy dog", "naïve café résumé", "中文分词测试", "日本語のテキスト",
         "Русский текст", "🙂 emoji 👍🏽", "tab\tseparated", "ﬁ ligature", "e\u0301 combining"]


def ident(rng):
    parts = [rng.choice(WORDS) for _ in range(rng.randint(1, 3))]
    sep = rng.choice(["_", "", ".", "_"])
    s = sep.join(parts)
    if rng.random() < 0.2:
        s = s.capitalize()
    if rng.random() < 0.2:
        s += str(rng.randint(0, 999))
    return s


def line(rng):
    r = rng.random()
    if r < 0.3:
        return " ".join([rng.choice(KEYWORDS), ident(rng) + rng.choice(["(", "[", ".", ""]) + ident(rng),
                         rng.choice(OPS), ident(rng) + rng.choice([":", ")", "):", "]", ","])])
    if r < 0.55:
        return ident(rng) + " " + rng.choice(OPS) + " " + ident(rng) + "(" + ", ".join(
            ident(rng) for _ in range(rng.randint(0, 3))) + ")"
    if r < 0.7:
        return "# " + rng.choice(PROSE) + " " + ident(rng)
    if r < 0.8:
        return repr(rng.choice(PROSE) + " " + str(rng.random()))
    if r < 0.85:
        return rng.choice(["=", "-", "*", "a", "ab", " "]) * rng.randint(20, 120)
    if r < 0.9:
        return "".join(rng.choice(OPS) for _ in range(rng.randint(3, 12)))
    return str(rng.randint(0, 10 ** rng.randint(1, 12))) + rng.choice(["", ".5", "e-3", "L", "0x1F"])


def text(rng):
    lines = []
    depth = 0
    for _ in range(rng.randint(15, 60)):
        depth = max(0, min(6, depth + rng.choice([-1, 0, 0, 1])))
        indent = rng.choice(["    ", "    ", "  ", "\t"]) * depth
        lines.append(indent + line(rng))
    return rng.choice(["\n", "\r\n", "\n\n"]).join(lines) + rng.choice(["", "\n", "  \n"])


def main():
    import sentencepiece as spm
    from tokenizers import Tokenizer

    rng = random.Random(20261124)
    sp = spm.SentencePieceProcessor(model_file=os.path.join(HERE, "mistral-v1.model"))
    hf = Tokenizer.from_file(os.path.join(HERE, "..", "tok", "mistral-v1.json"))
    hf.encode_special_tokens = True
    texts = [text(rng) for _ in range(40)]
    with open(os.path.join(HERE, "code.jsonl"), "w", encoding="utf-8") as f:
        for t in texts:
            f.write(json.dumps({"text": t, "spm": sp.encode(t), "hf": hf.encode(t, add_special_tokens=False).ids},
                               ensure_ascii=False, separators=(",", ":")) + "\n")
    print("code.jsonl: %d texts, %d bytes of text" % (len(texts), sum(len(t.encode()) for t in texts)))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Fixtures for text/textnorm.c from datatrove 0.10.1's own simplify_text:

  textnorm-cp.txt      every code point X (Hangul syllables apart) for which
                       simplify_text("a" + X + "b") is not "a" X "b":
                       "XXXX OUT" with OUT the result's code points in hex
  textnorm-strings.jsonl  adversarial strings {"text":..., "simplified":...}:
                       random mixes of what each step looks at (sigma
                       contexts, digits of many scripts and the decimal
                       separators, punctuation and controls, every kind of
                       whitespace, combining marks in and out of canonical
                       order, Hangul, U+0130), and sampled Hangul syllables

  /work/venv-h32/bin/python tests/data/dedup/make_textnorm_fixtures.py
(venv: datatrove[processing]==0.10.1)."""
import json
import os
import random
import sys

import datatrove
from datatrove.utils.text import simplify_text, PUNCTUATION

assert datatrove.__version__ == "0.10.1" if hasattr(datatrove, "__version__") else True
here = os.path.dirname(os.path.abspath(__file__))

with open(os.path.join(here, "textnorm-cp.txt"), "w") as f:
    f.write(f"# simplify_text('a' X 'b') where it is not 'a' X 'b'; Python {sys.version.split()[0]}, datatrove 0.10.1\n")
    for c in range(0x110000):
        if 0xD800 <= c <= 0xDFFF or 0xAC00 <= c <= 0xD7A3:
            continue
        s = "a" + chr(c) + "b"
        r = simplify_text(s)
        if r != s:
            f.write("%04X %s\n" % (c, " ".join("%04X" % ord(x) for x in r)))

rng = random.Random(32)
pools = [
    "ΣσςΑαΒ",                      # sigma contexts
    "\u0345\u00ad'.:\u0307\u2019",  # case-ignorable
    "0123456789٠١٢٣۴۵߀०१২৩๑๒᠐１２𝟎𝟏\U0001e4f1\U00011f51",  # digits of several scripts
    ".,،٫⎖⎗⎘",                      # decimal separators
    PUNCTUATION[:60] + "¡¿§¶·•‐‑‒―",  # punctuation (and near misses)
    " \t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u1680\u2000\u2007\u200a\u200b\u2028\u2029\u202f\u205f\u3000\ufeff",
    "\u0301\u0300\u0327\u0323\u0308\u0316\u093c\u094d\u05b0\u0f71\u1d165\U0001d165\U0001d16d\u302e\u16ff0\u1715",
    "aeiouAEIOUxyzXYZ",
    "ÀÉÎõüñçÅǅǈǱḀẞŉİıK\u212aΩ\u2126Åﬀﬁΐΰǰẖẗẘẙẚ",
    "가각힣각漢字かなカナ",
    "ЁЙёйЇїҐґ",
    "\U0001f600\U0001d400\U00010400\U00010428\U0001e900\U0001e922",
]
texts = []
for i in range(1500):
    n = rng.randint(0, 24)
    parts = []
    for _ in range(n):
        p = rng.choice(pools)
        parts.append(rng.choice(p))
    texts.append("".join(parts))
for i in range(150):
    texts.append("x" + chr(0xAC00 + rng.randrange(11172)) + chr(0x301) + " " + chr(0xAC00 + rng.randrange(11172)))
texts += ["", " ", "ΑΣ", "ΑΣ ", "Σ", "ΑΣΑ", "Α'Σ'", "İstanbul", "1.2.3", "1,,2", "3.14159", "١٫٥", "a\u0301 \u0301 b",
          "\u0301 x \u0301", "  \t lead and trail \n ", "ﬁ ﬂ", "Ǆ ǅ ǆ", "ΌΣΟΣ ΟΔΟΣ.", "x\u1d165\u0301\U0001d165\U0001d16d"]
with open(os.path.join(here, "textnorm-strings.jsonl"), "w") as f:
    for t in texts:
        f.write(json.dumps({"text": t, "simplified": simplify_text(t)}, ensure_ascii=False) + "\n")

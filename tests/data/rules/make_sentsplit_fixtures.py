#!/usr/bin/env python3
"""Sentence fixtures from datatrove 0.10.1 itself, for text/sentsplit.h:
sentsplit-en.jsonl, one object per text with datatrove's SpaCyTokenizer
span_tokenize spans ("spans": [start_char, end_char] pairs) and
the lengths (code points) of split_into_sentences' pieces ("pieces"). Texts: the adversarial word-tokenizer texts
(tests/data/dedup/wordtok-en.jsonl), the lines and whole texts of the rule
corpus (tests/data/rules/corpus.jsonl), and texts around the sentencizer's
punctuation characters, whitespace tokens and "IS_ALPHA".

  /work/venv-h32/bin/python tests/data/rules/make_sentsplit_fixtures.py
(venv: datatrove==0.10.1, spacy)."""
import json
import os
import random

from spacy.pipeline.sentencizer import Sentencizer
from datatrove.utils.text import split_into_sentences
from datatrove.utils.word_tokenizers import load_word_tokenizer

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", "..", ".."))
rng = random.Random(4242)
tok = load_word_tokenizer("en")
tok.word_tokenize("IS_ALPHA")  # a long run's state (see text/wordtok.h)

texts = [json.loads(l)["text"] for l in open(os.path.join(root, "tests", "data", "dedup", "wordtok-en.jsonl"), encoding="utf-8")]
corpus = [json.loads(l)["text"] for l in open(os.path.join(here, "corpus.jsonl"), encoding="utf-8")]
texts += corpus[::12]
texts += [l.strip() for t in corpus[1::7] for l in t.splitlines() if l.strip()][:600]
P = sorted(Sentencizer.default_punct_chars)
W = ["Hello", "world", "it", "is", "ok", "(", ")", "\"", "'", "»", "«", "—", "-", "...", "…", ",", ";", " ", "  ", "\n",
     "\n\n", "\t", "IS_ALPHA", "Mr.", "e.g.", "3.14", "U.S.", ":)", "#", "😀", "\u00a0"]
for _ in range(500):
    texts.append("".join(rng.choice(W + P) + rng.choice(["", " ", " ", "  "]) for _ in range(rng.randint(1, 25))))
texts += ["", " ", "a", ".", "..", "!?", "Foo.  .", "Foo. [1].", "IS_ALPHA. Next one.", "x IS_ALPHA. y.",
          "IS_ALPHAIS_ALPHA. z."]
with open(os.path.join(here, "sentsplit-en.jsonl"), "w", encoding="utf-8") as f:
    for t in texts:
        spans = tok.span_tokenize(t)  # code points, of the text datatrove tokenized (without IS_ALPHA, maybe)
        f.write(json.dumps({"text": t, "spans": [list(s) for s in spans], "pieces": [len(x) for x in split_into_sentences(t, "en")]},
                           ensure_ascii=False) + "\n")
print(len(texts), "texts")

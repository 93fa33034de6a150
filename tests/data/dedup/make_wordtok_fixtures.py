#!/usr/bin/env python3
"""wordtok-en.jsonl: adversarial texts and their words as datatrove 0.10.1's
English word tokenizer gives them (load_word_tokenizer("en").word_tokenize:
spacy.blank("en") and strip_strings), for tests/unit/test_text_wordtok.c.

  /work/venv-h32/bin/python tests/data/dedup/make_wordtok_fixtures.py [N] [OUT]
(venv: datatrove[processing]==0.10.1, spacy). With N and OUT it writes N
random texts to OUT instead (for a longer check outside `make test`)."""
import json
import os
import random
import sys

import spacy
from datatrove.utils.text import simplify_text
from datatrove.utils.word_tokenizers import load_word_tokenizer

tok = load_word_tokenizer("en")
nlp = spacy.blank("en")
rules = sorted(nlp.tokenizer.rules)

rng = random.Random(32)
words = ["hello", "world", "don't", "can't", "I'm", "U.S.", "e.g.", "etc.", "Mr.", "Dr", "isn't", "y'all", "gonna",
         "ain't", "o'clock", "rock'n'roll", "well-known", "3-4", "10km", "5kg", "$100", "£5", "€3.50", "100%", "1,000",
         "3.14", "1/2", "a/b", "C++", "C#", "@user", "#tag", "user@example.com", "http://example.com/a?b=c",
         "https://www.example.org/x_(y)", "www.test.co.uk", "ftp://1.2.3.4:21/f", "x.com", "sub.domain.io/path#frag",
         "10.0.0.1", "192.168.1.1", "8.8.8.8", "a.b", "A.B.C.", "...", "…", "--", "—", "–", ":)", ":-)", ";)", "(:",
         "<3", "^_^", "(^_^)", "o_O", "xD", "=)", ":'(", "'s", "'re", "''", "``", "\"quoted\"", "(paren)", "[brack]",
         "{brace}", "«guillemets»", "„low“", "‘single’", "l'homme", "Straße", "naïve", "café", "Ωmega", "日本語",
         "中文。", "한국어", "١٢٣", "٣٫١٤", "x²", "n°", "§12", "¶", "+1", "-5", "5-", "a+b", "2*3", "2^3", "a=b",
         "yes/no", "and/or", "w/o", "b/c", "9am", "10p.m.", "3a.m.", "'90s", "'em", "'cause", "ma'am", "N.Y.",
         "Jan.", "Feb.", "vs.", "No.", "St.", "ok?!", "what?", "wow!", "end.", "dots...", "x..y", "a…b", "'tis",
         "don’t", "I’ll", "we’ve", "it's", "IT'S", "Let's", "let’s", "ca", "nt", "n't", "gotta", "wanna",
         "(╯°□°）╯︵┻━┻", "¯\\_(ツ)_/¯", "ಠ_ಠ", "\U0001F600", "\U0001F44D\U0001F3FD", "a\u0301", "\u00ad",
         "1.", "2)", "(3)", "10:30", "3:00pm", "1st", "2nd", "Mar.", "Ph.D.", "i.e.", "a.m.", "p.m", "&", "&amp;",
         ]
seps = [" ", " ", " ", "  ", "\n", "\t", " \n ", "\xa0", "\u2009", "\u3000", "", "", ",", ".", "-", "/", "'",
        "\"", "(", ")", "!", "?", ":", ";", "…", "\u200b", "\x1c", " - "]


def rand_text(n):
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.55:
            out.append(rng.choice(words))
        elif r < 0.7:
            out.append(rng.choice(rules))
        elif r < 0.8:
            w = rng.choice(words)
            out.append(w.upper() if rng.random() < 0.5 else w.capitalize())
        else:
            out.append("".join(rng.choice("abcXYZ019.,-'/:@_()[]\"!?#$%&*+=<>~^`|\\…—’ñé中😀") for _ in range(rng.randint(1, 6))))
        out.append(rng.choice(seps))
    return "".join(out)


def main():
    if len(sys.argv) == 3:
        n, path = int(sys.argv[1]), sys.argv[2]
        texts = [rand_text(rng.randint(0, 30)) for _ in range(n)]
    else:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wordtok-en.jsonl")
        texts = [rand_text(rng.randint(0, 20)) for _ in range(600)]
        texts += [" ".join(rules[i:i + 7]) for i in range(0, len(rules), 7)]
        texts += ["".join(rules[i:i + 3]) for i in range(0, len(rules), 17)]
        texts += [simplify_text(t) for t in texts[:200]]
        texts += ["", " ", "  ", "a", " a ", "a  b", "\n\na\n", "( :", "(:", "(: )", ":):)", "Hello, world!"]
    with open(path, "w") as f:
        for t in texts:
            f.write(json.dumps({"text": t, "words": tok.word_tokenize(t)}, ensure_ascii=False) + "\n")


main()

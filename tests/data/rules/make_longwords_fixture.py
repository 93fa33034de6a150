#!/usr/bin/env python3
"""longwords-signals.json: gopher repetition's --annotate signals of
longwords.doc() as datatrove 0.10.1 computes them (its helpers, as
make_rules_fixtures.py restates them), with GopherRepetitionFilter's own
reason checked against them; tests/cli/filter_rules.sh compares sluice's.

  /tmp/dt-venv/bin/python tests/data/rules/make_longwords_fixture.py
(venv: datatrove==0.10.1, spacy)."""
import json
import os
import re
import sys

from datatrove.data import Document
from datatrove.pipeline.filters import GopherRepetitionFilter
from datatrove.pipeline.filters.gopher_repetition_filter import find_all_duplicate, find_duplicates, find_top_duplicate, get_n_grams
from datatrove.utils.text import split_into_words

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import longwords  # noqa: E402

text = longwords.doc()
s, checks = {}, []
paras = re.split(r"\n{2,}", text.strip())
d, c = find_duplicates(paras)
s["gopher_dup_para_frac"], s["gopher_dup_para_char_frac"] = d / len(paras), c / len(text)
checks += [(d / len(paras) > 0.3, "dup_para_frac"), (c / len(text) > 0.2, "dup_para_char_frac")]
lines = re.split("\n+", text)
d, c = find_duplicates(lines)
s["gopher_dup_line_frac"], s["gopher_dup_line_char_frac"] = d / len(lines), c / len(text)
checks += [(d / len(lines) > 0.3, "dup_line_frac"), (c / len(text) > 0.2, "dup_line_char_frac")]
words = split_into_words(text, "en")
assert len(words) == 43, len(words)  # one token a word
for n, fr in ((2, 0.2), (3, 0.18), (4, 0.16)):
    v = find_top_duplicate(get_n_grams(words, n)) / len(text)
    s["gopher_top_%d_gram_char_frac" % n] = v
    checks.append((v > fr, "top_%d_gram" % n))
for n, fr in ((5, 0.15), (6, 0.14), (7, 0.13), (8, 0.12), (9, 0.11), (10, 0.10)):
    v = find_all_duplicate(words, n) / len(text)
    s["gopher_dup_%d_gram_char_frac" % n] = v
    checks.append((v > fr, "duplicated_%d_n_grams" % n))
s["gopher_repetition_reason"] = next((r for c, r in checks if c), None)
res = GopherRepetitionFilter().filter(Document(text=text, id="longwords"))
assert s["gopher_repetition_reason"] == (None if res is True else res[1]), (s["gopher_repetition_reason"], res)
with open(os.path.join(here, "longwords-signals.json"), "w") as f:
    json.dump(s, f, indent=1)
    f.write("\n")
print(s)

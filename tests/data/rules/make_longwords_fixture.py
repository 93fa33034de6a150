#!/usr/bin/env python3
"""longwords-signals.json: gopher repetition's --annotate signals of
longwords.doc() as datatrove 0.10.1 computes them (its helpers, as
dt_signals.py restates them), with GopherRepetitionFilter's own
reason checked against them; tests/cli/filter_rules.sh compares sluice's.

  /tmp/dt-venv/bin/python tests/data/rules/make_longwords_fixture.py
(venv: datatrove==0.10.1, spacy)."""
import json
import os
import sys

from datatrove.data import Document
from datatrove.pipeline.filters import GopherRepetitionFilter
from datatrove.utils.text import split_into_words

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import longwords  # noqa: E402
from dt_signals import gr_signals  # noqa: E402

text = longwords.doc()
assert len(split_into_words(text, "en")) == 43  # one token a word
s = gr_signals(text)
res = GopherRepetitionFilter().filter(Document(text=text, id="longwords"))
assert s["gopher_repetition_reason"] == (None if res is True else res[1]), (s["gopher_repetition_reason"], res)
with open(os.path.join(here, "longwords-signals.json"), "w") as f:
    json.dump(s, f, indent=1)
    f.write("\n")
print(s)

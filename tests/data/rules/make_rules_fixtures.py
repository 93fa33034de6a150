#!/usr/bin/env python3
"""Rule-filter fixtures from datatrove 0.10.1 itself, for `sluice filter --rules`.

corpus.jsonl: web-like prose (paragraphs of the licence texts in
/usr/share/common-licenses), lists, boilerplate (cookie and terms lines,
citations, "javascript", "lorem ipsum"), code (sluice's own C and shell),
the multilingual texts of tests/data/dedup/corpus.jsonl, repeated lines,
paragraphs and n-grams, and adversarial texts (every line break Python
knows, NBSP and other spaces, Kelvin sign and dotted I, "IS_ALPHA",
Arabic-Indic citation digits, emoji, combining marks, only punctuation,
only whitespace), and families of documents stepped across each threshold
(49/50/51 words, mean word length 3 and 10, 10% hashes, 90% bullets, 80%
alphabetic words, 1 or 2 stop words, 30% duplicate lines, 5 sentences, 12%
punctuated lines, ...).

For each configuration in CONFIGS, datatrove's filters run on every
document, in order, as a pipeline runs them (filter() per document; C4
rewrites the text it keeps), and expect-<name>.jsonl gets one line per
document: {"id", "keep", "rule", "reason"}, and "text_sha1" (of the UTF-8
text) when a kept document's text was rewritten.
configs.json: the sluice arguments of each configuration.

signals.jsonl: a first line with the names ("id" and the signals), then
for every document the values of the signals `--annotate` writes, for the
four rules with their defaults, each rule on the input text: the values
datatrove's filter code computes, restated below with datatrove's own
helpers (split_into_words, find_duplicates, find_top_duplicate,
find_all_duplicate, get_n_grams, CITATION_REGEX, split_into_sentences,
PUNCTUATION_SET, TERMINAL_PUNCTUATION); the first failed check they give
is checked against datatrove's own reason for every document.

  /work/venv-h32/bin/python tests/data/rules/make_rules_fixtures.py
(venv: datatrove==0.10.1, spacy)."""
import glob
import hashlib
import json
import os
import random
import re
import sys

import numpy as np
from datatrove.data import Document
from datatrove.pipeline.filters import (C4QualityFilter, FineWebQualityFilter, GopherQualityFilter,
                                        GopherRepetitionFilter)
from datatrove.pipeline.filters.c4_filters import CITATION_REGEX, END_PUNCTUATION, POLICY_SUBSTRINGS
from datatrove.pipeline.filters.gopher_quality_filter import STOP_WORDS
from datatrove.pipeline.filters.gopher_repetition_filter import find_duplicates
from datatrove.utils.text import PUNCTUATION_SET, TERMINAL_PUNCTUATION, split_into_sentences, split_into_words
from datatrove.utils.word_tokenizers import load_word_tokenizer

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from dt_signals import gr_signals  # noqa: E402

root = os.path.abspath(os.path.join(here, "..", "..", ".."))
rng = random.Random(3333)

# datatrove's spaCy tokenizer fails on "IS_ALPHA" every time but the first
# in a process (and then retries without it): a long run's behaviour
load_word_tokenizer("en").word_tokenize("IS_ALPHA")

# --- corpus -------------------------------------------------------------------

def licence_paragraphs():
    out = []
    for f in ["GPL-3", "Apache-2.0", "MPL-2.0", "Artistic", "LGPL-3", "GFDL-1.3"]:
        txt = open("/usr/share/common-licenses/" + f, encoding="utf-8").read()
        for p in re.split(r"\n\s*\n", txt):
            p = " ".join(p.split())
            if len(p.split()) >= 8:
                out.append(p)
    return out


PARAS = licence_paragraphs()
SENTS = [s.strip() + "." for p in PARAS for s in p.split(". ") if len(s.split()) >= 3]
CODE = []
for f in sorted(glob.glob(os.path.join(root, "text", "*.c")))[:3] + sorted(glob.glob(os.path.join(root, "tests", "cli", "*.sh")))[:3]:
    src = open(f, encoding="utf-8").read()
    lines = src.split("\n")
    for i in range(0, len(lines), 12):
        CODE.append("\n".join(lines[i:i + 12]))
MULTI = [json.loads(l)["text"] for l in open(os.path.join(root, "tests", "data", "dedup", "corpus.jsonl"), encoding="utf-8")]
BOILER = ["This site uses cookies to improve your experience.", "Please enable JavaScript to view the comments.",
          "Read our Terms of Use and Privacy Policy.", "Lorem ipsum dolor sit amet, consectetur adipiscing elit.",
          "Copyright 2024. All rights reserved.", "Click here", "Home | About | Contact", "Share this:",
          "function f() { return 1; }", "The history of the town [1] goes back centuries [edit].",
          "Citation needed here [citation needed] as they say.", "It was built in 1850 [١٢] by the river.",
          "By continuing you agree to our use of cookies.", "Read more...", "Posted on 12 March 2021 …",
          "- first item", "• second item", "  - indented item", "#hashtag #another #third", "Loading…",
          "Our cookie policy explains this.", "We use coo\u212aies on this site, as you know.",
          "PR\u0130VACY POLICY applies to you all.", "Subscribe to our newsletter!", "Hello?", "\"Quoted line.\"",
          "'Single quoted line.'", "Ends with ellipsis ...", "Mixed ending !?"]
ODD = ["\u00a0", "\u2028", "\u2029", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\r", "\r\n", "\t", "\u3000",
       "\u200b", "\ufeff", "\u2003"]
WORDS = "the be to of and that have with a in is it for on was as at by an this from or are not you can".split()
LONG = "internationalization characteristically incomprehensibilities uncharacteristically".split()


def sentence():
    return rng.choice(SENTS)


def prose(nparas=None, sep="\n\n"):
    n = nparas or rng.randint(1, 4)
    return sep.join(" ".join(sentence() for _ in range(rng.randint(1, 4))) for _ in range(n))


def random_doc():
    kind = rng.random()
    parts = []
    for _ in range(rng.randint(1, 8)):
        r = rng.random()
        if r < 0.35:
            parts.append(prose(rng.randint(1, 2), rng.choice(["\n\n", "\n", "\n\n\n", "\r\n"])))
        elif r < 0.5:
            parts.append(rng.choice(BOILER))
        elif r < 0.6:
            parts.append(rng.choice(CODE))
        elif r < 0.72:
            parts.append(rng.choice(MULTI))
        elif r < 0.8:
            x = rng.choice(parts) if parts else sentence()
            parts.extend([x] * rng.randint(1, 4))  # repetition
        elif r < 0.88:
            parts.append("\n".join(rng.choice(["- ", "• ", "* ", ""]) + " ".join(rng.sample(WORDS, rng.randint(1, 6)))
                                   + rng.choice(["", "...", "…", ".", "!"]) for _ in range(rng.randint(2, 8))))
        else:
            parts.append(rng.choice(ODD).join(rng.choice(SENTS + BOILER) for _ in range(rng.randint(1, 4))))
    sep = rng.choice(["\n", "\n\n", " ", "\n" if kind < 0.5 else rng.choice(ODD)])
    return sep.join(parts)[:rng.choice([300, 700, 1500])]


docs = []


def add(text):
    docs.append(text)


# threshold families
for n in (48, 49, 50, 51, 52):  # non-symbol words around min_doc_words = 50 (stop words and full stops in)
    add(" ".join(["the", "and"] + ["word%d" % i for i in range(n - 2)]) + " .")
for n in (98, 99, 100, 101):  # max_doc_words for a configuration with 100
    add(" ".join(rng.choice(WORDS) for _ in range(n)) + ".")
for L in (2, 3, 4, 9, 10, 11):  # mean word length exactly 3 / 10 and beside
    add(" ".join(["the", "and"] + ["x" * L] * 60))
    add(" ".join(["x" * (L - 1), "x" * (L + 1)] * 30 + ["the", "of"]))
base = " ".join(rng.choice(WORDS) for _ in range(90))
for k in range(6, 14):  # 10% hashes, 10% ellipses
    add(base + " #" * k)
    add(base + " ..." * k)
    add(base + " …" * k)
    add(base + " " + "a#b " * k)
for nb in range(16, 22):  # 90% bullet lines of 20; 30% lines ending with an ellipsis
    lines = [("- " if i < nb else "") + " ".join(rng.sample(WORDS, 6)) for i in range(20)]
    add("\n".join(lines))
    add("\n".join(("  •" if i < nb else "") + " the of and to be with that have " + str(i) for i in range(20)))
for ne in range(4, 9):
    add("\n".join(" ".join(rng.sample(WORDS, 8)) + (" ..." if i < ne else ".") for i in range(20)))
for na in range(0, 20, 2):  # alphabetic words: 80% (punctuation tokens count as words)
    add(" ".join(["the", "and"] + ["word"] * (78 - na) + ["12345"] * na + [",", ";"] * 10))
for sw in (["the"], ["the", "be"], ["The", "Be"], ["the", "the"], ["THE", "and"]):  # stop words, case-sensitive
    add(" ".join(sw + ["lorem%d" % i for i in range(60)]))
# gopher repetition
p = [prose(1) for _ in range(10)]
for k in range(0, 6):  # duplicate paragraphs / lines around 30%
    add("\n\n".join(p[:10 - k] + p[:k]))
    add("\n".join(p[:10 - k] + p[:k]))
    add("\n".join(p[:10 - k] + p[:k]) + "\n")
add("\n\nfoo\n\n\nfoo\n\nbar\n\n")
add("\nfoo\nfoo\n")
for k in range(1, 8):  # top n-grams, duplicated n-grams
    add(" ".join(["alpha beta gamma"] * k + [sentence() for _ in range(4)]))
    add(" ".join([sentence()] * k))
add("ab c d e f ab c d e f g h i j k l a bc d e f a bc d e f")  # "".join collisions
add("x" * 5 + " " + " ".join(["a", "b"] * 40))
# c4
for ns in range(3, 8):  # sentences around 5
    add("\n".join(sentence() for _ in range(ns)))
    add(" ".join(sentence() for _ in range(ns)))
    add("\n".join(sentence() + " Also this one. And one more!" for _ in range(ns // 2)))
for b in BOILER:
    add("\n".join([sentence(), sentence(), b, sentence(), sentence(), sentence()]))
add("\n".join([sentence()] * 3 + ["word " + "x" * 1001 + " end."] + [sentence()] * 3))
add("\n".join([sentence()] * 3 + ["word " + "x" * 1000 + " end."] + [sentence()] * 3))
add("\n".join(sentence() + " [1]" for _ in range(6)))
add("\n".join("[2] " + sentence() for _ in range(6)))
add("\n".join(sentence()[:-1] + " [3]." for _ in range(6)))
add("\n".join(sentence() + " [edit]" for _ in range(6)))
add("Foo bar baz. [1] Qux quux.\nA b c. [2]. D e f.\n" * 3)
add("Is this it?\"  Yes.\nThey said: 'no!'\nWhat... really.\nOne two three...\nUnd so weiter.")
for o in ODD:  # line breaks and spaces of every kind
    add(o.join(sentence() for _ in range(7)))
    add(o.join(BOILER[:8]))
# fineweb
for k in range(0, 6):  # 12% punctuated lines of 25
    add("\n".join(" ".join(rng.sample(WORDS, 7)) + ("." if i < k else "") for i in range(25)))
for k in range(14, 20):  # short lines (<= 30 characters) around 67% of 21
    add("\n".join(("Short line %d." % i) if i < k else sentence() + " " + sentence() for i in range(21)))
for k in range(0, 4):  # duplicated line characters around 1%
    add("\n".join([sentence() for _ in range(30)] + ["Same line."] * k))
for k in range(2, 8):  # newlines per word around 0.3
    add("\n".join(" ".join(rng.sample(WORDS, k)) + "." for _ in range(12)))
# adversarial
for t in ["", " ", "\n", "\n\n\n", "...", "#", "… … …", "!!!", "IS_ALPHA", "x IS_ALPHA y.", "IS_IS_ALPHAALPHA",
          "the IS_ALPHA and IS_ALPHA.\nIS_ALPHA, the.", "😀 😀 😀", "e\u0301te\u0301 cafe\u0301.", "\u0130stanbul.",
          "a\u00a0b\u00a0c.", "\ufeffthe be to of.", "\x00\x01\x02", "}{", "{", "lorem  ipsum", "LOREM IPSUM.",
          "Java\u00adScript.", "the end.\u2028the end.\u2029the end.", "a.b.c.d. e.f.", "Mr. Smith went to Washington. He did.",
          "U.S.A. is big. It is!", "Wait... what? Yes!! No?! OK.", "(Hello.) [World.] {Again.}", "“Quoted.” ‘Single.’",
          "中文句子。另一个句子！第三个？", "नमस्ते। दुनिया।", "Привет. Мир!", "مرحبا؟ عالم.", "١٢٣ ٤٥٦.",
          "\t\t\tindented code();\n\t}\n", "#!/bin/sh\n# comment\necho hi\n", "- \n- \n- \n", "•\n•\n•"]:
    add(t)
for _ in range(40):
    t = "".join(rng.choice(["a", "b", " ", ".", "!", "?", "\n", "#", "-", "…", "\u00a0", "[1]", "é", "中", "{",
                            "the ", "and ", "...", "\r\n", "\u2028", "IS_ALPHA", "'", "\""]) for _ in range(rng.randint(1, 300)))
    add(t)
for _ in range(220):
    add(random_doc())
# NUL bytes ending lines and sentences (last, so the ids above stay): C4's terminal
# punctuation test once took a NUL for one (found by tests/data/rules/diff_rules.py)
five = "One two three.\nFour five six.\nSeven eight nine.\nTen eleven twelve.\n"
for t in [five + "no punctuation here\x00", five + "Thirteen fourteen fifteen.\nvar x = {\x00",
          five + "Thirteen fourteen fifteen.\nno punctuation here\x00", "One two. Three four. Five six\x00",
          ". EM. e.\nE E \x00\n. 1 .", "Ends with a NUL.\x00\n" * 6]:
    add(t)

ids = ["r%04d" % i for i in range(len(docs))]
with open(os.path.join(here, "corpus.jsonl"), "w", encoding="utf-8") as f:
    for i, t in zip(ids, docs):
        f.write(json.dumps({"id": i, "text": t, "src": "make_rules_fixtures"}, ensure_ascii=False) + "\n")

# --- configurations -------------------------------------------------------------

ORDER = {"gopher-quality": GopherQualityFilter, "gopher-repetition": GopherRepetitionFilter,
         "c4": C4QualityFilter, "fineweb": FineWebQualityFilter}
CONFIGS = {
    "gopher-quality": ([("gopher-quality", {})], []),
    "gopher-repetition": ([("gopher-repetition", {})], []),
    "c4": ([("c4", {})], []),
    "fineweb": ([("fineweb", {})], []),
    "all": ([("gopher-quality", {}), ("gopher-repetition", {}), ("c4", {}), ("fineweb", {})], []),
    # FineWeb's own order: repetition, quality, C4 (which rewrites), FineWeb
    "fineweb-order": ([("gopher-repetition", {}), ("gopher-quality", {}), ("c4", {}), ("fineweb", {})], []),
    "gq-custom": ([("gopher-quality", dict(min_doc_words=5, max_doc_words=100, min_avg_word_length=None,
                                           max_symbol_word_ratio=0.2, min_stop_words=1,
                                           stop_words=["The", "and", "of"]))],
                  ["gopher-quality:min_doc_words=5,max_doc_words=100,min_avg_word_length=none,"
                   "max_symbol_word_ratio=0.2,min_stop_words=1,stop_words=The|and|of"]),
    "gr-custom": ([("gopher-repetition", dict(dup_line_frac=0.1, dup_para_frac=None, top_n_grams=((2, 0.1), (5, 0.3)),
                                              dup_n_grams=((3, 0.05), (6, 0.1))))],
                  ["gopher-repetition:dup_line_frac=0.1,dup_para_frac=none,top_3_gram=none,top_4_gram=none,"
                   "top_2_gram=0.1,top_5_gram=0.3,duplicated_3_n_grams=0.05,duplicated_5_n_grams=none,"
                   "duplicated_7_n_grams=none,duplicated_8_n_grams=none,duplicated_9_n_grams=none,"
                   "duplicated_10_n_grams=none,duplicated_6_n_grams=0.1"]),
    "c4-sentences": ([("c4", dict(split_paragraph=False, remove_citations=False, min_num_sentences=3,
                                  min_words_per_line=2, max_word_length=20, filter_javascript=False))],
                     ["c4:split_paragraph=false,remove_citations=false,min_num_sentences=3,min_words_per_line=2,"
                      "max_word_length=20,filter_javascript=false"]),
    "c4-loose": ([("c4", dict(filter_no_terminal_punct=False, min_num_sentences=-1, max_word_length=-1,
                              filter_lorem_ipsum=False, filter_curly_bracket=False, filter_policy=False))],
                 ["c4:filter_no_terminal_punct=false,min_num_sentences=-1,max_word_length=-1,"
                  "filter_lorem_ipsum=false,filter_curly_bracket=false,filter_policy=false"]),
    "fw-custom": ([("fineweb", dict(line_punct_thr=0.2, line_punct_exclude_zero=True, short_line_length=10,
                                    short_line_thr=0.5, char_duplicates_ratio=0.05, new_line_ratio=0.2,
                                    stop_chars=(".", "!", "…")))],
                  ["fineweb:line_punct_thr=0.2,line_punct_exclude_zero=true,short_line_length=10,"
                   "short_line_thr=0.5,char_duplicates_ratio=0.05,new_line_ratio=0.2,stop_chars=.!…"]),
}

configs_json = {}
for name, (steps, extra) in CONFIGS.items():
    configs_json[name] = ["--rules", ",".join(r for r, _ in steps)] + [a for x in extra for a in ("--rule", x)]
    filters = [(r, ORDER[r](**kw)) for r, kw in steps]
    with open(os.path.join(here, "expect-%s.jsonl" % name), "w", encoding="utf-8") as f:
        for i, t in zip(ids, docs):
            doc = Document(text=t, id=i)
            rec = {"id": i, "keep": True, "rule": None, "reason": None}
            for rname, flt in filters:
                res = flt.filter(doc)
                ok, why = (res if isinstance(res, tuple) else (res, None))
                if not ok:
                    rec.update(keep=False, rule=rname, reason=why)
                    break
            if rec["keep"] and doc.text != t:  # C4's rewrite
                rec["text_sha1"] = hashlib.sha1(doc.text.encode("utf-8")).hexdigest()
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
with open(os.path.join(here, "configs.json"), "w") as f:
    json.dump(configs_json, f, indent=1)
    f.write("\n")

# --- signals (--annotate), restated with datatrove's helpers --------------------


def ratio(a, b):
    return a / b if b else None


def gq_signals(text):
    words = split_into_words(text, "en")
    nw = len(words)
    ns = [w for w in words if any(ch not in PUNCTUATION_SET for ch in w)]
    mean = float(np.mean([len(w) for w in ns])) if ns else None
    lines = text.splitlines()
    s = {
        "gopher_words": nw,
        "gopher_non_symbol_words": len(ns),
        "gopher_mean_word_length": mean,
        "gopher_hash_ratio": ratio(text.count("#"), nw),
        "gopher_ellipsis_ratio": ratio(text.count("...") + text.count("…"), nw),
        "gopher_bullet_lines_ratio": ratio(sum(l.lstrip().startswith("•") or l.lstrip().startswith("-") for l in lines), len(lines)),
        "gopher_end_ellipsis_lines_ratio": ratio(sum(l.rstrip().endswith("...") or l.rstrip().endswith("…") for l in lines), len(lines)),
        "gopher_alpha_words_ratio": ratio(sum(any(c.isalpha() for c in w) for w in words), nw),
        "gopher_stop_words": len(set(STOP_WORDS) & set(words)),
    }
    checks = [(s["gopher_non_symbol_words"] < 50, "gopher_short_doc"), (s["gopher_non_symbol_words"] > 100000, "gopher_long_doc"),
              (mean is not None and mean < 3, "gopher_below_avg_threshold"), (mean is not None and mean > 10, "gopher_above_avg_threshold"),
              ((s["gopher_hash_ratio"] or 0) > 0.1, "gopher_too_many_hashes"), ((s["gopher_ellipsis_ratio"] or 0) > 0.1, "gopher_too_many_ellipsis"),
              ((s["gopher_bullet_lines_ratio"] or 0) > 0.9, "gopher_too_many_bullets"),
              ((s["gopher_end_ellipsis_lines_ratio"] or 0) > 0.3, "gopher_too_many_end_ellipsis"),
              (s["gopher_alpha_words_ratio"] is not None and s["gopher_alpha_words_ratio"] < 0.8, "gopher_below_alpha_threshold"),
              (s["gopher_stop_words"] < 2, "gopher_enough_stop_words")]
    s["gopher_quality_reason"] = next((r for c, r in checks if c), None)
    return s


def c4_signals(text):
    """C4QualityFilter.filter's loop, run to the end (a lorem ipsum or curly
    bracket line is remembered, not returned on)."""
    s = dict(c4_lines=0, c4_lines_kept=0, c4_sentences=0, c4_lines_too_long_word=0, c4_lines_no_terminal_punct=0,
             c4_lines_too_few_words=0, c4_lines_javascript=0, c4_lines_policy=0, c4_lorem_ipsum=False, c4_curly_bracket=False)
    reason = None
    lines = text.splitlines()
    s["c4_lines"] = len(lines)
    for line in lines:
        line = line.strip()
        words = line.split()
        if any(len(w) > 1000 for w in words):
            s["c4_lines_too_long_word"] += 1
            continue
        line = CITATION_REGEX.sub("", line)
        if not line.endswith(END_PUNCTUATION) or line.endswith("..."):
            s["c4_lines_no_terminal_punct"] += 1
            continue
        if len(words) < 3:
            s["c4_lines_too_few_words"] += 1
            continue
        ll = line.lower()
        if "lorem ipsum" in ll:
            s["c4_lorem_ipsum"] = True
            reason = reason or "lorem_ipsum"
            continue
        if "javascript" in ll:
            s["c4_lines_javascript"] += 1
            continue
        if "{" in line:
            s["c4_curly_bracket"] = True
            reason = reason or "curly_bracket"
            continue
        if any(p in ll for p in POLICY_SUBSTRINGS):
            s["c4_lines_policy"] += 1
            continue
        s["c4_sentences"] += len(split_into_sentences(line, "en"))
        s["c4_lines_kept"] += 1
    if s["c4_sentences"] < 5:
        reason = reason or "too_few_sentences"
    s["c4_reason"] = reason
    return s


def fw_signals(text):
    s = dict(fineweb_line_punct_ratio=None, fineweb_short_line_ratio=None, fineweb_char_dup_ratio=None,
             fineweb_list_ratio=None)
    lines = [l for l in text.split("\n") if l.strip() != ""]
    if not lines:
        s["fineweb_reason"] = "empty"
        return s
    checks = []
    r = sum(1 for l in lines if l.endswith(tuple(TERMINAL_PUNCTUATION))) / len(lines)
    s["fineweb_line_punct_ratio"] = r
    checks.append((r < 0.12, "line_punct_ratio"))
    r = sum(1 for l in lines if len(l) <= 30) / len(lines)
    s["fineweb_short_line_ratio"] = r
    checks.append((r > 0.67, "short_line_ratio"))
    r = find_duplicates(lines)[1] / len(text.replace("\n", ""))
    s["fineweb_char_dup_ratio"] = r
    checks.append((r > 0.01, "char_dup_ratio"))
    nw = len(split_into_words(text, "en"))  # 0 for "IS_ALPHA" alone: datatrove raises here
    r = text.count("\n") / nw if nw else None
    s["fineweb_list_ratio"] = r
    checks.append((r is not None and r > 0.3, "list_ratio"))
    s["fineweb_reason"] = next((r for c, r in checks if c), None)
    return s


with open(os.path.join(here, "signals.jsonl"), "w", encoding="utf-8") as f:
    names = None
    for i, t in zip(ids, docs):
        rec = {"id": i}
        for rname, fn in (("gopher-quality", gq_signals), ("gopher-repetition", gr_signals), ("c4", c4_signals),
                          ("fineweb", fw_signals)):
            s = fn(t)
            res = ORDER[rname]().filter(Document(text=t, id=i))
            want = None if res is True else res[1]
            key = [k for k in s if k.endswith("_reason")][0]
            assert s[key] == want or (rname == "c4" and want in ("lorem_ipsum", "curly_bracket") and s[key] == want), (i, rname, s[key], want)
            rec.update(s)
        if names is None:
            names = list(rec)
            f.write(json.dumps(names) + "\n")
        assert list(rec) == names
        f.write(json.dumps([rec[k] for k in names], ensure_ascii=False, separators=(",", ":")) + "\n")

counts = {}
for name in CONFIGS:
    for l in open(os.path.join(here, "expect-%s.jsonl" % name), encoding="utf-8"):
        r = json.loads(l)
        counts.setdefault(name, {}).setdefault(r["reason"] or "kept", 0)
        counts[name][r["reason"] or "kept"] += 1
for name, c in counts.items():
    print(name, dict(sorted(c.items())))
print(len(docs), "documents")

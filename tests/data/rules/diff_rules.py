#!/usr/bin/env python3
"""Randomized differential test of `sluice filter --rules` against datatrove
0.10.1's GopherQualityFilter, GopherRepetitionFilter, C4QualityFilter and
FineWebQualityFilter (a developer tool; not run by `make test`).

    python3 -m venv /tmp/dt-venv && /tmp/dt-venv/bin/pip install 'datatrove[processing]==0.10.1' spacy
    /tmp/dt-venv/bin/python tests/data/rules/diff_rules.py --seed 1 --n 2000
    /tmp/dt-venv/bin/python tests/data/rules/diff_rules.py --seed 2 --configs c4,c4-sentences --minimize

Options: --n documents, --seed, --configs (comma-separated names of
configs.json; default all eleven), --sluice (default build/sluice), --work DIR
(corpus, sluice outputs and discrepancies.jsonl are kept there; default a
temporary directory), --show K (differing documents printed per config),
--minimize (shrink the first document of each discrepancy class to a
smallest text that still differs the same way), --is-alpha (also put the
token "IS_ALPHA" into documents: datatrove's behaviour on it depends on
what its spaCy tokenizer met before in the process, docs/filter.md),
--no-nul (take NUL out of the documents), --signals (also run `--annotate`
with the four rules' defaults and compare every signal with the values of
make_rules_fixtures.py's gq/gr/c4/fw_signals, its own restatement of
datatrove's code: word, sentence and n-gram counts are compared exactly,
not only where a threshold makes them decide).

Each document is generated from the seed: English prose (sentences built
from a word list, stop words in mixed case, contractions, abbreviations),
lists and bullets, lines of "...", "…" and lines ending in every kind of
punctuation (also quotes and brackets after the full stop, a trailing space
or tab), curly braces, "javascript", "lorem ipsum" and policy phrases (also
in other cases, with the KELVIN SIGN or dotted I), citations ([1], [edit],
[citation needed], other scripts' digits, near misses), words of 20/21 and
1000/1001 characters, Unicode white space (NBSP, U+2028, U+2029, \\r\\n,
\\r, tabs, \\v, \\f, \\x1c-\\x1f, \\x85, U+3000), NUL and other controls,
non-Latin scripts, combining marks, emoji and ZWJ sequences, duplicated
lines, paragraphs and n-grams, empty and white-space-only documents, single
words, numbers, URLs, e-mail addresses, hashtags and symbols.

For each configuration, datatrove's filters run on every document in the
configuration's order, as make_rules_fixtures.py runs them (filter() per
document, C4 rewriting the text it keeps); sluice runs with the arguments of
configs.json. A document agrees when both keep it with the same text, or
both drop it with the same rule and reason. Where datatrove raises (a
division by zero documented in docs/filter.md) the document is counted
apart ("datatrove raises"), not as a disagreement."""
import argparse
import collections
import json
import os
import random
import subprocess
import sys
import tempfile
import time

from datatrove.data import Document
from datatrove.pipeline.filters import (C4QualityFilter, FineWebQualityFilter, GopherQualityFilter,
                                        GopherRepetitionFilter)
from datatrove.utils.word_tokenizers import load_word_tokenizer

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", "..", ".."))

# --- configurations: make_rules_fixtures.py's CONFIGS, restated ---------------

ORDER = {"gopher-quality": GopherQualityFilter, "gopher-repetition": GopherRepetitionFilter,
         "c4": C4QualityFilter, "fineweb": FineWebQualityFilter}
CONFIGS = {
    "gopher-quality": [("gopher-quality", {})],
    "gopher-repetition": [("gopher-repetition", {})],
    "c4": [("c4", {})],
    "fineweb": [("fineweb", {})],
    "all": [("gopher-quality", {}), ("gopher-repetition", {}), ("c4", {}), ("fineweb", {})],
    "fineweb-order": [("gopher-repetition", {}), ("gopher-quality", {}), ("c4", {}), ("fineweb", {})],
    "gq-custom": [("gopher-quality", dict(min_doc_words=5, max_doc_words=100, min_avg_word_length=None,
                                          max_symbol_word_ratio=0.2, min_stop_words=1, stop_words=["The", "and", "of"]))],
    "gr-custom": [("gopher-repetition", dict(dup_line_frac=0.1, dup_para_frac=None, top_n_grams=((2, 0.1), (5, 0.3)),
                                             dup_n_grams=((3, 0.05), (6, 0.1))))],
    "c4-sentences": [("c4", dict(split_paragraph=False, remove_citations=False, min_num_sentences=3,
                                 min_words_per_line=2, max_word_length=20, filter_javascript=False))],
    "c4-loose": [("c4", dict(filter_no_terminal_punct=False, min_num_sentences=-1, max_word_length=-1,
                             filter_lorem_ipsum=False, filter_curly_bracket=False, filter_policy=False))],
    "fw-custom": [("fineweb", dict(line_punct_thr=0.2, line_punct_exclude_zero=True, short_line_length=10,
                                   short_line_thr=0.5, char_duplicates_ratio=0.05, new_line_ratio=0.2,
                                   stop_chars=(".", "!", "…")))],
}

# --- documents ------------------------------------------------------------------

WORDS = ("time person year way day thing man world life hand part child eye woman place work week case point "
         "government company number group problem fact river city history house water music system program "
         "question school family student country story money night book word business issue side kind head "
         "service friend power hour game line end member law car market name team minute idea body information "
         "back parent face others level office door health art war party result change morning reason research "
         "girl guy moment air teacher force education").split()
VERBS = "is was has made said goes took saw came knows thinks looks wants gives uses finds tells asks seems feels tries leaves calls".split()
ADJ = "good new first last long great little own other old right big high different small large next early young important few public bad same able".split()
STOP = ["the", "be", "to", "of", "and", "that", "have", "with", "The", "THE", "tHe", "And", "AND", "Of", "OF",
        "To", "That", "With", "Have", "Be"]
FUNC = ["a", "an", "in", "on", "for", "at", "by", "from", "as", "it", "this", "or", "but", "not", "we", "you", "they"]
ABBR = ["Mr.", "Dr.", "e.g.", "i.e.", "U.S.", "etc.", "vs.", "No.", "St.", "Jan.", "a.m.", "Inc."]
CONTR = ["don't", "can't", "won't", "it's", "I'm", "they're", "we'll", "you've", "shouldn't", "ain't", "y'all", "o'clock"]
ENDS = [".", ".", ".", "!", "?", '"', "'", '."', ".'", ".)", ".]", ".”", ".’", "?”", "!»", ".»", ":", ";", ",", "",
        "...", "…", "....", "..", ". . .", "!?", "?!", ". ", ".\t", ".\u00a0", "。", "।", "!!", "?)", ".}", "\\.",
        ". [1]", ". [edit]", ".[1]", "[1].", " [citation needed].", "-", "—", "*", "#", ")"]
SCRIPTS = ["中文句子。另一个句子！第三个？", "日本語の文章です。これはテスト。", "한국어 문장입니다. 또 하나!",
           "Привет, мир. Как дела? Всё хорошо!", "مرحبا بالعالم. كيف حالك؟", "नमस्ते दुनिया। यह एक वाक्य है।",
           "שלום עולם. מה שלומך?", "Γειά σου κόσμε. Τι κάνεις;", "สวัสดีชาวโลก นี่คือประโยค", "ⴰⵣⵓⵍ ⴰⴷⵓⵏⵉⵢ.",
           "Ẹ kú àárọ̀. Ṣé dáadáa ni?", "e\u0301te\u0301 cafe\u0301 nai\u0308ve.", "Ａｂｃ ｄｅｆ．", "İstanbul'da ıslak.",
           "Straße groß. ǅemal ǈ.", "١٢٣ ٤٥٦ ٧٨٩.", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕥𝕖𝕩𝕥.", "ꓲ ꓡꓳꓦꓱ."]
EMOJI = ["😀", "👍🏽", "👨‍👩‍👧‍👦", "🇫🇷", "❤️", "🤖", "✨", "🔥🔥", "☕", "🏳️‍🌈", "1️⃣", "©", "™", "→", "±", "°", "€", "£"]
SPACES = ["\u00a0", "\u2028", "\u2029", "\r\n", "\r", "\t", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85",
          "\u3000", "\u2003", "\u2009", "\u200b", "\ufeff", "\u1680", "\u180e", "\u202f", "\u205f", "  ", " \n", "\n ",
          "\n\n", "\n\n\n", "\t\n", "\r\r\n", "\n\r"]
CONTROLS = ["\x00", "\x01", "\x07", "\x08", "\x7f", "\x80", "\x9f", "\u00ad", "\u200d", "\u2060", "\ufffd", "\U000e0001"]
BOILER = ["This site uses cookies to improve your experience.", "Please enable JavaScript to view the comments.",
          "Please enable Javascript.", "Read our Terms of Use and Privacy Policy.", "See our cookie policy.",
          "We use cookies on this site.", "By continuing you agree to our use of cookies.", "Websites use cookies often.",
          "We use coo\u212aies on this site, as you know.", "PR\u0130VACY POLICY applies to you all.",
          "Our TERMS OF USE changed today.", "Lorem ipsum dolor sit amet, consectetur adipiscing elit.",
          "LOREM IPSUM is placeholder text.", "lorem  ipsum is not the same.", "lorem\u00a0ipsum with a space.",
          "This is java script, not the other one.", "function f() { return 1; }", "var x = {a: 1};",
          "Use } alone here now.", "Copyright 2024. All rights reserved.", "Click here", "Home | About | Contact",
          "Share this:", "Read more...", "Posted on 12 March 2021 …", "Loading…", "Subscribe to our newsletter!",
          "Hello?", "\"Quoted line.\"", "'Single quoted line.'", "Ends with ellipsis ...", "Mixed ending !?",
          "Skip to main content", "Privacy policy", "All rights reserved.", "Terms of use apply to this page."]
CITES = ["[1]", "[12]", "[]", "[edit]", "[citation needed]", "[١٢]", "[१]", "[1a]", "[ 1]", "[Edit]", "[3][4]",
         "[[1]]", "[citation needed][1]", "[edit]]", "[1", "1]", "[٣]"]
URLS = ["http://example.com/a?b=c&d=e", "https://www.foo.org/path/to/page.html", "www.bar.net", "foo@example.com",
        "ftp://x.y/z", "example.com", "https://t.co/AbC123.", "<a href=\"x\">link</a>", "C:\\Users\\x"]
SYMS = ["#", "#tag", "#hashtag #another", "@user", "$100", "100%", "&", "*", "**bold**", "__init__", "->", "=>",
        "::", "|", "~", "^", "`code`", "<br>", "&amp;", "#!/bin/sh", "##", "###", "#1", "C#", "F#"]
NUMS = ["1", "42", "3.14", "1,234.56", "-5", "1e10", "2024", "12:30", "50%", "1st", "2nd", "3rd", "0x1F", "½", "Ⅻ",
        "٣", "१२", "１２３"]


class Gen:
    def __init__(self, seed, is_alpha=False):
        self.r = random.Random(seed)
        self.is_alpha = is_alpha
        lic = []
        for f in ["GPL-3", "Apache-2.0", "MPL-2.0", "Artistic"]:
            p = "/usr/share/common-licenses/" + f
            if os.path.exists(p):
                txt = open(p, encoding="utf-8").read()
                lic += [" ".join(s.split()) + "." for s in txt.split(". ") if 3 <= len(s.split()) <= 40]
        self.lic = lic

    def word(self):
        r = self.r
        x = r.random()
        if x < 0.45:
            return r.choice(WORDS)
        if x < 0.6:
            return r.choice(STOP)
        if x < 0.7:
            return r.choice(FUNC)
        if x < 0.78:
            return r.choice(VERBS)
        if x < 0.84:
            return r.choice(ADJ)
        if x < 0.87:
            return r.choice(ABBR)
        if x < 0.9:
            return r.choice(CONTR)
        if x < 0.92:
            return r.choice(NUMS)
        if x < 0.935:
            return r.choice(SYMS)
        if x < 0.945:
            return r.choice(URLS)
        if x < 0.955:
            return r.choice(EMOJI)
        if x < 0.965:
            return "x" * r.choice([1, 2, 9, 10, 11, 19, 20, 21, 22])
        if x < 0.97:
            return r.choice("abcdefghijk") * r.choice([999, 1000, 1001, 1002])
        if x < 0.975 and self.is_alpha:
            return r.choice(["IS_ALPHA", "IS_ALPHA.", "xIS_ALPHA", "IS_ALPHAIS_ALPHA"])
        if x < 0.985:
            return r.choice(WORDS).upper()
        return r.choice(WORDS) + r.choice(["-", "'", "’", "/", "_", "."]) + r.choice(WORDS)

    def sentence(self):
        r = self.r
        if self.lic and r.random() < 0.25:
            return r.choice(self.lic)
        n = r.choice([1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 30])
        ws = [self.word() for _ in range(n)]
        if r.random() < 0.5:
            ws[0] = ws[0][:1].upper() + ws[0][1:]
        s = " ".join(ws)
        if r.random() < 0.1:
            i = r.randrange(len(s) + 1)
            s = s[:i] + r.choice(CITES) + s[i:]
        return s + (r.choice(ENDS) if r.random() < 0.4 else ".")

    def line(self):
        r = self.r
        x = r.random()
        if x < 0.45:
            return " ".join(self.sentence() for _ in range(r.choice([1, 1, 2, 3, 5])))
        if x < 0.55:
            return r.choice(["- ", "• ", "* ", "  - ", "\t• ", "1. ", "-", "•", "‣ ", "– ", "—"]) + self.sentence()
        if x < 0.6:
            return r.choice(["...", "…", ". . .", "....", "… …", "Read more...", "and so on…", "..."]) \
                + r.choice(["", " ", "\t", "\u00a0"])
        if x < 0.68:
            return r.choice(BOILER)
        if x < 0.73:
            return r.choice(SCRIPTS)
        if x < 0.76:
            return " ".join(r.choice(EMOJI + SYMS + NUMS) for _ in range(r.randint(1, 8)))
        if x < 0.8:
            return r.choice(URLS + SYMS + NUMS + CONTR + ABBR)
        if x < 0.84:
            return self.sentence()[:-1] + r.choice(CITES) + r.choice(["", ".", " .", "!"])
        if x < 0.87:
            return r.choice(["{", "}", "{}", "if (x) {", "  return 0;", "}", "<div>", "</div>", "#include <stdio.h>",
                             "int main() {", "    x = y;", "// comment.", "/* c */"])
        if x < 0.9:
            return ""
        if x < 0.93:
            return r.choice(SPACES) * r.randint(1, 3)
        if x < 0.96:
            return " ".join(self.word() for _ in range(r.randint(1, 6)))
        return self.sentence() + r.choice(SPACES + CONTROLS)

    def soup(self):
        """Character soup: the tokenizer's prefixes, suffixes, infixes, URLs and exceptions."""
        r = self.r
        pool = (list("abcXYZ019.,;:!?'\"()[]{}<>-_/\\@#$%^&*+=~`|") + ["'s", "n't", "'ll", "’", "“", "”", "«", "»",
                "–", "—", "…", "...", "..", "--", "́", "̈", "é", "ß", "İ", "ı", "K", "K", "中", "日本",
                "ا", "ह", "Ж", "ω", "١", "½", "²", "°", "€", "£", "¥", "©", "®", "™", "§", "¶", "•", "·"]
                + SPACES + CONTROLS + EMOJI + URLS[:3] + ABBR[:4] + CONTR[:4] + [" "] * 12)
        if self.is_alpha:
            pool.append("IS_ALPHA")
        return "".join(r.choice(pool) for _ in range(r.randint(1, r.choice([20, 100, 400]))))

    def doc(self):
        r = self.r
        x = r.random()
        if x < 0.08:
            return self.soup()
        if x < 0.12:
            return " ".join(self.soup() if r.random() < 0.3 else self.sentence() for _ in range(r.randint(5, 60)))
        if x < 0.17:  # tiny documents
            return r.choice(["", " ", "\n", "\n\n", "\t", "\u00a0", "\u2028", "\r\n", ".", "...", "…", "#", "{", "word",
                             "The.", "the and", "x", "\x00", "1", "😀", "[1]", "[edit]", "lorem ipsum", "javascript",
                             "a b c.", "a b c.\x00", "One two three. Four five six.", " \n \n", "\r", "\x85", "\x1c",
                             self.word(), self.sentence(), r.choice(SCRIPTS), r.choice(SPACES) * 3])
        nlines = r.choice([1, 2, 3, 5, 8, 10, 15, 20, 30, 50])
        lines = [self.line() for _ in range(nlines)]
        # repetition: lines, blocks, n-grams
        y = r.random()
        if y < 0.15 and lines:
            for _ in range(r.randint(1, 6)):
                lines.insert(r.randrange(len(lines) + 1), r.choice(lines))
        elif y < 0.25 and len(lines) > 1:
            k = r.randint(1, len(lines))
            lines += lines[:k] * r.randint(1, 2)
        elif y < 0.32:
            ng = " ".join(self.word() for _ in range(r.randint(2, 10)))
            lines.append(" ".join([ng] * r.randint(2, 8)) + ".")
        sep = r.choice(["\n"] * 6 + ["\n\n"] * 3 + [" ", "\r\n", "\n\n\n", "\u2028", "\n \n", "\n\t\n", r.choice(SPACES)])
        if r.random() < 0.3:  # mixed separators
            text = "".join(l + (sep if r.random() < 0.7 else r.choice(["\n", "\n\n", " ", r.choice(SPACES)]))
                           for l in lines)
            if r.random() < 0.5:
                text = text[:-1]
        else:
            text = sep.join(lines)
        z = r.random()
        if z < 0.1:  # spaces, controls sprinkled in
            for _ in range(r.randint(1, 5)):
                i = r.randrange(len(text) + 1)
                text = text[:i] + r.choice(SPACES + CONTROLS) + text[i:]
        elif z < 0.15:
            text = r.choice(SPACES) + text + r.choice(SPACES)
        elif z < 0.2:
            text = text.replace(" ", r.choice(["\u00a0", "\t", "  ", "\u3000"]), r.randint(1, 5))
        if r.random() < 0.1:
            text = text[:r.choice([50, 200, 500, 1000, 3000])]
        return text


# --- datatrove -----------------------------------------------------------------


class Datatrove:
    def __init__(self):
        # as make_rules_fixtures.py: spaCy fails on "IS_ALPHA" every time but the first
        load_word_tokenizer("en").word_tokenize("IS_ALPHA")
        self.cache = {}

    def run(self, config, text):
        """(keep, rule, reason, text). keep None: datatrove raised (reason: the exception)."""
        steps = CONFIGS[config]
        for rname, kw in steps:
            key = (rname, repr(sorted(kw.items())), text)
            if key not in self.cache:
                flt = ORDER[rname](**kw)
                doc = Document(text=text, id="x")
                try:
                    res = flt.filter(doc)
                    ok, why = res if isinstance(res, tuple) else (res, None)
                except Exception as e:  # noqa: BLE001
                    ok, why = None, "raises %s: %s" % (type(e).__name__, e)
                self.cache[key] = (ok, why, doc.text)
            ok, why, new = self.cache[key]
            if ok is None:
                return (None, rname, why, None)
            if not ok:
                return (False, rname, why, None)
            text = new
        return (True, None, None, text)


# --- sluice ---------------------------------------------------------------------


def run_sluice(sluice, args, texts, work, tag):
    corpus = os.path.join(work, "in-%s.jsonl" % tag)
    out = os.path.join(work, "out-%s.jsonl" % tag)
    rej = os.path.join(work, "rej-%s.jsonl" % tag)
    with open(corpus, "w", encoding="utf-8") as f:
        for i, t in enumerate(texts):
            f.write(json.dumps({"id": "d%d" % i, "text": t}, ensure_ascii=False) + "\n")
    p = subprocess.run(["nice", sluice, "filter", "-q", "-@", "1"] + args + [corpus, "-o", out, "--rejected", rej],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("sluice failed (%d): %s" % (p.returncode, p.stderr[-2000:]))
    res = {}
    with open(out, encoding="utf-8") as f:
        for l in f:
            d = json.loads(l)
            res[d["id"]] = (True, None, None, d.get("text"))
    with open(rej, encoding="utf-8") as f:
        for l in f:
            d = json.loads(l)
            res[d["id"]] = (False, d["rule"], d["reason"], None)
    return [res.get("d%d" % i, ("missing", None, None, None)) for i in range(len(texts))]


def klass(dt, sl):
    """None when they agree; else a short key of the kind of difference."""
    if dt[0] is None:
        return ("datatrove raises", dt[1], dt[2].split(":")[0])
    if dt[:3] == sl[:3] and (not dt[0] or dt[3] == sl[3]):
        return None
    if dt[0] and sl[0]:
        return ("text", None, None)
    return ("decision", "%s/%s" % (dt[1], dt[2]) if not dt[0] else "kept",
            "%s/%s" % (sl[1], sl[2]) if sl[0] is False else "kept" if sl[0] else sl[0])


def fmt(r):
    if r[0] is True:
        return "keep, text %r" % (r[3][:300],)
    if r[0] is None:
        return "RAISES in %s: %s" % (r[1], r[2])
    return "drop %s/%s" % (r[1], r[2]) if r[0] is False else str(r[0])


def fixture_signals():
    """gq_signals, gr_signals, c4_signals, fw_signals of make_rules_fixtures.py
    (its function definitions only: the module itself writes the fixtures)."""
    import ast
    src = open(os.path.join(here, "make_rules_fixtures.py"), encoding="utf-8").read()
    tree = ast.parse(src)
    keep = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))
            or (isinstance(n, ast.FunctionDef) and n.name in ("ratio", "gq_signals", "gr_signals", "c4_signals",
                                                               "fw_signals"))]
    ns = {}
    exec(compile(ast.Module(body=keep, type_ignores=[]), "make_rules_fixtures.py", "exec"), ns)
    return [ns[f] for f in ("gq_signals", "gr_signals", "c4_signals", "fw_signals")]


def compare_signals(sluice, texts, work, show):
    ann = os.path.join(work, "annotated.jsonl")
    corpus = os.path.join(work, "in-signals.jsonl")
    with open(corpus, "w", encoding="utf-8") as f:
        for i, t in enumerate(texts):
            f.write(json.dumps({"id": "d%d" % i, "text": t}, ensure_ascii=False) + "\n")
    subprocess.run(["nice", sluice, "filter", "-q", "-@", "1", "--rules", "gopher-quality,gopher-repetition,c4,fineweb",
                    "--annotate", corpus, "-o", ann], check=True)
    got = {}
    with open(ann, encoding="utf-8") as f:
        for l in f:
            d = json.loads(l)
            got[d["id"]] = d
    fns = fixture_signals()
    bad = collections.defaultdict(list)
    for i, t in enumerate(texts):
        g = got.get("d%d" % i, {})
        for fn in fns:
            try:
                want = fn(t)
            except Exception:  # noqa: BLE001  (datatrove's helpers raise: nothing to compare)
                continue
            for k, v in want.items():
                b = g.get(k, "<absent>")
                if isinstance(v, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
                    ok = abs(v - b) <= 1e-9 * max(1.0, abs(v))
                else:
                    ok = v == b
                if not ok:
                    bad[k].append((i, v, b))
    print("signals: %d documents, %s" % (len(texts), "all equal" if not bad else "%d signals differ" % len(bad)))
    for k, v in bad.items():
        print("  %s: %d documents" % (k, len(v)))
        for i, x, y in v[:show]:
            print("    d%d %r: datatrove %r, sluice %r" % (i, texts[i][:300], x, y))
    return sum(len(v) for v in bad.values())


def first_diff(a, b):
    """Where two texts part, with some context of each."""
    i = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
    return "texts differ at %d (lengths %d, %d): datatrove %r, sluice %r" % (
        i, len(a), len(b), a[max(0, i - 40):i + 40], b[max(0, i - 40):i + 40])


def minimize(dt, sluice, config, args, text, want, work, budget=60):
    """Greedy delta debugging on code points: remove chunks (halving) while
    the difference stays of class `want`."""
    rounds = 0
    chunk = max(1, len(text) // 2)
    while chunk >= 1 and rounds < budget and text:
        cands = []
        seen = set()
        for i in range(0, len(text), chunk):
            c = text[:i] + text[i + chunk:]
            if c not in seen:
                seen.add(c)
                cands.append(c)
        sls = run_sluice(sluice, args, cands, work, "min")
        rounds += 1
        for c, sl in zip(cands, sls):
            if klass(dt.run(config, c), sl) == want:
                text = c
                chunk = min(chunk, max(1, len(text) // 2))
                break
        else:
            if chunk == 1:
                break
            chunk //= 2
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--configs", default=None)
    ap.add_argument("--sluice", default=os.path.join(root, "build", "sluice"))
    ap.add_argument("--work", default=None)
    ap.add_argument("--show", type=int, default=3)
    ap.add_argument("--minimize", action="store_true")
    ap.add_argument("--is-alpha", action="store_true")
    ap.add_argument("--no-nul", action="store_true", help="remove NUL from the documents")
    ap.add_argument("--signals", action="store_true",
                    help="also compare --annotate's signals with make_rules_fixtures.py's restatement")
    a = ap.parse_args()

    cfg_args = json.load(open(os.path.join(here, "configs.json"), encoding="utf-8"))
    names = a.configs.split(",") if a.configs else list(CONFIGS)
    for nm in names:
        if nm not in CONFIGS or nm not in cfg_args:
            sys.exit("unknown config %r (there are: %s)" % (nm, ", ".join(CONFIGS)))
        if [r for r, _ in CONFIGS[nm]] != cfg_args[nm][1].split(","):
            sys.exit("%s: configs.json's --rules differ from this script's CONFIGS" % nm)
    work = a.work or tempfile.mkdtemp(prefix="diff-rules-")
    os.makedirs(work, exist_ok=True)
    g = Gen(a.seed, a.is_alpha)
    texts = [g.doc() for _ in range(a.n)]
    if a.no_nul:
        texts = [t.replace("\x00", "") for t in texts]
    print("seed %d: %d documents (%d chars), work %s" % (a.seed, len(texts), sum(map(len, texts)), work))
    dt = Datatrove()
    total_bad = 0
    disc = open(os.path.join(work, "discrepancies.jsonl"), "w", encoding="utf-8")
    classes = collections.OrderedDict()
    for nm in names:
        t0 = time.time()
        sls = run_sluice(a.sluice, cfg_args[nm], texts, work, nm)
        dts = [dt.run(nm, t) for t in texts]
        agree, raises, bad = 0, 0, []
        kept = sum(1 for d in dts if d[0])
        for i, (d, s) in enumerate(zip(dts, sls)):
            k = klass(d, s)
            if k is None:
                agree += 1
            elif k[0] == "datatrove raises":
                raises += 1
                classes.setdefault((nm,) + k, []).append(i)
            else:
                bad.append(i)
                classes.setdefault((nm,) + k, []).append(i)
                disc.write(json.dumps({"config": nm, "class": list(k), "text": texts[i], "datatrove": list(d),
                                       "sluice": list(s)}, ensure_ascii=False) + "\n")
        total_bad += len(bad)
        print("%-18s agree %d/%d (datatrove keeps %d)%s%s  [%.0fs]" % (
            nm, agree, len(texts), kept, ", datatrove raises on %d" % raises if raises else "",
            ", DIFFER %d" % len(bad) if bad else "", time.time() - t0))
        for i in bad[:a.show]:
            print("  d%d %r" % (i, texts[i][:400] + ("..." if len(texts[i]) > 400 else "")))
            print("    datatrove: %s" % fmt(dts[i]))
            print("    sluice:    %s" % fmt(sls[i]))
            if dts[i][0] and sls[i][0] is True:
                print("    %s" % first_diff(dts[i][3], sls[i][3]))
    disc.close()
    if classes:
        print("\nclasses (config, kind, datatrove, sluice): count")
        for k, v in classes.items():
            print("  %s: %d" % (" | ".join(str(x) for x in k), len(v)))
            if a.minimize and k[1] != "datatrove raises":
                nm = k[0]
                m = minimize(dt, a.sluice, nm, cfg_args[nm], texts[v[0]], k[1:], work)
                print("    minimal: %r" % m)
                print("      datatrove: %s" % fmt(dt.run(nm, m)))
                print("      sluice:    %s" % fmt(run_sluice(a.sluice, cfg_args[nm], [m], work, "min")[0]))
    if a.signals:
        total_bad += compare_signals(a.sluice, texts, work, a.show)
    print("total differing: %d" % total_bad)
    return 1 if total_bad else 0


if __name__ == "__main__":
    sys.exit(main())

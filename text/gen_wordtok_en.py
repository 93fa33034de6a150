#!/usr/bin/env python3
"""Writes text/wordtok_en_tables.h: the rule tables of spaCy's English
tokenizer as `spacy.blank("en")` builds it (what datatrove 0.10.1's
load_word_tokenizer("en") runs), for text/wordtok.c:

  the prefix, suffix and infix regexes and the URL match, translated from
  Python `re` syntax to PCRE2 (\\uXXXX -> \\x{XXXX}; \\w \\d \\s \\S -> the
  explicit classes Python's re gives them, computed here code point by code
  point and spliced in where the patterns say \\001w, \\001d, \\001s, so
  PCRE2's own Unicode classes play no part);
  the suffix pattern also in two parts (split_suffix): its one-character
  entries as a table of code point ranges and the rest as a pattern, with
  the ASCII bytes every match of the rest needs (trigger_bytes);
  the tokenizer exceptions (special cases): string -> its tokens;
  the special cases spaCy also matches after splitting (its PhraseMatcher
  step, for exceptions that contain a prefix, suffix or infix): the tokens
  the affix rules give them.

The data comes from spaCy (MIT License, Copyright (C) 2016-2024 ExplosionAI
GmbH, 2016 spaCy GmbH, 2015 Matthew Honnibal): spacy/lang/punctuation.py,
spacy/lang/char_classes.py, spacy/lang/tokenizer_exceptions.py,
spacy/lang/en/tokenizer_exceptions.py.

  /work/venv-h32/bin/python text/gen_wordtok_en.py > text/wordtok_en_tables.h
  make format FILES=text/wordtok_en_tables.h"""
import random
import re
import re._constants as C
import re._parser as re_parser
import sys

import spacy
from spacy.tokenizer import Tokenizer

nlp = spacy.blank("en")
tok = nlp.tokenizer
assert tok.token_match is None and tok.faster_heuristics


def code_point_ranges(rx):
    """Ranges of the code points (surrogates left out) that rx matches whole."""
    out, start = [], None
    for c in range(0x110001):
        ok = c < 0x110000 and not (0xD800 <= c <= 0xDFFF) and rx.fullmatch(chr(c)) is not None
        if ok and start is None:
            start = c
        elif not ok and start is not None:
            out.append((start, c - 1))
            start = None
    return out


def py_class(esc):
    """Ranges of the code points Python's re matches with \\w, \\d, \\s."""
    out = code_point_ranges(re.compile("\\" + esc))
    return "".join("\\x{%X}" % a if a == b else "\\x{%X}-\\x{%X}" % (a, b) for a, b in out)


CLASSES = {k: py_class(k) for k in "wds"}


def lit(c):
    o = ord(c)
    if o < 0x80 and (c.isalnum() or c in "_"):
        return c
    if o < 0x80 and 0x20 < o < 0x7F:
        return "\\" + c if not c.isalnum() else c
    return "\\x{%X}" % o


def translate(p):
    out, i, in_class = [], 0, False
    while i < len(p):
        c = p[i]
        if c == "\\":
            n = p[i + 1]
            if n == "u":
                out.append("\\x{%s}" % p[i + 2 : i + 6])
                i += 6
                continue
            if n == "U":
                out.append("\\x{%X}" % int(p[i + 2 : i + 10], 16))
                i += 10
                continue
            if n in "wds":  # \001 + letter: the class's ranges, put in by text/wordtok.c
                out.append("\001" + n if in_class else "[\001" + n + "]")
            elif n == "S":
                assert not in_class
                out.append("[^\001s]")
            elif n in "WD":
                raise SystemExit(f"unhandled \\{n}")
            elif n.isalnum():
                raise SystemExit(f"unhandled escape \\{n}")
            else:
                out.append(lit(n))
            i += 2
            continue
        if in_class:
            if c == "]" and out[-1] != "[" and out[-1] != "[^":
                in_class = False
                out.append("]")
            elif c == "[":
                out.append("\\[")
            elif ord(c) >= 0x80:
                out.append(lit(c))
            else:
                out.append(c)
        else:
            if c == "[":
                in_class = True
                if p[i + 1] == "^":
                    out.append("[^")
                    i += 2
                    continue
                out.append("[")
            elif ord(c) >= 0x80:
                out.append(lit(c))
            else:
                out.append(c)
        i += 1
    s = "".join(out)
    assert s.startswith("(?u)") or "(?" not in s[:4]
    return s.removeprefix("(?u)")


def cstr(s):
    out = []
    for ch in s.encode("utf-8"):
        c = chr(ch)
        if c in '"\\':
            out.append("\\" + c)
        elif 0x20 <= ch < 0x7F:
            out.append(c)
        else:
            out.append("\\%03o" % ch)
    return '"' + "".join(out) + '"'


def emit_pattern(name, p, raw=False):
    print(f"static const char {name}[] =")
    t = p if raw else translate(p)
    for i in range(0, len(t), 100):
        piece = t[i : i + 100]
        # do not cut an escape in two
        print("    " + cstr(piece))
    print(";")


# ---- the suffix pattern in two parts ---------------------------------------
# spaCy's suffix pattern is "|".join(entry + "$"). Every alternative ends at
# the end of the span, so a search returns the leftmost start at which any
# of them matches, whichever it is. The entries that match exactly one
# character and look at nothing around it (punctuation, quotes, the icons'
# large class: 70 of 82) can only start at the last character, so they
# become a table of code points to test that character against, and the
# search runs the other entries only. (Matching one character before a
# final newline, as $ allows, would need a white-space character there, and
# none is in the table; sluice's spans never mix white space and the rest.)
# wordtok.c takes the leftmost of the two starts; split_suffix checks, on
# random strings, that this is where Python's search of the whole pattern
# starts.

def one_char(entry):
    items = list(re_parser.parse(entry))
    return len(items) == 1 and items[0][0] in (C.LITERAL, C.IN) and re_parser.parse(entry).getwidth() == (1, 1)


def split_suffix():
    entries = [e for e in nlp.Defaults.suffixes if e.strip()]
    assert "|".join(e + "$" for e in entries) == tok.suffix_search.__self__.pattern
    one = [e for e in entries if one_char(e)]
    rest = [e for e in entries if not one_char(e)]
    one_rx = re.compile("(?:" + "|".join(one) + ")")
    ranges = code_point_ranges(one_rx)
    assert not any(chr(c).isspace() or re.match(r"\s", chr(c)) for a, b in ranges for c in range(a, b + 1))
    rest_pat = "|".join(e + "$" for e in rest)
    rest_needs = trigger_bytes(rest_pat)
    # the check: the leftmost of the two starts is the whole pattern's
    full, rest_rx = re.compile(tok.suffix_search.__self__.pattern), re.compile(rest_pat)
    pool = [chr(a) for a, b in ranges[:40]] + [chr(b) for a, b in ranges[-40:]]
    pool += list("aZz09.'sS+$%km/h\u00b0FC\u2026\u2019\u00b2-_\"") + ["US$", "km", "mph", "..."]
    rng = random.Random(1)
    for _ in range(200000):
        t = "".join(rng.choice(pool) for _ in range(rng.randint(1, 8)))
        m = full.search(t)
        start = len(t)
        if one_rx.fullmatch(t[-1]):
            start = len(t) - 1
        r = rest_rx.search(t)
        assert not r or not t.isascii() or any(ord(x) in rest_needs for x in t), t
        if r and r.start() < start:
            start = r.start()
        assert (m.start() if m else len(t)) == start, (t, m, start)
    return ranges, rest_pat, rest_needs


# ---- the ASCII bytes a pattern's matches need ------------------------------
# A set T of ASCII bytes such that every match needs one of them somewhere
# in the subject (in lookbehinds and lookaheads too): in each alternative,
# an item the match cannot skip (a literal, a class, a repeat of at least
# one, a group, a lookaround) and the ASCII bytes it can match; T is the
# union over the alternatives of the smallest such set. An item that only
# matches non-ASCII characters adds nothing (a subject of ASCII bytes cannot
# match it). Anything this does not understand gives all 128 bytes. A
# subject of ASCII bytes none of which is in T cannot match.

CATEGORY_BYTES = {C.CATEGORY_DIGIT: r"\d", C.CATEGORY_WORD: r"\w", C.CATEGORY_SPACE: r"\s",
                  C.CATEGORY_NOT_SPACE: r"\S"}


def ascii_set(op, av):
    if op is C.LITERAL:
        return {av} if av < 128 else set()
    if op is C.NOT_LITERAL:
        return set(range(128)) - {av}
    if op is C.ANY:
        return set(range(128))
    if op is C.IN:
        got, neg = set(), False
        for o, a in av:
            if o is C.NEGATE:
                neg = True
            elif o is C.LITERAL:
                got |= {a} if a < 128 else set()
            elif o is C.RANGE:
                got |= set(range(a[0], min(a[1], 127) + 1))
            elif o is C.CATEGORY and a in CATEGORY_BYTES:
                got |= {c for c in range(128) if re.match(CATEGORY_BYTES[a], chr(c))}
            else:
                return None
        return set(range(128)) - got if neg else got
    return None


def needed(seq):
    best = None
    for op, av in seq:
        got = None
        if op in (C.LITERAL, C.NOT_LITERAL, C.IN, C.ANY):
            got = ascii_set(op, av)
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT) and av[0] >= 1:
            got = needed(list(av[2]))
        elif op is C.SUBPATTERN:
            if av[1] & re.IGNORECASE:
                return None
            got = needed(list(av[3]))
        elif op is C.BRANCH:
            parts = [needed(list(b)) for b in av[1]]
            got = None if any(x is None for x in parts) else set().union(*parts)
        elif op is C.ASSERT:
            got = needed(list(av[1]))
        if got is not None:
            key = (sum(chr(c).isalnum() for c in got), len(got))
            if best is None or key < (sum(chr(c).isalnum() for c in best), len(best)):
                best = got
    return best


def trigger_bytes(pattern):
    top = list(re_parser.parse(pattern))
    alts = [list(b) for b in top[0][1][1]] if len(top) == 1 and top[0][0] is C.BRANCH else [top]
    found = set()
    for a in alts:
        got = needed(a)
        if got is None:
            return set(range(128))
        found |= got
    return found


def orth(d):
    for k, v in d.items():
        if k == 65 or k == "ORTH":
            return v
    raise KeyError(d)


plain = Tokenizer(nlp.vocab, rules={}, prefix_search=tok.prefix_search, suffix_search=tok.suffix_search,
                  infix_finditer=tok.infix_finditer, url_match=tok.url_match)

print("/* Generated by text/gen_wordtok_en.py from spaCy " + spacy.__version__ + " (MIT License,")
print(" * Copyright (C) 2016-2024 ExplosionAI GmbH, 2016 spaCy GmbH, 2015 Matthew Honnibal):")
print(" * spacy.blank(\"en\")'s tokenizer rules. Do not edit. */")
print("#ifndef SLUICE_TEXT_WORDTOK_EN_TABLES_H\n#define SLUICE_TEXT_WORDTOK_EN_TABLES_H\n")
print(f'#define SL_WT_SPACY_VERSION "{spacy.__version__}"\n')
for k in "wds":
    print(f"/* Python re's \\{k} (in the patterns: \\001{k}) */")
    emit_pattern(f"wt_class_{k}", CLASSES[k], raw=True)
emit_pattern("wt_en_prefix", tok.prefix_search.__self__.pattern)
SUFFIX_ONE, SUFFIX_REST, T = split_suffix()
emit_pattern("wt_en_suffix_rest", SUFFIX_REST)
words = [sum(1 << (c - 64 * k) for c in T if 64 * k <= c < 64 * (k + 1)) for k in range(2)]
print("/* the ASCII bytes of which every match of wt_en_suffix_rest needs one (trigger_bytes):")
print(" * " + "".join(chr(c) for c in sorted(T)).replace("*/", "* /") + " */")
print(f"static const uint64_t wt_en_suffix_rest_needs[2] = {{0x{words[0]:016x}u, 0x{words[1]:016x}u}};")
print("/* the suffix entries of one character, as code point ranges (split_suffix) */")
print("static const uint32_t wt_en_suffix_one[][2] = {")
for a, b in SUFFIX_ONE:
    print(f"    {{0x{a:X}, 0x{b:X}}},")
print("};")
emit_pattern("wt_en_infix", tok.infix_finditer.__self__.pattern)
emit_pattern("wt_en_url", tok.url_match.__self__.pattern)
print()
print("/* exceptions: the string, then its tokens, each ended by \\037 */")
print("static const char *const wt_en_special[][2] = {")
rules = sorted(tok.rules.items())
for s, subs in rules:
    parts = [orth(d) for d in subs]
    assert "".join(parts) == s and all("\x1f" not in x for x in parts)
    print(f"    {{{cstr(s)}, {cstr(''.join(x + chr(31) for x in parts))}}},")
print("};")
print()
print("/* matched after splitting: the tokens the affix rules give an exception, each ended by \\037 */")
print("static const char *const wt_en_matcher[][1] = {")
n = 0
for s, subs in rules:
    if not (tok.find_prefix(s) or tok.find_infix(s) or tok.find_suffix(s) or " " in s):
        continue
    # every one counts, also those that give the same tokens: a longer
    # match keeps a shorter one from applying
    pat = [t.text for t in plain(s)]
    print(f"    {{{cstr(''.join(x + chr(31) for x in pat))}}},")
    n += 1
print("};\n\n#endif")
print(f"{len(rules)} exceptions, {n} matcher patterns", file=sys.stderr)

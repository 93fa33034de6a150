#!/usr/bin/env python3
"""Builds tests/data/tok/expected-single-word.jsonl: Hugging Face tokenizers'
ids for texts that put an added token with `single_word`, `lstrip` or
`rstrip` next to characters of every kind HF's tests for those flags look at
(the Rust regex classes \\w and \\s, Unicode 16.0 in tokenizers 0.23.3):
letters, marks, digits, connector punctuation and join controls, among them
characters first assigned in Unicode 14.0, 15.0 and 16.0 (which a system
ICU of an older Unicode version does not know), and white space of every
kind. One line per (file, text):
    {"file": "norm/bl-precomp.json", "text": ..., "parse": [...], "plain": [...]}
with HF encode(text, add_special_tokens=False) ids, special tokens parsed
("parse") and with encode_special_tokens=True ("plain").

    V/bin/python tests/data/tok/make_single_word.py
(V: a venv with tokenizers==0.23.3 from PyPI.)"""
import json
import os

from tokenizers import Tokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.normpath(os.path.join(HERE, ".."))

# every tokenizer.json fixture with an added token that sets single_word, lstrip or rstrip
FILES = ["bpe/tiny-tokenizer.json", "bpepipe/ws.json", "norm/bl-precomp.json", "norm/sp-lower.json",
         "norm/sp-precomp.json", "norm/uni-bert.json", "norm/uni-nfkd.json", "spm/uni-t5.json",
         "tok/unk-nofuse.json", "tok/unk-small.json", "tok/v1-small-norm.json", "tok/wordlevel-b.json"]

# (code point, what it is)
PROBES = [
    (0x61, "ASCII letter"), (0x37, "ASCII digit"), (0x5F, "low line, Pc"), (0x2D, "hyphen, Pd"),
    (0x20, "space"), (0x2E, "full stop"), (0xE9, "Latin letter"), (0x301, "combining acute, Mn"),
    (0x488, "combining hundred thousands, Me"), (0x903, "Devanagari visarga, Mc"), (0x660, "Arabic-Indic zero, Nd"),
    (0xB2, "superscript two, No"), (0x2167, "Roman numeral eight, Nl"), (0x203F, "undertie, Pc"),
    (0x200C, "zero width non-joiner, Join_Control"), (0x200D, "zero width joiner, Join_Control"),
    (0x200B, "zero width space"), (0x2160, "Roman numeral one, Nl alphabetic"), (0x24B6, "circled A, So alphabetic"),
    (0x4E2D, "CJK ideograph"), (0x1F600, "emoji"), (0xFFFD, "replacement character"), (0xA0, "no-break space"),
    (0x3000, "ideographic space"), (0x2028, "line separator"), (0x85, "next line"), (0x1680, "ogham space"),
    (0x180E, "Mongolian vowel separator (not White_Space)"), (0x9, "tab"), (0xA, "line feed"),
    # first assigned in Unicode 14.0
    (0x870, "Arabic letter alef with attached fatha (14.0)"), (0x1E290, "Toto letter pa (14.0)"),
    (0x11F00, "Kawi sign candrabindu (15.0), Mn"), (0x11F04, "Kawi letter a (15.0)"), (0x11F50, "Kawi digit zero (15.0)"),
    # first assigned in Unicode 16.0
    (0x897, "Arabic pepet (16.0), Mn"), (0x1C89, "Cyrillic capital letter tje (16.0)"), (0xA7CB, "Latin capital letter ramshorn (16.0)"),
    (0xA7DC, "Latin capital letter lambda with stroke (16.0)"), (0x105C0, "Todhri letter a (16.0)"),
    (0x10D40, "Garay digit zero (16.0)"), (0x10D4A, "Garay vowel sign a (16.0)"), (0x10D5C, "Garay capital letter ca (16.0)"),
    (0x10D80, "Garay small letter ca (16.0)"), (0x11380, "Tulu-Tigalari letter a (16.0)"), (0x113C0, "Tulu-Tigalari sign (16.0)"),
    (0x11BC0, "Sunuwar letter devi (16.0)"), (0x11BF0, "Sunuwar digit zero (16.0)"), (0x13460, "Egyptian hieroglyph (16.0)"),
    (0x16100, "Gurung Khema letter a (16.0)"), (0x16130, "Gurung Khema digit zero (16.0)"), (0x16D40, "Kirat Rai sign (16.0)"),
    (0x16D47, "Kirat Rai letter (16.0)"), (0x16D57, "Kirat Rai letter (16.0)"), (0x16D70, "Kirat Rai digit zero (16.0)"),
    (0x1CCF0, "outlined digit zero (16.0)"), (0x1E5D0, "Ol Onal letter o (16.0)"), (0x1E5F1, "Ol Onal digit zero (16.0)"),
    (0x2EBF0, "CJK ideograph extension I (16.0)"),
    (0x0378, "unassigned"), (0xE000, "private use"),
]


def texts_for(tokens):
    out = []
    for t in tokens:
        for cp, _ in PROBES:
            c = chr(cp)
            out += [t + c, c + t, "x" + c + t + " " + t + c + "y", c + " " + t + "\u3000" + c,
                    " \u2028" + t + "\u00a0 " + c]
    return out


def main():
    rows = []
    for name in FILES:
        tok = Tokenizer.from_file(os.path.join(DATA, name))
        j = json.load(open(os.path.join(DATA, name), encoding="utf-8"))
        flagged = [a["content"] for a in j["added_tokens"] if a.get("single_word") or a.get("lstrip") or a.get("rstrip")]
        for text in texts_for(flagged):
            parse = tok.encode(text, add_special_tokens=False).ids
            tok.encode_special_tokens = True
            plain = tok.encode(text, add_special_tokens=False).ids
            tok.encode_special_tokens = False
            row = {"file": name, "text": text, "parse": parse}
            if plain != parse:
                row["plain"] = plain
            rows.append(row)
    with open(os.path.join(HERE, "expected-single-word.jsonl"), "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print("%d texts over %d files" % (len(rows), len(FILES)))


if __name__ == "__main__":
    main()

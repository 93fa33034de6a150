#!/usr/bin/env python3
"""Writes tests/data/bpe/corpus.jsonl: a varied, deterministic test corpus for
the BPE tokenizer (one JSON object per line: {"id": ..., "text": ...}).

Hand-written cases cover the places tokenizers get wrong: whitespace runs
(GPT-NeoX's added space tokens), Unicode whitespace that engines disagree on
(U+0085, U+00A0, U+180E, U+2028, U+3000), non-NFC input, combining marks,
emoji sequences, many scripts, code, CRLF, NUL and other controls, special
tokens written in the text, contractions and digits. A seeded generator adds
mixed documents built from the same pieces. Run with any Python 3."""
import json
import random
import sys

CASES = [
    "Hello world",
    " Hello world",
    "Hello World!  How are   you?\n",
    "    Hello\n    Hello",
    "x  \u00a0y",
    "\n\x0b  ",
    "a" + " " * 23 + "b" + " " * 24 + "c" + " " * 25 + "d" + " " * 30 + "e" + " " * 49 + "f",
    " " * 2, " " * 24, " " * 25, " " * 48, " ",
    "trailing spaces   ",
    "\t\t  tab and spaces \t \n\n \n",
    "line1\r\nline2\r\n\r\nline3\r",
    "nul\x00byte and \x01\x02\x1b[0m controls \x7f",
    "don't I'm you're we've they'll she'd it's DON'T I'M YOU'RE 'RE 'S",
    "numbers 0 12 345 6789 33333 3.14159 1,000,000 -42 1e10 \u0663\u0664\u0665 \u2167 \u00bd",
    "caf\u00e9 cafe\u0301 e\u0301\u0301 a\u030a \u212b \u1e9b\u0323 \u0071\u0307\u0323",
    "\u1100\u1161\u11a8 \ud55c\uad6d\uc5b4 \u1112\u1161\u11ab",
    "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324\u031e\u0349\u035a\u032f\u031e\u0320\u034dA\u036b\u0357\u0334\u0362\u0335\u031c\u0330\u0354L\u0368\u0367\u0369\u0358\u0320G\u0311\u0357\u030e\u0305\u035b\u0341\u0334\u033b\u0348\u034d\u0354\u0339O\u0342\u030c\u030c\u0358\u0328\u0335\u0339\u033b\u031d\u0333",
    "emoji \U0001f600\U0001f601 \U0001f44d\U0001f3fd \U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466 \U0001f1fa\U0001f1f8\U0001f1e9\U0001f1ea \u2764\ufe0f \u263a",
    "\u0627\u0644\u0633\u0644\u0627\u0645 \u0639\u0644\u064a\u0643\u0645 \u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645",
    "\u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e \u0939\u093f\u0928\u094d\u0926\u0940",
    "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35\u0e0a\u0e32\u0e27\u0e42\u0e25\u0e01 \u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22",
    "\u4f60\u597d\uff0c\u4e16\u754c\uff01\u8fd9\u662f\u4e00\u4e2a\u6d4b\u8bd5\u3002\u4e2d\u6587\u5206\u8bcd",
    "\u3053\u3093\u306b\u3061\u306f\u4e16\u754c\u3002\u30ab\u30bf\u30ab\u30ca\u3068\u3072\u3089\u304c\u306a\uff08\u5168\u89d2\uff09",
    "\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440! \u0415\u0451\u0436 \u0439\u043e\u0434",
    "\u0393\u03b5\u03b9\u03ac \u03c3\u03bf\u03c5 \u039a\u03cc\u03c3\u03bc\u03b5 \u1f00\u1f10",
    "\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd \u05e2\u05b4\u05d1\u05b0\u05e8\u05b4\u05d9\u05ea",
    "T\u00fcrk\u00e7e \u0131\u0130 stra\u00dfe \u00c5ngstr\u00f6m Vi\u1ec7t Nam \u0141\u00f3d\u017a",
    "def f(x):\n    return x ** 2  # square\n\nclass A:\n\tpass\n",
    "int main(void) {\n  printf(\"%d\\n\", 42);\n  return 0;\n}\n",
    '{"key": [1, 2, {"nested": null}], "s": "a\\"b"}',
    "<html><body class=\"x\">&nbsp;&amp;</body></html>",
    "SELECT * FROM t WHERE a >= 10 AND b <> 'x';",
    "https://example.com/path?q=1&r=%20#frag user@example.org",
    "!!!??? ... --- ___ === +++ *** ### @@@ $$$ %%% ^^^ &&& ||| ~~~ ``` '''",
    "<|endoftext|>",
    "before<|endoftext|>after",
    "doc one.<|endoftext|>doc two<|padding|> and <|endoftext|><|endoftext|>",
    "<|endoftext|  <|endof text|> <|ENDOFTEXT|>",
    "  <|endoftext|>  x",
    "unicode ws: a\u0085b a\u2028b a\u2029b a\u3000b a\u180eb a\u200bb a\ufeffb a\u001cb a\u2009b",
    " \u180e\u180eb \u00a0\u00a0x \u3000\u3000y",
    "private \ue000\uf8ff noncharacters \ufdd0 \uffff astral \U00010348 \U0001d400\U0001d401 \U00020000",
    "replacement \ufffd\ufffd chars",
    "\u00a0leading nbsp",
    "mixed\u00a0 \u00a0 spaces",
    "ﬁ ligature ＦＵＬＬＷＩＤＴＨ ① ㎏ ™",
    "\n",
    "\n\n\n",
    "",
    "a",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" * 3,
    "-" * 200,
    "ab" * 150,
    "QmFzZTY0IGVuY29kZWQgdGV4dCBnb2VzIGhlcmUsIGxvbmcgbG9uZyBsb25nIGxvbmcgYmxvYg==" * 4,
    "3" * 120,
    "\U0001f600" * 40,
    "\u00e9" * 100,
    "ACGTTGCAACGTACGTTTGACCA" * 10,
    "a <|sep|>  b<|sep|>c \t<|sep|>\n d",
    "[MASK] x  [MASK]y\u00a0[MASK]",
    "foxes fox xfox fox. fox_ (fox) 3fox fox3 \u00e9fox",
    "Quick QUICK quick  Quick\u2003Quick",
    "don't  stop don'tx DON'T\t\tgo",
    # assigned in Unicode 15 (after PCRE2 10.42's 14.0): HF classifies them as unassigned too
    "ab\U00031350cd 12\U0001E030 34 x\U00011F04 \u0CF3 \U0001F6DC!",
    # Unicode 16.0 letters (HF's Oniguruma knows them) and characters after Unicode 9.0 that
    # NFC would reorder or compose in ICU 72 but not in HF's 9.0 normalization tables
    "x\u1C89y \U00010D50\U00010D70 \uA7CB\uA7CC a\u0898\u0316 \U00011935\U00011930 e\u1DFA\u0301 \U0001F16C",
]

WORDS = ["the", "quick", "brown", "fox", "Über", "naïve", "日本語", "données", "1234", "x=y+1;",
         "(foo)", "bar_baz", "CamelCase", "don't", "e\u0301t\u00e9", "\U0001f680", "مرحبا", "\u00a0",
         "<|endoftext|>", "\t", "\r\n", "  ", "   ", "\n\n", "...", "—", "“quoted”", "$5.00", "100%"]


def generated(rng, n):
    out = []
    for i in range(n):
        k = rng.randint(1, 60)
        parts = []
        for _ in range(k):
            w = rng.choice(WORDS)
            parts.append(w)
            parts.append(rng.choice([" ", " ", " ", "", "\n", "  ", ", ", ". "]))
        out.append("".join(parts))
    return out


def main():
    dest = sys.argv[1] if len(sys.argv) > 1 else "tests/data/bpe/corpus.jsonl"
    rng = random.Random(20261122)
    docs = CASES + generated(rng, 120)
    with open(dest, "w", encoding="utf-8", newline="\n") as f:
        for i, t in enumerate(docs):
            f.write(json.dumps({"id": "c%03d" % i, "text": t}, ensure_ascii=False) + "\n")
    print("wrote %d documents to %s" % (len(docs), dest))


if __name__ == "__main__":
    main()

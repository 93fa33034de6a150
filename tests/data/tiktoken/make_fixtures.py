#!/usr/bin/env python3
"""Builds the fixtures of the tiktoken family (tokenize/models/tok_tiktoken.c).

    python3 -m venv V && V/bin/pip install tiktoken==0.14.0 mistral-common==1.13.1
    V/bin/python tests/data/tiktoken/make_fixtures.py

Writes into tests/data/tiktoken/:
- small.tiktoken: a tiktoken rank file, the first 6000 ranks of Mistral's
  tekken_240911.json (mistral-common; ranks 0..255 are the single bytes) and
  then those of EXTRA (digit groups, contractions) it lacks, so a valid tiktoken encoding
  (tiktoken.Encoding(name, pat_str, mergeable_ranks, special_tokens) loads it);
- tekken-small.json: tekken_240911.json with its vocab cut to the same 6000
  ranks (config.default_vocab_size 7000: 1000 special tokens), written compact;
  Mistral's Tekkenizer loads it;
- tekken-specials.json: the same cut to 600 ranks, version v13 with its own
  special_tokens list (8 of default_num_special_tokens 12);
- texts.jsonl: tests/data/tok/texts.jsonl (the multilingual corpus, edge
  cases and random strings of the other families) plus adversarial strings
  for the o200k and tekken patterns (case classes, marks, contractions with
  U+017F, digits, whitespace runs, CR/LF and '/', emoji and ZWJ, CJK) and
  1500 seeded random strings over those classes;
- expected.jsonl.gz: per text, tiktoken 0.14's encode_ordinary ids of
  small.tiktoken under each pattern (gpt2, cl100k, qwen2, o200k, tekken and
  the regex REGEX below, which leaves text unmatched), the encode(text,
  allowed_special="all") ids under o200k with the special tokens SPECIALS
  ("o200k_parse"), and Mistral's Tekkenizer.encode(text, bos=False,
  eos=False) ids of tekken-small.json and tekken-specials.json;
- decode.jsonl: 500 seeded random id lists of small.tiktoken with SPECIALS and
  the hex of tiktoken's decode_bytes of each.
"""
import base64
import glob
import gzip
import json
import os
import random
import sys

import tiktoken
from mistral_common.tokens.tokenizers.tekken import Tekkenizer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")
DATA = glob.glob(os.path.join(sys.prefix, "lib/python3*/site-packages/mistral_common/data"))[0]
K = 6000
# tokens added after the first K ranks, so that the patterns' digit groups and
# contractions show in the ids (tekken's vocabulary has neither)
EXTRA = ["%02d" % i for i in range(100)] + ["000", "123", "999", "100", "2024"] + [
    "n't", "'s", "'S", "'re", "'ll", "'ve", "'m", "'d", "it's", "I'm", "don't", "//", "/\n", "\n/", "x'", ".'s"]
SPECIALS = {"<|endoftext|>": 7000, "<|fim_prefix|>": 7001, "<|endofprompt|>": 7010}
REGEX = r"""\p{L}+|\p{N}{1,2}| ?[.,!?]"""

PATTERNS = {
    "gpt2": r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s""",
    "cl100k": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
    "qwen2": r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    "o200k": "|".join(
        [
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
    "regex": REGEX,
}

ADVERSARIAL = [
    "HelloWorld CamelCaseWords XMLHttpRequest iPhone McDonald's ABCdef abcDEF",
    "don't I'M you'RE they've we'll he'd it's I'Ve 'S 's 'ſ xſ x'ſ ſ'S DON'T",
    "ǅemal ǈubljana ǋ ǲ Ǆ ǅǆ ᾈᾀ ᾼ ΣΑΣ σας",  # Lt titlecase letters
    "ʰʲʷ ˀ ᵃᵇᶜ ʻokina ʼ x ʹ ーカタカナ々〆",  # Lm
    "e\u0301 a\u0308\u0304 A\u0301B \u0301\u0302 x\u20dd \u0903 \u093f\u0915\u093f\u0937",  # marks
    "\u0301abc \u0301ABC \u0301 \u0301\u0301 1\u0301 .\u0301a",
    "नमस्ते दुनिया ক্ষ ಕನ್ನಡ தமிழ் ไทย ພາສາລາວ ܫܠܡܐ",
    "中文字符测试，日本語のテキスト。한국어 텍스트입니다 㐀𠀀𪛖",
    "12 123 1234 12345 ١٢٣٤ ۱۲۳ ๑๒๓ ½¾ ⅫⅯ ①②③ 𝟙𝟚𝟛 3.14159 1,000,000",
    "a  b   c    d\t\te \u00a0\u00a0f\u3000\u3000g \u2028 \u2029 \u0085 \u180e \u200b",
    "x \n y\r\n\r\nz\n\n\n w  \n\n  v \t\n\t u\r\r\r",
    "a/b//c///d\n/e /\n/ http://example.com/path/to/ \\/ //\n//\r\n",
    "!!! ??? ... ,,, ;;; :: -- __ == ++ ** @@ ## $$ %% ^^ && || ~~ `` \"\" '' <<>>",
    "😀😃 👨\u200d👩\u200d👧\u200d👦 🏳\ufe0f\u200d🌈 👍🏽 ❤\ufe0f 🇩🇪🇯🇵 ✊🏿",
    "  leading spaces", "trailing spaces   ", "   ", "\n", " ", "", "a", "'", "'s", " 's",
    "<|endoftext|> text <|endoftext|><|fim_prefix|>x<|endofprompt|>",
    "<|endoftext|", "<|endoftext|>>", "<<|endoftext|>",
    "\x00\x01\x1f\x7f control \x0b\x0c",
    "Ⅰ ⅰ ⓐ Ⓐ 𝐀𝐁𝐂 𝐚𝐛𝐜 ﬁ ﬀ ǅ",
    "The quick brown fox. ÀÉÎÕÜ àéîõü ŁŚŻ łśż ĞŞİ ğşı",
    "Привет МИР мир ПРИвет Ελληνικά ΕΛΛΗΝΙΚΆ עברית العربية",
    "x" * 300 + " " + "ab" * 200 + " " + "A" * 100 + "b" * 100,
    " " * 100 + "x" + "\n" * 50 + "y" + "\t \n" * 20,
    "1" * 50 + " " + "/" * 40 + "\n" * 3 + "." * 60,
]

CLASS_SAMPLES = [
    "ABCXYZÀÉΣЖ", "abcxyzàéσжß", "ǅǈǋǲᾈ", "ʰʲˀーᵃ々", "中文ひらカタ한국אבعر", "\u0301\u0308\u20dd\u0903\u093f",
    "0123٠١۲½Ⅻ①", " \t\n\r\u00a0\u3000\u2028\u0085\u000b", "!?.,;/-_'\"()[]", "'sſ'tTrReEvVmMlLdD", "😀👍🏽\u200d\ufe0f",
    "\r\n/", "sſS",
]


def random_texts(n, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        k = rng.randint(1, 40)
        s = []
        for _ in range(k):
            pool = rng.choice(CLASS_SAMPLES)
            s.append(rng.choice(pool) * (1 if rng.random() < 0.8 else rng.randint(2, 5)))
        out.append("".join(s))
    return out


def texts():
    base = [json.loads(l)["text"] for l in open(os.path.join(ROOT, "tests/data/tok/texts.jsonl"), encoding="utf-8")]
    return base + ADVERSARIAL + random_texts(1500, 11)


def main():
    full = json.load(open(os.path.join(DATA, "tekken_240911.json"), encoding="utf-8"))
    vocab = full["vocab"][:K]
    ranks = {}
    with open(os.path.join(HERE, "small.tiktoken"), "w") as f:
        for v in vocab:
            b = base64.b64decode(v["token_bytes"])
            ranks[b] = v["rank"]
            f.write("%s %d\n" % (v["token_bytes"], v["rank"]))
        extra = [t.encode() for t in EXTRA if t.encode() not in ranks]
        for i, b in enumerate(extra):
            ranks[b] = K + i
            f.write("%s %d\n" % (base64.b64encode(b).decode(), K + i))
    assert len(ranks) == K + len(extra) and all(ranks[bytes([i])] == i for i in range(256))

    small = {"config": dict(full["config"]), "vocab": vocab}
    small["config"].update(num_vocab_tokens=K, default_vocab_size=K + 1000)
    with open(os.path.join(HERE, "tekken-small.json"), "w", encoding="utf-8") as f:
        json.dump(small, f, ensure_ascii=False, separators=(",", ":"))
    sp_list = ["<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[TOOL_CALLS]", "<pad>", "[IMG]"]
    spec = {
        "config": dict(full["config"], num_vocab_tokens=600, default_vocab_size=612, default_num_special_tokens=12,
                       version="v13"),
        "vocab": full["vocab"][:600],
        "special_tokens": [{"rank": i, "token_str": s, "is_control": True} for i, s in enumerate(sp_list)],
    }
    with open(os.path.join(HERE, "tekken-specials.json"), "w", encoding="utf-8") as f:
        json.dump(spec, f, ensure_ascii=False, separators=(",", ":"))

    encs = {name: tiktoken.Encoding("t_" + name, pat_str=pat, mergeable_ranks=ranks, special_tokens={})
            for name, pat in PATTERNS.items()}
    encs["tekken"] = tiktoken.Encoding("t_tekken", pat_str=full["config"]["pattern"], mergeable_ranks=ranks,
                                       special_tokens={})
    plain = {b: r for b, r in ranks.items() if r < K}
    tekken_cut = tiktoken.Encoding("t_cut", pat_str=full["config"]["pattern"], mergeable_ranks=plain, special_tokens={})
    parse = tiktoken.Encoding("t_parse", pat_str=PATTERNS["o200k"], mergeable_ranks=ranks, special_tokens=SPECIALS)
    tk_small = Tekkenizer.from_file(os.path.join(HERE, "tekken-small.json"))
    tk_spec = Tekkenizer.from_file(os.path.join(HERE, "tekken-specials.json"))
    # the tekken pattern on the cut vocabulary: Mistral's ids are tiktoken's + 1000
    ts = texts()
    with open(os.path.join(HERE, "texts.jsonl"), "w", encoding="utf-8") as f:
        for t in ts:
            f.write(json.dumps({"text": t}) + "\n")
    with gzip.open(os.path.join(HERE, "expected.jsonl.gz"), "wt", compresslevel=9) as f:
        for t in ts:
            row = {name: e.encode_ordinary(t) for name, e in encs.items()}
            row["o200k_parse"] = parse.encode(t, allowed_special="all")
            row["tekken_small"] = tk_small.encode(t, bos=False, eos=False)
            row["tekken_specials"] = tk_spec.encode(t, bos=False, eos=False)
            assert row["tekken_small"] == [i + 1000 for i in tekken_cut.encode_ordinary(t)]
            assert parse.decode(row["o200k_parse"]) == t and encs["o200k"].decode(row["o200k"]) == t
            f.write(json.dumps(row, separators=(",", ":")) + "\n")
    rng = random.Random(5)
    ids_pool = list(range(len(ranks))) + list(SPECIALS.values())
    with open(os.path.join(HERE, "decode.jsonl"), "w") as f:
        for _ in range(500):
            ids = [rng.choice(ids_pool) if rng.random() < 0.7 else rng.randrange(256) for _ in range(rng.randint(0, 30))]
            f.write(json.dumps({"ids": ids, "hex": parse.decode_bytes(ids).hex()}) + "\n")
    print(len(ts), "texts")


if __name__ == "__main__":
    main()

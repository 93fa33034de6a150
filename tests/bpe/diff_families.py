#!/usr/bin/env python3
"""Randomized differential test of `sluice tokenize text` against the
reference libraries, across tokenizer families, with delta-debugging of the
documents whose ids differ.

Families and references (sluice runs with its defaults, i.e. --special plain,
no --add-special-tokens, and also --special parse for tokenizer.json files):
  tiktoken  OpenAI rank files (cl100k_base, o200k_base from --tiktoken-dir, else
            from the bpe_openai package's copies),
            tests/data/tiktoken/small.tiktoken under every --pattern name,
            Whisper's multilingual.tiktoken (gpt2 pattern) and the two tekken
            JSON files: tiktoken's encode_ordinary (tekken: ranks + the
            number of special tokens, Mistral's Tekkenizer.encode(bos=False,
            eos=False), as tests/data/tiktoken/make_fixtures.py checks)
  hf        every tokenizer.json under tests/data (bpe, spm, tok, onepipe,
            norm, bpepipe, llamacpp (*.json.zst decompressed), xlmr.json.xz)
            and the GPT-2 vocab.json+merges.txt directory: tokenizers'
            encode(text, add_special_tokens=False), encode_special_tokens=True
            for --special plain and False for --special parse
  spm       tests/data/spm/*.model and xlmr.model: sentencepiece's encode(text)

Documents (seeded): random code points from many Unicode blocks, byte soups
decoded with errors="replace", mixtures of tricky pieces (whitespace kinds,
CR/LF, contractions in every case and with U+2019/U+02BC, digits next to
letters, combining marks, emoji/ZWJ, controls and NUL, U+FEFF, private use,
noncharacters, the tokenizer's own added tokens and random vocabulary
entries), long runs (letters, digits, punctuation, mixed whitespace, one CJK
character, very long words) and mixed-case words for o200k's pattern.

Developer tool (not part of make test). Needs tiktoken (tiktoken family),
sentencepiece (spm family) and tokenizers (hf family):
    /work/venv-bench-peers/bin/python tests/bpe/diff_families.py tiktoken
    /work/venv-bench-peers/bin/python tests/bpe/diff_families.py hf
    /work/tok10-venv/bin/python       tests/bpe/diff_families.py spm
options: --n DOCS (per tokenizer, default 3000), --seed S, --sluice PATH,
--only SUBSTRING (tokenizer names), --work DIR, --shrink K (shrink at most K
differing documents per tokenizer and mode, default 6), --modes plain,parse.
Instead of the ids of `tokenize text` (the default check), one of:
  --decode       `sluice detokenize` against the reference's decode (tiktoken:
                 the ranks' bytes and the special tokens' names as UTF-8 with
                 U+FFFD; HF: decode(ids, skip_special_tokens=False);
                 sentencepiece: decode(ids)), both of the ids sluice gave the
                 documents and of random id lists (a `tokenize ids` stream);
  --add-special  `--add-special-tokens` against HF's encode(text,
                 add_special_tokens=True) for a tokenizer.json; for the files
                 without a post-processor (.model, tiktoken, tekken, GPT-2's
                 vocab.json + merges.txt) that the option is refused and that
                 --prepend-bos/--append-eos add the BOS/EOS ids
                 docs/tokenize.md names;
  --threads N    `tokenize text -@ N` (also with --mem-budget 1M, many
                 batches) writes the bytes of -@ 1, and `detokenize -@ N`
                 those of -@ 1.
Prints per tokenizer the documents tried and differing, then each minimal
reproducer (repr, UTF-8 hex, sluice ids, reference ids; for --decode the
shrunk id list and both texts); writes them as JSON to
WORK/mismatches-FAMILY[-CHECK].json. Exit status 0 when every document agrees."""
import argparse
import base64
import glob
import json
import lzma
import os
import random
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DATA = os.path.join(ROOT, "tests", "data")

# ---------------------------------------------------------------- documents

BLOCKS = [(0x20, 0x7E), (0x00, 0x1F), (0x7F, 0x9F), (0xA0, 0xFF), (0x100, 0x24F), (0x250, 0x2FF), (0x300, 0x36F),
          (0x370, 0x3FF), (0x400, 0x4FF), (0x530, 0x58F), (0x590, 0x6FF), (0x700, 0x7FF), (0x900, 0x97F),
          (0x980, 0xDFF), (0xE00, 0xE7F), (0xE80, 0xFFF), (0x1000, 0x109F), (0x10A0, 0x10FF), (0x1100, 0x11FF),
          (0x1200, 0x13FF), (0x1680, 0x169F), (0x1780, 0x17FF), (0x1800, 0x18AF), (0x1AB0, 0x1AFF), (0x1D00, 0x1DFF),
          (0x1E00, 0x1FFF), (0x2000, 0x206F), (0x2070, 0x22FF), (0x2300, 0x27FF), (0x2C00, 0x2E7F), (0x2E80, 0x2FDF),
          (0x3000, 0x30FF), (0x3100, 0x31FF), (0x3200, 0x33FF), (0x3400, 0x3500), (0x4E00, 0x4FFF),
          (0xA000, 0xA4CF), (0xA640, 0xA7FF), (0xA800, 0xABFF), (0xAC00, 0xAD00), (0xD7B0, 0xD7FF),
          (0xE000, 0xE0FF), (0xF900, 0xFAFF), (0xFB00, 0xFB4F), (0xFB50, 0xFDFF), (0xFE00, 0xFE6F),
          (0xFE70, 0xFFFF), (0x10000, 0x1007F), (0x10400, 0x1044F), (0x11000, 0x1107F), (0x1D400, 0x1D7FF),
          (0x1F000, 0x1F0FF), (0x1F100, 0x1F2FF), (0x1F300, 0x1F6FF), (0x1F900, 0x1F9FF), (0x1FA70, 0x1FAFF),
          (0x20000, 0x2007F), (0x2A6C0, 0x2A6FF), (0xE0000, 0xE007F), (0xF0000, 0xF00FF), (0x10FFF0, 0x10FFFF),
          # assigned in Unicode 10-17
          (0x1E030, 0x1E08F), (0x31350, 0x3135F), (0x11F00, 0x11F5F), (0x10D40, 0x10D8F), (0x1C80, 0x1C8F),
          (0xA7C0, 0xA7DF), (0x0890, 0x08A0), (0x1DF6, 0x1DFF), (0x11900, 0x1195F), (0x1E5D0, 0x1E5FF),
          (0x16D40, 0x16D7F), (0x113B8, 0x113C9), (0x11B60, 0x11B67)]

SPACES = [" ", "\t", "\n", "\r", "\r\n", "\x0b", "\x0c", "\u00a0", "\u1680", "\u2000", "\u2007", "\u200a",
          "\u200b", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\u0085", "\u180e", "\ufeff"]
PIECES = ["the", " the", "The", "THE", "  ", "   ", " " * 25, "\t", "\n", "\r\n", "\r", "\n\n", " \n", "\r\n\r\n",
          "'s", "'S", "'re", "'RE", "'ll", "'LL", "'ve", "'m", "'d", "'t", "'D", "don't", "DON'T", "don'T", "Don't",
          "'ſ", "ſ", "\u2019s", "\u02bcs", "don\u2019t", "I\u02bcm", "'", "''", "'''",
          "123", "4567", "1234567890", "3.14", "1,000", "x2", "2x", "abc123def", "v1.2.3", "١٢٣", "½", "Ⅻ", "①",
          "𝟙", "𝟚𝟛", "٣ab", "9\u0301",
          "HTTPServer", "iPhone", "ABCdef", "abcDEF", "McDonald's", "XMLHttpRequest", "camelCase", "snake_case",
          "ǅemal", "ǈ", "ᾈ", "ʰ", "ーカ", "々", "ΣΑΣ", "σας", "İstanbul", "ß", "ẞ", "ﬁ", "ﬀ",
          "<|endoftext|>", "<|padding|>", "<|sep|>", "[MASK]", "[CLS]", "[SEP]", "[UNK]", "<s>", "</s>", "<unk>",
          "<pad>", "<sep>", "<ctl>", "@@", "<mask>", "[INST]", "[/INST]", "<|begin_of_text|>", "<|end_of_text|>",
          "<|im_start|>", "<|fim_prefix|>", "▁", "▁▁", "Ġ", "Ċ",
          "fox", "Quick", "e\u0301", "a\u0308\u0304", "\u0301", "\u0301\u0301", "x\u20dd", "\u093f\u0915",
          "क्ष", "ไทย", "한국어", "中文", "日本語の", "Привет", "עברית", "العربية", "\u00a0", "\u3000", "\u0085",
          "\u180e", "\u2028", "\u2029", "\U0001f600", "\u200d", "\u200c", "👨\u200d👩\u200d👧", "🏳\ufe0f\u200d🌈",
          "👍🏽", "🇩🇪", "\ufe0f", "...", "-->", "__init__", "x" * 40, "//", "/\n", "\n/", "http://a.b/c?d=e",
          "#!/bin/sh", "    return x", "\t\tif (a) {", "}", "();", "==", "!=", "**", "$$", "\\", "\\n", "\"",
          "\x00", "\x01", "\x1f", "\x7f", "\x80", "\x9f", "\ufeff", "\ue000", "\U000f0000", "\ufffe", "\uffff",
          "\ufdd0", "\U0001fffe", "\U0010ffff", "\ufffd", "\u00ad", "\u034f", "\u2060", "\u0000\u0000"]
MIXED_CASE = ["HTTPServer", "iPhone", "ABCdef", "McDonald's", "DON'T", "don'T", "IBMs", "aBcDeF", "ABCDEFghij",
              "XMLHttpRequestFactory", "getHTTPResponseCode", "macOS", "eBay", "O'Neil", "L'ÉCOLE", "l'école",
              "ÀÉÎõü", "ΑλΦα", "ПРИвет", "ǅǆǄ", "Ǆemal", "ᾈᾀ", "WE'LL", "We'Ll", "I'M", "you'RE", "they'VE",
              "He'D", "it'S", "IT'S", "it\u2019s", "IT\u2019S", "it\u02bcs", "x'ſ", "A'ſ"]
APOS = ["'", "\u2019", "\u02bc", "\u2018", "`", "\u00b4"]
SUFFIXES = ["s", "S", "t", "T", "re", "RE", "Re", "ve", "VE", "m", "M", "ll", "LL", "lL", "d", "D", "ſ", "x", ""]
PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~¡¿«»·•…‹›„“”‘’—–§¶†‡※※、。，．！？「」『』【】《》〈〉"
CJK_ONE = ["中", "文", "の", "ア", "한", "ー", "々", "〇", "𠀀", "ㄅ", "ก", "ा", "\u0301"]
LETTERS = ["abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "àéîõüßçñøåæœ", "абвгдежзийклмн",
           "αβγδεζηθικλμν", "אבגדהוזחטיכל", "ابتثجحخدذرز", "कखगघङचछजझञ", "ぁあぃいぅうぇえぉお", "ｱｲｳｴｵ",
           "ǅǈǋǲ", "ʰʲʷˀ", "ﬁﬂﬀ", "𝐀𝐁𝐂𝐚𝐛𝐜"]
DIGITS = ["0123456789", "٠١٢٣٤٥٦٧٨٩", "۰۱۲۳", "०१२३", "๐๑๒", "①②③", "½¾⅓", "ⅠⅡⅫ", "𝟘𝟙𝟚", "²³¹", "〇"]


def rand_cp(rng):
    while True:
        lo, hi = rng.choice(BLOCKS)
        c = rng.randint(lo, hi)
        if not 0xD800 <= c <= 0xDFFF:
            return chr(c)


def long_run(rng):
    k = rng.randrange(10)
    if k == 0:  # letters without spaces
        alpha = rng.choice(LETTERS)
        return "".join(rng.choice(alpha) for _ in range(rng.randint(200, 3000)))
    if k == 1:  # digits
        d = rng.choice(DIGITS)
        return "".join(rng.choice(d) for _ in range(rng.randint(20, 1500)))
    if k == 2:  # punctuation
        p = PUNCT if rng.random() < 0.5 else rng.choice(PUNCT) * 3 + rng.choice(PUNCT)
        return "".join(rng.choice(p) for _ in range(rng.randint(20, 1500)))
    if k == 3:  # whitespace of mixed kinds
        ws = rng.sample([" ", "\t", "\n", "\r", "\r\n", " ", " ", "\u00a0", "\u3000", "\x0b", "\u2028", "\u0085"],
                        rng.randint(1, 5))
        return "".join(rng.choice(ws) for _ in range(rng.randint(10, 1200)))
    if k == 4:  # one CJK (or other) character
        return rng.choice(CJK_ONE) * rng.randint(20, 2000)
    if k == 5:  # a very long single word of random code points of one block
        lo, hi = rng.choice(BLOCKS[4:])
        return "".join(chr(c) for c in (rng.randint(lo, hi) for _ in range(rng.randint(200, 2500)))
                       if not 0xD800 <= c <= 0xDFFF)
    if k == 6:  # one ASCII character, or one two-character unit
        u = rng.choice(["a", "x", "0", "-", "=", "_", "ab", "é", "\u00a0", "😀", "e\u0301", ".", "'s", " a"])
        return u * rng.randint(50, 2000)
    if k == 7:  # camelCase identifier chains
        return "".join(rng.choice(MIXED_CASE).replace("'", "") for _ in range(rng.randint(20, 300)))
    if k == 8:  # ASCII words and punctuation, CR/LF runs of any length, '/' and punctuation after them
        out = []
        for _ in range(rng.randint(5, 60)):
            out.append(rng.choice(["a", "word", "x" * rng.randint(1, 70), " ", ";", ".", "*/", "})", "'"]))
            if rng.random() < 0.4:
                out.append("".join(rng.choice("\r\n") for _ in range(rng.randint(1, 90))) +
                           rng.choice(["/", "//", "/*", "/.js", "/(a", "\r/x", " /"]))
        return "".join(out)
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(100, 600)))


def mixed_case(rng):
    out = []
    for _ in range(rng.randint(1, 25)):
        r = rng.random()
        if r < 0.35:
            w = rng.choice(MIXED_CASE)
        elif r < 0.6:  # word + apostrophe variant + suffix
            w = rng.choice(["don", "I", "we", "THEY", "Ab", "aB", "x", "ǅ", "é", "É", "1", "", " "]) + \
                rng.choice(APOS) + rng.choice(SUFFIXES)
        elif r < 0.8:  # numbers next to letters
            w = rng.choice(["", "x", "ABC", "abc", "Ab"]) + str(rng.randint(0, 10 ** rng.randint(1, 9))) + \
                rng.choice(["", "px", "TH", "st", "Ab", "é", "'s"])
        else:
            w = "".join(rng.choice(rng.choice(LETTERS[:3] + LETTERS[10:12])) for _ in range(rng.randint(1, 12)))
        out.append(w + rng.choice(["", " ", " ", "  ", "\n", ",", ".", "'", "\t", "\u00a0", "/", "\r\n"]))
    return "".join(out)


def controls(rng):
    pool = ["\x00", "\x01", "\x08", "\x0b", "\x0c", "\x1b", "\x1f", "\x7f", "\x85", "\x9f", "\ufeff", "\ue000",
            "\uf8ff", "\U000f0000", "\U0010fffd", "\ufffe", "\uffff", "\ufdd0", "\ufdef", "\U0001ffff",
            "\U0010ffff", "\ufffd", "\u200b", "\u200e", "\u202e", "\u2066", "\u00ad", "\U000e0001", "\U000e0041"]
    words = ["a", "word", "The", "12", "x.", "中", " ", "  ", "\n", "'s"]
    return "".join(rng.choice(pool if rng.random() < 0.5 else words) for _ in range(rng.randint(1, 40)))


def random_doc(rng, extra):
    kind = rng.choices(range(8), weights=[14, 10, 24, 8, 14, 8, 10, 12])[0]
    if kind == 0:  # random code points
        return "".join(rand_cp(rng) for _ in range(rng.randrange(0, 80)))
    if kind == 1:  # byte soup, repaired as the reader repairs it
        return bytes(rng.randrange(256) for _ in range(rng.randrange(0, 120))).decode("utf-8", errors="replace")
    if kind == 2:  # pieces
        pool = PIECES + extra if extra and rng.random() < 0.6 else PIECES
        return "".join(rng.choice(pool) + rng.choice(["", "", " ", "  ", "\n", rand_cp(rng)])
                       for _ in range(rng.randrange(0, 30)))
    if kind == 3:
        return long_run(rng)
    if kind == 4:
        return mixed_case(rng)
    if kind == 5:
        return controls(rng)
    if kind == 6:  # whitespace kinds between words
        return "".join(rng.choice(["a", "b", "Word", "1", "中", ".", "é", "'s"]) +
                       "".join(rng.choice(SPACES) for _ in range(rng.randint(0, 4))) for _ in range(rng.randint(1, 30)))
    parts = [random_doc(rng, extra) for _ in range(rng.randint(2, 4))]
    return "".join(p[:400] for p in parts)


# ---------------------------------------------------------------- sluice

class SluiceError(Exception):
    pass


def run_sluice(sluice, tok_path, args, texts, work, tag="d", threads=1):
    src = os.path.join(work, tag + ".jsonl")
    out = os.path.join(work, tag + ".tok")
    with open(src, "w", encoding="utf-8") as f:
        for i, t in enumerate(texts):
            # both the raw UTF-8 and the \\u-escaped spellings of the reader
            f.write(json.dumps({"id": str(i), "text": t}, ensure_ascii=bool(i % 2)) + "\n")
    r = subprocess.run([sluice, "tokenize", "text", "-q", "-@", str(threads), "-t", tok_path] + args + [src, "-o", out],
                       capture_output=True)
    if r.returncode:
        raise SluiceError("tokenize rc=%d: %s" % (r.returncode, r.stderr.decode(errors="replace")[-2000:]))
    r = subprocess.run([sluice, "cat", "-q", "-@", "1", out], capture_output=True)
    if r.returncode:
        raise SluiceError("cat rc=%d: %s" % (r.returncode, r.stderr.decode(errors="replace")[-2000:]))
    got = [None] * len(texts)
    for line in r.stdout.decode("utf-8").split("\n"):
        if line:
            rec = json.loads(line)
            got[int(rec["id"])] = rec["ids"]
    return got


# ---------------------------------------------------------------- tokenizers
# Each entry: (name, sluice path, sluice args, reference encode(list of texts) -> list of ids, extra pieces)

def tiktoken_entries(a):
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    from tiktoken_ext import openai_public as op
    out = []

    def enc_fn(enc, offset=0):
        return lambda ts: [[i + offset for i in enc.encode_ordinary(t)] for t in ts]

    def info(ranks, specials, offset=0, eos=None, bos=None):
        """decode: tiktoken's decode (bytes of the ranks, a special token's name), then UTF-8 with
        U+FFFD for what is not UTF-8 (as tiktoken's decode(errors="replace") and sluice's detokenize);
        ids: every id of the vocabulary; eos/bos: the ids --append-eos/--prepend-bos should add."""
        inv = {r + offset: t for t, r in ranks.items()}
        inv.update({i: n.encode("utf-8") for n, i in specials.items()})

        def dec(lists):
            return [b"".join(inv[i] for i in ids).decode("utf-8", "replace") for ids in lists]
        return {"decode": dec, "ids": sorted(inv), "eos": eos, "bos": bos}

    def vocab_pieces(ranks, n=300):
        rng = random.Random(7)
        toks = list(ranks)
        return [t.decode("utf-8", "replace") for t in rng.sample(toks, min(n, len(toks)))]

    for name in ("cl100k_base", "o200k_base"):
        path = rank_file(a, name)
        if not path:
            print("skip %s: no %s.tiktoken in --tiktoken-dir nor a bpe_openai package" % (name, name))
            continue
        ranks = load_tiktoken_bpe(path)
        pat = official_pattern(name)
        enc = tiktoken.Encoding(name, pat_str=pat, mergeable_ranks=ranks, special_tokens={})
        sp = official_specials(name)
        out.append((name, path, [], enc_fn(enc), vocab_pieces(ranks),
                    info(ranks, sp, eos=sp.get("<|endoftext|>"))))
    # small.tiktoken under each pattern name (patterns as tests/data/tiktoken/make_fixtures.py spells them)
    d = os.path.join(DATA, "tiktoken")
    ranks = load_tiktoken_bpe(os.path.join(d, "small.tiktoken"))
    o200k = official_pattern("o200k_base")
    tekken_pat = json.load(open(os.path.join(d, "tekken-small.json"), encoding="utf-8"))["config"]["pattern"]
    pats = {"gpt2": op.r50k_pat_str, "cl100k": official_pattern("cl100k_base"),
            "qwen2": r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
            "o200k": o200k, "tekken": tekken_pat}
    for pn, pat in pats.items():
        enc = tiktoken.Encoding("small_" + pn, pat_str=pat, mergeable_ranks=ranks, special_tokens={})
        out.append(("small.tiktoken/" + pn, os.path.join(d, "small.tiktoken"), ["--pattern", pn], enc_fn(enc),
                    vocab_pieces(ranks), info(ranks, {})))
    # Whisper
    wpath = os.path.join(a.work, "multilingual.tiktoken")
    if not os.path.exists(wpath):
        with open(wpath, "wb") as f:
            f.write(lzma.decompress(open(os.path.join(d, "multilingual.tiktoken.xz"), "rb").read()))
    wranks = load_tiktoken_bpe(wpath)
    wpat = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
    enc = tiktoken.Encoding("whisper", pat_str=wpat, mergeable_ranks=wranks, special_tokens={})
    out.append(("whisper/multilingual.tiktoken", wpath, ["--pattern", "gpt2", "--special", "<|endoftext|>=50257"],
                enc_fn(enc), vocab_pieces(wranks), info(wranks, {"<|endoftext|>": 50257}, eos=50257)))
    # tekken JSON: Mistral's Tekkenizer = tiktoken on the vocabulary cut, ids + the special tokens
    for fn in ("tekken-small.json", "tekken-specials.json"):
        j = json.load(open(os.path.join(d, fn), encoding="utf-8"))
        c = j["config"]
        nsp = c.get("default_num_special_tokens", 1000 if "special_tokens" not in j else len(j["special_tokens"]))
        inner = c["default_vocab_size"] - nsp
        tranks = {base64.b64decode(v["token_bytes"]): v["rank"] for v in j["vocab"][:inner]}
        enc = tiktoken.Encoding("tk_" + fn, pat_str=c["pattern"], mergeable_ranks=tranks, special_tokens={})
        specials = [s["token_str"] for s in j.get("special_tokens", [])] or ["<s>", "</s>", "[INST]", "<unk>"]
        # the special ids' names: the file's list, or (v7 and before) mistral_common's
        # Tekkenizer.DEPRECATED_SPECIAL_TOKENS, the rest <SPECIAL_i> (mistral_common's filler)
        names = {s["rank"]: s["token_str"] for s in j.get("special_tokens", [])} or dict(enumerate(TEKKEN_OLD_SPECIALS))
        sp = {names.get(i, "<SPECIAL_%d>" % i): i for i in range(nsp)}
        out.append(("tekken/" + fn, os.path.join(d, fn), [], enc_fn(enc, nsp), vocab_pieces(tranks) + specials,
                    info(tranks, sp, nsp, eos=sp.get("</s>"), bos=sp.get("<s>"))))
    return out


def rank_file(a, name):
    """NAME.tiktoken from --tiktoken-dir, else unpacked into WORK from the copy that the
    bpe_openai package ships (as bench/peers_bench.py finds it); None when neither exists."""
    if a.tiktoken_dir:
        path = os.path.join(a.tiktoken_dir, name + ".tiktoken")
        return path if os.path.exists(path) else None
    try:
        import bpe_openai
    except ImportError:
        return None
    gz = os.path.join(os.path.dirname(bpe_openai.__file__), "data", name + ".tiktoken.gz")
    if not os.path.exists(gz):
        return None
    import gzip
    path = os.path.join(a.work, name + ".tiktoken")
    if not os.path.exists(path):
        with open(path, "wb") as f:
            f.write(gzip.open(gz).read())
    return path


TEKKEN_OLD_SPECIALS = ["<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
                       "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]",
                       "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]"]


def official_specials(name):
    """The special tokens of tiktoken_ext.openai_public's constructor (without loading the ranks)."""
    from tiktoken_ext import openai_public as op
    import tiktoken.load as tl
    orig = tl.load_tiktoken_bpe
    op.load_tiktoken_bpe = lambda *a, **k: {}
    try:
        return dict(getattr(op, name)()["special_tokens"])
    finally:
        op.load_tiktoken_bpe = orig


def official_pattern(name):
    """The pattern of tiktoken_ext.openai_public's constructor, without loading (downloading) its ranks."""
    from tiktoken_ext import openai_public as op
    import tiktoken.load as tl
    orig = tl.load_tiktoken_bpe
    op.load_tiktoken_bpe = lambda *a, **k: {}
    try:
        return getattr(op, name)()["pat_str"]
    finally:
        op.load_tiktoken_bpe = orig


def hf_files(a):
    files = []
    for pat in ("bpe/*tokenizer.json", "spm/*.json", "tok/*.json", "onepipe/*.json", "norm/*.json",
                "bpepipe/*.json", "llamacpp/*.json"):
        files += sorted(glob.glob(os.path.join(DATA, pat)))
    for z in sorted(glob.glob(os.path.join(DATA, "llamacpp", "*.json.zst"))):
        dst = os.path.join(a.work, "llamacpp-" + os.path.basename(z)[:-4])
        if not os.path.exists(dst):
            subprocess.run(["zstd", "-q", "-d", "-f", z, "-o", dst], check=True)
        files.append(dst)
    x = os.path.join(a.work, "xlmr.json")
    if not os.path.exists(x):
        with open(x, "wb") as f:
            f.write(lzma.decompress(open(os.path.join(DATA, "xlmr", "xlmr.json.xz"), "rb").read()))
    files.append(x)
    return files


def hf_entries(a):
    from tokenizers import Tokenizer
    sys.path.insert(0, os.path.join(ROOT, "tests", "bpe"))
    from refs import hf_gpt2
    out = []

    def entry(name, path, tok, json_file=True):
        rng = random.Random(7)
        n = tok.get_vocab_size(with_added_tokens=True)
        ids = sorted(set(tok.get_vocab(with_added_tokens=True).values()))

        def dec(lists, tok=tok):
            return [tok.decode(ids, skip_special_tokens=False) for ids in lists]
        pieces = [tok.decode([rng.randrange(n)], skip_special_tokens=False) for _ in range(300)]
        added = [t.content for t in tok.get_added_tokens_decoder().values()]
        pieces += added * 3

        for mode in a.modes:
            def enc(ts, tok=tok, mode=mode, add=False):
                tok.encode_special_tokens = mode == "plain"
                try:
                    return [e.ids for e in tok.encode_batch(ts, add_special_tokens=add)]
                finally:
                    tok.encode_special_tokens = False
            # add_special: HF's encode(text, add_special_tokens=True) for a tokenizer.json; None: the file
            # has no post-processor for sluice (GPT-2's vocab.json + merges.txt), --add-special-tokens is refused
            add = (lambda ts, enc=enc: enc(ts, add=True)) if json_file else None
            out.append(("%s [%s]" % (name, mode), path, ["--special", mode], enc, pieces,
                        {"decode": dec, "ids": ids, "add_special": add}))

    for path in hf_files(a):
        name = os.path.relpath(path, DATA) if path.startswith(DATA) else os.path.basename(path)
        entry(name, path, Tokenizer.from_file(path))
    entry("bpe/gpt2 (vocab+merges)", os.path.join(DATA, "bpe", "gpt2"), hf_gpt2(os.path.join(DATA, "bpe")), False)
    return out


def spm_entries(a):
    import sentencepiece as spm
    out = []
    x = os.path.join(a.work, "xlmr.model")
    if not os.path.exists(x):
        with open(x, "wb") as f:
            f.write(lzma.decompress(open(os.path.join(DATA, "xlmr", "xlmr.model.xz"), "rb").read()))
    for path in sorted(glob.glob(os.path.join(DATA, "spm", "*.model"))) + [x]:
        sp = spm.SentencePieceProcessor(model_file=path)
        rng = random.Random(7)
        n = sp.get_piece_size()
        pieces = [sp.id_to_piece(rng.randrange(n)).replace("\u2581", " ") for _ in range(300)]
        pieces += [sp.id_to_piece(i) for i in range(n) if sp.is_control(i) or sp.is_unknown(i)
                   or sp.is_unused(i)][:50] * 2
        pieces += [sp.id_to_piece(i) for i in range(n) if not (sp.is_control(i) or sp.is_unknown(i) or
                                                                sp.is_byte(i)) and sp.id_to_piece(i).startswith("<")][:50]
        name = os.path.relpath(path, DATA) if path.startswith(DATA) else os.path.basename(path)
        out.append((name, path, [], lambda ts, sp=sp: [sp.encode(t) for t in ts], pieces,
                    {"decode": lambda lists, sp=sp: [sp.decode(ids) for ids in lists], "ids": list(range(n)),
                     "bos": sp.bos_id() if sp.bos_id() >= 0 else None,
                     "eos": sp.eos_id() if sp.eos_id() >= 0 else None}))
    return out


# ---------------------------------------------------------------- shrinking

def make_checker(a, path, args, ref, work):
    def check(texts):
        """For each text: True when sluice's ids differ from the reference's (or sluice fails on it)."""
        try:
            got = run_sluice(a.sluice, path, args, texts, work, "s")
        except SluiceError:
            if len(texts) == 1:
                return [True]
            h = len(texts) // 2
            return check(texts[:h]) + check(texts[h:])
        want = ref(texts)
        return [g != w for g, w in zip(got, want)]
    return check


def shrink(text, check, budget=400):
    """ddmin over code points: the shortest text found that still differs."""
    s = text
    n = 2
    calls = 0
    while len(s) >= 2 and calls < budget:
        chunk = -(-len(s) // n)
        cands = [s[:i] + s[i + chunk:] for i in range(0, len(s), chunk)]
        calls += 1
        res = check(cands)
        for c, r in zip(cands, res):
            if r:
                s = c
                n = max(n - 1, 2)
                break
        else:
            if chunk == 1:
                break
            n = min(len(s), n * 2)
    if isinstance(s, list):  # an id list: no character to simplify
        return s
    # then try simplifying single characters to 'a' / ' ' (keeps the class readable)
    for rep in ("a", " "):
        i = 0
        while i < len(s) and calls < budget:
            if s[i] != rep:
                c = s[:i] + rep + s[i + 1:]
                calls += 1
                if check([c])[0]:
                    s = c
            i += 1
    return s


# ---------------------------------------------------------------- decode

def stream_header(sluice, tok):
    r = subprocess.run([sluice, "cat", "-q", "--header", tok], capture_output=True)
    if r.returncode:
        raise SluiceError("cat --header rc=%d: %s" % (r.returncode, r.stderr.decode(errors="replace")[-2000:]))
    return json.loads(r.stdout)


def run_detok(sluice, tok_path, args, tok, work, tag, threads=1, n=None):
    """sluice detokenize of TOK: the texts by document (the records' id is the index), and the raw output."""
    out = os.path.join(work, tag + ".detok.jsonl")
    r = subprocess.run([sluice, "detokenize", "-q", "-@", str(threads), "-t", tok_path] + args + [tok, "-o", out],
                       capture_output=True)
    if r.returncode:
        raise SluiceError("detokenize rc=%d: %s" % (r.returncode, r.stderr.decode(errors="replace")[-2000:]))
    raw = open(out, "rb").read()
    got = [None] * n if n is not None else {}
    for line in raw.decode("utf-8").split("\n"):
        if line:
            rec = json.loads(line)
            got[int(rec["id"])] = rec["text"]
    return got, raw


def ids_stream(sluice, lists, hdr, work, tag):
    """The id lists as a token stream (sluice tokenize ids) with the tokenizer's vocab size and fingerprint."""
    src = os.path.join(work, tag + ".ids.jsonl")
    out = os.path.join(work, tag + ".ids.tok")
    with open(src, "w") as f:
        for i, ids in enumerate(lists):
            f.write(json.dumps({"id": str(i), "ids": ids}) + "\n")
    cmd = [sluice, "tokenize", "ids", "-q", "-@", "1", "--vocab-size", str(hdr["vocab_size"]),
           "--fingerprint", hdr["fingerprint"], "--tokenizer", hdr.get("tokenizer") or "x", src, "-o", out]
    r = subprocess.run(cmd, capture_output=True)
    if r.returncode:
        raise SluiceError("tokenize ids rc=%d: %s" % (r.returncode, r.stderr.decode(errors="replace")[-2000:]))
    return out


def detok_args(hdr):
    """A tiktoken rank file's pattern and special tokens, from the text stream's header (a stream of
    'tokenize ids' does not record them)."""
    tt = ((hdr.get("extra") or {}).get("tiktoken")) or {}
    args = []
    if tt.get("pattern"):
        args += ["--pattern", tt["pattern"]]
    if tt.get("special"):
        args += ["--special", tt["special"]]
    return args


def make_decode_checker(a, path, hdr, dec, work):
    def check(lists):
        """For each id list: True when sluice's decoded text differs from the reference's (or sluice fails)."""
        try:
            tok = ids_stream(a.sluice, lists, hdr, work, "k")
            got, _ = run_detok(a.sluice, path, detok_args(hdr), tok, work, "k", n=len(lists))
        except SluiceError:
            if len(lists) == 1:
                return [True]
            h = len(lists) // 2
            return check(lists[:h]) + check(lists[h:])
        return [g != w for g, w in zip(got, dec(lists))]
    return check


def report_decode(a, name, path, hdr, dec, check, lists, bad, kind, report, docs=None):
    seen = set()
    for i in bad[:a.shrink]:
        m = shrink(lists[i], check)
        if tuple(m) in seen:
            continue
        seen.add(tuple(m))
        try:
            tok = ids_stream(a.sluice, [m], hdr, a.work, "m")
            g = run_detok(a.sluice, path, detok_args(hdr), tok, a.work, "m", n=1)[0][0]
        except SluiceError as e:
            g = "ERROR " + str(e)
        w = dec([m])[0]
        rec = {"tokenizer": name, "path": path, "check": "decode/" + kind, "doc": i, "ids": m, "sluice": g,
               "reference": w}
        if docs is not None:
            rec["text"] = docs[i]
        report.append(rec)
        print("  %s %d (%d ids) -> ids %r\n    sluice %r\n    ref    %r" % (kind, i, len(lists[i]), m, g, w),
              flush=True)


def check_decode(a, entry, docs, rng, report):
    """sluice detokenize against the reference's decode: of the ids sluice gave the documents (the stream
    of tokenize text), and of random id lists (a stream of tokenize ids). Returns the differing count."""
    name, path, args, ref, extra, info = entry
    dec = info["decode"]
    t0 = time.time()
    got = run_sluice(a.sluice, path, args, docs, a.work)
    tok = os.path.join(a.work, "d.tok")
    hdr = stream_header(a.sluice, tok)
    check = make_decode_checker(a, path, hdr, dec, a.work)
    total = 0
    try:
        texts, _ = run_detok(a.sluice, path, [], tok, a.work, "d", n=len(docs))
        bad = [i for i, (g, w) in enumerate(zip(texts, dec(got))) if g != w]
    except SluiceError as e:
        print("%-45s detokenize failed on the batch: %s" % (name, e))
        bad = [i for i, r in enumerate(check(got)) if r]
    total += len(bad)
    print("%-45s %5d docs' ids, %4d differ (%.1fs)" % (name, len(docs), len(bad), time.time() - t0), flush=True)
    report_decode(a, name, path, hdr, dec, check, got, bad, "doc", report, docs)
    t0 = time.time()
    pool = info["ids"]
    lists = [[rng.choice(pool) for _ in range(rng.randint(0, 40))] for _ in range(len(docs))]
    res = check(lists)
    bad = [i for i, r in enumerate(res) if r]
    total += len(bad)
    print("%-45s %5d random id lists (ids of %d), %4d differ (%.1fs)" % (name, len(lists), len(pool), len(bad),
                                                                         time.time() - t0), flush=True)
    report_decode(a, name, path, hdr, dec, check, lists, bad, "random", report)
    return total


# ---------------------------------------------------------------- add special tokens

def check_encode(a, name, path, args, ref, docs, report, check_name="encode"):
    """sluice tokenize text with ARGS against REF on DOCS, shrinking what differs. Returns the count."""
    t0 = time.time()
    try:
        got = run_sluice(a.sluice, path, args, docs, a.work)
    except SluiceError as e:
        print("%-45s sluice failed on the batch: %s" % (name, e))
        got = None
    want = ref(docs)
    check = make_checker(a, path, args, ref, a.work)
    if got is None:
        bad = [i for i, r in enumerate(check(docs)) if r]
    else:
        bad = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
    print("%-45s %5d docs, %4d differ (%.1fs)%s" % (name, len(docs), len(bad), time.time() - t0,
                                                    "" if check_name == "encode" else "  " + " ".join(args)),
          flush=True)
    seen = set()
    for i in bad[:a.shrink]:
        m = shrink(docs[i], check)
        if m in seen:
            continue
        seen.add(m)
        try:
            g = run_sluice(a.sluice, path, args, [m], a.work, "m")[0]
        except SluiceError as e:
            g = "ERROR " + str(e)
        w = ref([m])[0]
        rec = {"tokenizer": name, "path": path, "args": args, "check": check_name, "doc": i, "doc_len": len(docs[i]),
               "text": m, "hex": m.encode("utf-8").hex(), "sluice": g, "reference": w}
        report.append(rec)
        print("  doc %d (%d chars) -> %r  hex %s\n    sluice %s\n    ref    %s" % (i, len(docs[i]), m, rec["hex"],
                                                                               g, w), flush=True)
    return len(bad)


def check_add_special(a, entry, docs, report):
    """--add-special-tokens: for a tokenizer.json HF's encode(text, add_special_tokens=True); for the files
    docs/tokenize.md says have no post-processor (a .model, tiktoken and tekken files, GPT-2's vocab.json +
    merges.txt) that the option is refused, and (.model, tiktoken with an end-of-text token, tekken) that
    --prepend-bos/--append-eos add the ids docs/tokenize.md names: a .model's bos_id/eos_id (sentencepiece's
    encode(add_bos=True, add_eos=True)), <|endoftext|>, tekken's <s>/</s>."""
    name, path, args, ref, extra, info = entry
    add = info.get("add_special")
    if add is not None:
        return check_encode(a, name, path, args + ["--add-special-tokens"], add, docs, report, "add-special")
    bad = 0
    try:
        run_sluice(a.sluice, path, args + ["--add-special-tokens"], docs[:1], a.work, "r")
        print("%-45s --add-special-tokens NOT refused (docs/tokenize.md: refused)" % name, flush=True)
        report.append({"tokenizer": name, "path": path, "check": "add-special refused", "sluice": "accepted"})
        bad += 1
    except SluiceError as e:
        print("%-45s --add-special-tokens refused: %s" % (name, str(e).strip().split("\n")[-1][:150]), flush=True)
    bos, eos = info.get("bos"), info.get("eos")
    if bos is None and eos is None:
        return bad
    xargs = (["--prepend-bos"] if bos is not None else []) + (["--append-eos"] if eos is not None else [])

    def ref2(ts, ref=ref):
        return [([bos] if bos is not None else []) + ids + ([eos] if eos is not None else []) for ids in ref(ts)]
    return bad + check_encode(a, name, path, args + xargs, ref2, docs, report, "bos/eos")


# ---------------------------------------------------------------- threads

def check_threads(a, entry, docs, report):
    """tokenize text with -@ N (and -@ N --mem-budget 1M, several batches) gives the bytes of -@ 1;
    detokenize of that stream with -@ N the bytes of -@ 1."""
    name, path, args, ref, extra, info = entry
    t0 = time.time()
    run_sluice(a.sluice, path, args, docs, a.work, "t1", threads=1)
    one = open(os.path.join(a.work, "t1.tok"), "rb").read()
    bad = 0
    for xargs in ([], ["--mem-budget", "1M"]):
        got = run_sluice(a.sluice, path, args + xargs, docs, a.work, "tn", threads=a.threads)
        n = open(os.path.join(a.work, "tn.tok"), "rb").read()
        if n != one:
            bad += 1
            want = run_sluice(a.sluice, path, args, docs, a.work, "t1", threads=1)
            diff = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
            print("%-45s -@ %d %s: stream differs from -@ 1 (%d vs %d bytes; %d documents' ids differ: %s)"
                  % (name, a.threads, " ".join(xargs), len(n), len(one), len(diff), diff[:10]), flush=True)
            report.append({"tokenizer": name, "path": path, "check": "threads", "args": args + xargs,
                           "docs_differ": diff[:50], "bytes": [len(n), len(one)]})
    d1 = run_detok(a.sluice, path, [], os.path.join(a.work, "t1.tok"), a.work, "t1", threads=1)[1]
    dn = run_detok(a.sluice, path, [], os.path.join(a.work, "t1.tok"), a.work, "tn", threads=a.threads)[1]
    if d1 != dn:
        bad += 1
        print("%-45s detokenize -@ %d differs from -@ 1" % (name, a.threads), flush=True)
        report.append({"tokenizer": name, "path": path, "check": "threads/detokenize"})
    print("%-45s %5d docs, -@ %d vs -@ 1: %d of 3 outputs differ (%.1fs)" % (name, len(docs), a.threads, bad,
                                                                            time.time() - t0), flush=True)
    return bad


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("family", choices=["tiktoken", "hf", "spm"])
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sluice", default=os.path.join(ROOT, "build", "sluice"))
    ap.add_argument("--only", default="")
    ap.add_argument("--work", default="/tmp/diff_families")
    ap.add_argument("--tiktoken-dir", default="")
    ap.add_argument("--shrink", type=int, default=6)
    ap.add_argument("--modes", default="plain,parse")
    ap.add_argument("--add-special", action="store_true",
                    help="check --add-special-tokens (and --prepend-bos/--append-eos where it is refused)")
    ap.add_argument("--decode", action="store_true", help="check detokenize against the reference's decode")
    ap.add_argument("--threads", type=int, default=0, help="check that -@ N gives the bytes of -@ 1")
    a = ap.parse_args()
    a.modes = a.modes.split(",")
    os.makedirs(a.work, exist_ok=True)
    entries = {"tiktoken": tiktoken_entries, "hf": hf_entries, "spm": spm_entries}[a.family](a)
    check = "add-special" if a.add_special else "decode" if a.decode else "threads" if a.threads else "encode"
    report = []
    total_bad = 0
    for entry in entries:
        name, path, args, ref, extra, info = entry
        if a.only and a.only not in name:
            continue
        if check == "add-special" and a.family == "hf" and "[" in name and "add_special" in info and \
                info["add_special"] is None and not name.endswith("[%s]" % a.modes[0]):
            continue  # the refusal does not depend on --special
        rng = random.Random("%d:%s" % (a.seed, name.split(" [")[0]))
        docs = [random_doc(rng, extra) for _ in range(a.n)]
        if check == "encode":
            total_bad += check_encode(a, name, path, args, ref, docs, report)
        elif check == "add-special":
            total_bad += check_add_special(a, entry, docs, report)
        elif check == "decode":
            total_bad += check_decode(a, entry, docs, random.Random("%d:ids:%s" % (a.seed, name)), report)
        else:
            total_bad += check_threads(a, entry, docs, report)
    suffix = "" if check == "encode" else "-" + check
    out = os.path.join(a.work, "mismatches-%s%s.json" % (a.family, suffix))
    with open(out, "w", encoding="utf-8") as f:
        json.dump(report, f, ensure_ascii=False, indent=1)
    print("TOTAL: %d differing documents; %d reproducers in %s" % (total_bad, len(report), out))
    sys.exit(1 if total_bad else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Builds the fixtures of the shared normalizer engine (tokenize/normalizers/normalize.c)
across the tokenizer.json families: every normalizer of HF's list in a
Unigram, a SentencePiece-style BPE and a byte-level BPE file, with HF's ids
and decodes as the expected values.

One venv with tokenizers 0.23.3, sentencepiece 0.2.x and protobuf:
    python3 -m venv V && V/bin/pip install tokenizers==0.23.3 sentencepiece protobuf
    V/bin/python tests/data/norm/make_fixtures.py
Writes into tests/data/norm/:
- rules.tsv, and small.charsmap: a precompiled charsmap that
  SentencePieceTrainer builds from rules.tsv (custom normalization rules:
  full-width letters, ligatures, a two-character source inside a cluster,
  CR LF, an ASCII pair, removals, a rule inside long emoji clusters), taken
  from the trained model's normalizer_spec;
- extra-texts.jsonl: texts whose start a normalizer removes or replaces
  (for Metaspace prepend_scheme "first"), texts for the rules above, and
  200 seeded random strings of PIECES;
- uni-nfkd.json, uni-bert.json (Unigram), sp-lower.json, sp-precomp.json
  (SentencePiece-style BPE), bl-precomp.json (byte-level BPE), wp-precomp.json
  (WordPiece): existing
  fixtures with the normalizers and pre-tokenizers set in FILES below, each
  loaded and saved by HF tokenizers (so serialized as HF writes them);
- expected-NAME.jsonl: per text of ../spm/texts.jsonl, ../tok/wp-texts.jsonl
  and extra-texts.jsonl: HF encode(text, add_special_tokens=False) ids with
  special tokens parsed ("parse"), with encode_special_tokens=True where
  different ("plain"), and decode(parse ids, skip_special_tokens=False)
  ("decoded").
`make_fixtures.py redecode` rewrites the "decoded" values of
../spm/hf-expected-uni-*.jsonl and ../spm/hf-decode-uni-*.jsonl with this
tokenizers version (0.23 decodes a normalized added token in its normalized
form; those files were made with 0.22.2), checking that the ids are HF's.
"""
import base64
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
DATA = os.path.join(ROOT, "tests", "data")

# source code points -> target code points (empty: removed)
RULES = [
    ([0xFB01], [0x66, 0x69]), ([0xFB02], [0x66, 0x6C]),          # ﬁ ﬂ
    ([0x00BD], [0x31, 0x2044, 0x32]),                              # ½
    ([0xFF8A, 0xFF9F], [0x30D1]), ([0xFF8A], [0x30CF]),            # ﾊﾟ ﾊ
    ([0x65, 0x301], [0xE9]),                                       # e + acute, one cluster
    ([0x200B], []), ([0xAD], []),                                  # zero width space, soft hyphen
    ([0x09], [0x20]), ([0x60], [0x27]),                            # tab, backquote
    ([0x41, 0x42], [0x61, 0x62]),                                  # "AB": never one cluster
    ([0x0D, 0x0A], [0x0A]),                                        # CR LF, one cluster
    ([0x2026], [0x2E, 0x2E, 0x2E]),                                # …
    ([0x1F3FD], []),                                               # skin tone inside ZWJ clusters
    ([0x3000], [0x20]),                                            # ideographic space
    ([0x2160], [0x49]), ([0x2161], [0x49, 0x49]),                  # Ⅰ Ⅱ
] + [([0xFF21 + i], [0x41 + i]) for i in range(26)] + [([0xFF41 + i], [0x61 + i]) for i in range(26)]

EXTRA = [
    "  leading spaces", " \u0301accent first", "\u0301\u0301marks first", "\x01control first", "\x01\x02",
    "--dash first", "-single dash", "---", "\t\ttabs first", "\u200bzero width first", "\u00adsoft hyphen",
    "\u3000ideographic first", "ﬁrst ligature", "ﬂow ﬁ", "½ and ½", "ﾊﾟ ﾊ ﾊﾟﾟ", "cafe\u0301 e\u0301 e\u0301\u0301",
    "ABC AB ab", "line\r\nbreak\r\n", "wait…", "👩🏽‍🚀 👍🏽 🏽", "ＦＵＬＬ ｗｉｄｔｈ", "Ⅰ Ⅱ Ⅲ", "`quoted`",
    "Héllo HÉLLO héllo", "HELLO hello", "<sep>x<sep>", " <sep> ", "my_tab  my_tab", "İstanbul ΣΑΣ",
    "  ", "\u0301", "x", "中文 字", "  中文", "a  b   c", "ǅ ﬀ ㍻",
]

# random strings of these pieces (seeded): starts a normalizer removes, maps or expands, in any order
PIECES = [" ", "  ", "\t", "\n", "\u0301", "\u0300\u0301", "\x01", "\x7f", "--", "-", "中", "文字", "ﬁ", "ﬂ", "½",
          "ﾊﾟ", "e\u0301", "\u200b", "\u00ad", "\u3000", "…", "👩🏽‍🚀", "🏽", "AB", "\r\n", "É", "İ", "Σ", "a", "Hello",
          "héllo", "<sep>", "my_tab", "ﬁx", "Héllo", "x", "\u2581", "ǅ", "㍻", "Ⅱ", "\ufeff", "\u00a0", "ß"]


def extra():
    import random
    rng = random.Random(10)
    return EXTRA + ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 8))) for _ in range(200)]


UNI_BASE = "spm/uni-unk.json"
SP_BASE = "tok/v1-small-norm.json"
BL_BASE = "bpe/tiny-tokenizer.json"
WP_BASE = "tok/bert-lower.json"


def charsmap_b64():
    return base64.b64encode(open(os.path.join(HERE, "small.charsmap"), "rb").read()).decode()


def files():
    meta_first_split = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True}
    meta_first = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False}
    meta_always = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
    pre = {"type": "Precompiled", "precompiled_charsmap": charsmap_b64()}
    added = [
        {"id": 0, "content": "Héllo", "single_word": False, "lstrip": False, "rstrip": False, "normalized": True, "special": False},
        {"id": 0, "content": "<sep>", "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True},
        {"id": 0, "content": "ﬁx", "single_word": False, "lstrip": True, "rstrip": False, "normalized": True, "special": False},
    ]
    return {
        # Unigram: NFKD, StripAccents, Lowercase, Strip (left), Replace regex; Metaspace first
        "uni-nfkd": (UNI_BASE, {"type": "Sequence", "normalizers": [
            {"type": "NFKD"}, {"type": "StripAccents"}, {"type": "Lowercase"},
            {"type": "Strip", "strip_left": True, "strip_right": False},
            {"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "}]},
            meta_first_split, meta_first_split, added),
        # Unigram: BertNormalizer, NFD, Replace string, Precompiled; WhitespaceSplit + Metaspace first
        "uni-bert": (UNI_BASE, {"type": "Sequence", "normalizers": [
            {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None,
             "lowercase": False},
            {"type": "Replace", "pattern": {"String": "--"}, "content": "-"}, pre, {"type": "NFD"}]},
            {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, meta_first]}, meta_first, added),
        # SentencePiece-style BPE (byte_fallback) as Llama-2 with NFC, Lowercase and a regex first
        "sp-lower": (SP_BASE, {"type": "Sequence", "normalizers": [
            {"type": "NFC"}, {"type": "Lowercase"},
            {"type": "Replace", "pattern": {"Regex": "[\\t ]{2,}"}, "content": " "},
            {"type": "Prepend", "prepend": "\u2581"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]}, None, None, None),
        # SentencePiece-style BPE with Strip, BertNormalizer, Precompiled, NFKC, NFKD + StripAccents; Metaspace first
        "sp-precomp": (SP_BASE, {"type": "Sequence", "normalizers": [
            {"type": "Strip", "strip_left": True, "strip_right": True},
            {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": False, "strip_accents": False,
             "lowercase": False},
            pre, {"type": "NFKC"}, {"type": "NFKD"}, {"type": "StripAccents"}, {"type": "NFC"}]},
            meta_first_split, "meta-decoder", added),
        # WordPiece (BERT uncased) with Precompiled before its BertNormalizer
        "wp-precomp": (WP_BASE, {"type": "Sequence", "normalizers": [
            pre, {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None,
                  "lowercase": True}]}, None, None, None),
        # byte-level BPE with Precompiled
        "bl-precomp": (BL_BASE, {"type": "Sequence", "normalizers": [pre, {"type": "NFKC"}, {"type": "Lowercase"}]},
                       None, None, None),
    }


def make_charsmap():
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2 as pb
    with open(os.path.join(HERE, "rules.tsv"), "w", encoding="utf-8") as f:
        for src, dst in RULES:
            f.write(" ".join("%X" % c for c in src) + "\t" + " ".join("%X" % c for c in dst) + "\n")
    work = tempfile.mkdtemp()
    spm.SentencePieceTrainer.train(
        input=os.path.join(ROOT, "README.md"), model_prefix=os.path.join(work, "m"), vocab_size=200,
        model_type="unigram", normalization_rule_tsv=os.path.join(HERE, "rules.tsv"), minloglevel=2)
    m = pb.ModelProto()
    m.ParseFromString(open(os.path.join(work, "m.model"), "rb").read())
    blob = m.normalizer_spec.precompiled_charsmap
    assert blob, "no charsmap"
    open(os.path.join(HERE, "small.charsmap"), "wb").write(blob)
    print("small.charsmap: %d bytes" % len(blob))


def texts():
    out = []
    for f in ("spm/texts.jsonl", "tok/wp-texts.jsonl", "norm/extra-texts.jsonl"):
        out += [json.loads(l)["text"] for l in open(os.path.join(DATA, f), encoding="utf-8")]
    return out


def build(name, spec):
    from tokenizers import Tokenizer
    base, norm, pre, dec, added = spec
    d = json.load(open(os.path.join(DATA, base), encoding="utf-8"))
    d["normalizer"] = norm
    if pre is not None:
        d["pre_tokenizer"] = pre
    if dec == "meta-decoder":
        d["decoder"] = {"type": "Sequence", "decoders": [
            {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True},
            {"type": "ByteFallback"}, {"type": "Fuse"}]}
    elif dec is not None:
        d["decoder"] = dec
    if added:
        vocab = d["model"]["vocab"]
        n = len(vocab)
        ids = set(a["id"] for a in d["added_tokens"])
        for a in added:
            if any(x["content"] == a["content"] for x in d["added_tokens"]):
                continue
            a = dict(a)
            a["id"] = n + len(d["added_tokens"]) + 10
            while a["id"] in ids:
                a["id"] += 1
            ids.add(a["id"])
            d["added_tokens"].append(a)
    tok = Tokenizer.from_str(json.dumps(d))
    path = os.path.join(HERE, name + ".json")
    tok.save(path)
    tok = Tokenizer.from_file(path)
    with open(os.path.join(HERE, "expected-%s.jsonl" % name), "w", encoding="utf-8") as f:
        for t in texts():
            parse = tok.encode(t, add_special_tokens=False).ids
            tok.encode_special_tokens = True
            plain = tok.encode(t, add_special_tokens=False).ids
            tok.encode_special_tokens = False
            rec = {"parse": parse}
            if plain != parse:
                rec["plain"] = plain
            rec["decoded"] = tok.decode(parse, skip_special_tokens=False)
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print(name, os.path.getsize(path))


def redecode():
    from tokenizers import Tokenizer
    spm_dir = os.path.join(DATA, "spm")
    src = [json.loads(l)["text"] for l in open(os.path.join(spm_dir, "texts.jsonl"), encoding="utf-8")]
    for name in ("uni-bf", "uni-unk", "uni-t5"):
        tok = Tokenizer.from_file(os.path.join(spm_dir, name + ".json"))
        for fn, with_text in (("hf-expected-%s.jsonl", True), ("hf-decode-%s.jsonl", False)):
            p = os.path.join(spm_dir, fn % name)
            recs = [json.loads(l) for l in open(p, encoding="utf-8")]
            changed = 0
            for i, r in enumerate(recs):
                if with_text:
                    assert tok.encode(src[i], add_special_tokens=False).ids == r["ids"], (name, i)
                d = tok.decode(r["ids"], skip_special_tokens=False)
                changed += d != r["decoded"]
                r["decoded"] = d
            with open(p, "w", encoding="utf-8") as f:
                for r in recs:
                    f.write(json.dumps(r, ensure_ascii=False) + "\n")
            print(fn % name, "decodes changed:", changed)


def main():
    if sys.argv[1:] == ["redecode"]:
        redecode()
        return
    make_charsmap()
    with open(os.path.join(HERE, "extra-texts.jsonl"), "w", encoding="utf-8") as f:
        for t in extra():
            f.write(json.dumps({"text": t}, ensure_ascii=False) + "\n")
    for name, spec in files().items():
        build(name, spec)


if __name__ == "__main__":
    main()

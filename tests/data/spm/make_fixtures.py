#!/usr/bin/env python3
"""Builds the fixtures of the SentencePiece family (tok_spm.c: .model files)
and of the Unigram tokenizer.json family (tok_unigram.c).

One venv with sentencepiece 0.2.x, tokenizers, transformers 4.x and protobuf:
    python3 -m venv V && V/bin/pip install sentencepiece "transformers<5" tokenizers protobuf mistral-common
    V/bin/python tests/data/spm/make_fixtures.py
Writes into tests/data/spm/:
- mistral-v1.model, mistral-v3.model: mistral-common's tokenizer.model.v1
  (Mistral-7B v0.1, Llama-2 style BPE, 32000 pieces, byte_fallback) and
  mistral_instruct_tokenizer_240323.model.v3 (Codestral Mamba, 32768), copied;
- uni-bf.model, uni-unk.model, bpe-bf.model, bpe-unk.model: tiny models
  trained here by SentencePieceTrainer on the repository's own docs
  (README.md, docs/*.md): Unigram and BPE, byte_fallback on / off, with
  nmt_nfkc normalization (a real precompiled charsmap) and user-defined
  symbols; uni-raw.model: Unigram with identity normalization,
  add_dummy_prefix and remove_extra_whitespaces off;
- texts.jsonl: the texts (tests/data/tok/texts.jsonl's corpus, hand-written
  cases and its first 750 random strings, plus adversarial strings below);
- expected-NAME.jsonl: per text, sentencepiece's encode(text) ids ("ids")
  and decode(ids) ("decoded"); decode-NAME.jsonl: 300 random id lists and
  sentencepiece's decode of each;
- uni-bf.json, uni-unk.json: the Unigram models converted to tokenizer.json
  by transformers' SpmConverter (normalizer Precompiled + Strip + Replace,
  Metaspace pre-tokenizer and decoder; uni-bf with byte_fallback set), and
  hf-expected-NAME.jsonl: HF encode(text, add_special_tokens=False) ids
  ("ids") and decode(ids) ("decoded"). The script prints how many texts HF's
  ids differ from sentencepiece's on (for information: they are two
  implementations; sluice follows each file's own reference); "plain": the
  ids with encode_special_tokens=True where they differ; hf-decode-NAME.jsonl:
  300 random id lists and HF's decode;
- uni-t5.json: uni-unk.json in a T5-like configuration (see variant()).
`make_fixtures.py hf` redoes only the tokenizer.json fixtures.
"""
import glob
import json
import os
import random
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
WORK = os.environ.get("SPM_WORK", "/tmp/spm-fixtures")

ADVERSARIAL = [
    "", " ", "  ", "\t", "\n", "  a  ", "a    b", " \t a \n\n b \r\n", "   leading and trailing   ",
    "ＦＵＬＬ ｗｉｄｔｈ　ｔｅｘｔ １２３", "ﬁnance ﬂow ﬀ ﬃ", "Ⅻ ½ ² ㍻ ㈱ ℃ ™", "ｶﾀｶﾅ ﾊﾟ", "é vs é", "Å Å",
    "ḳ́̄ q̣̇ ặ", "\u0301\u0301 lone marks", "क्षि ि", "emoji 🧑‍🔬 👩🏽‍🚀 🏳️‍🌈 #️⃣", "CJK 漢字かなカナ한글 㐀 𠀀",
    "unknown \U0010fffd \ue001 \u0378 \U000e0100", "<sep> a<sep>b @@ x@@y", "<s> </s> <unk> <pad>",
    "\u2581 \u2581\u2581 a\u2581b", "\u200b zero\u200bwidth \u2060 \ufeff", "\x00\x01\x1f\x7f ctrl",
    "\u3000ideographic\u3000space", "\u00a0\u2002\u2003\u2009 nbsp", "ǅ ǈ ǋ Ǳ", "ß ẞ İ ı ŉ",
    "x" * 300, "ab" * 200 + " " + "🙂" * 40, "a b c d e f g h i j k l m n o p q r s t u v w x y z",
    "The quick brown fox jumps over the lazy dog. 1234567890!", "sluice tokenize text --tokenizer m.model",
]


def texts():
    src = [json.loads(l)["text"] for l in open(os.path.join(ROOT, "tests", "data", "tok", "texts.jsonl"), encoding="utf-8")]
    return src[:1000] + ADVERSARIAL


def train(ws):
    import sentencepiece as spm

    corpus = os.path.join(ws, "corpus.txt")
    with open(corpus, "w", encoding="utf-8") as f:
        for p in [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))):
            for line in open(p, encoding="utf-8"):
                if line.strip():
                    f.write(line)
    common = dict(input=corpus, vocab_size=800, character_coverage=0.995, user_defined_symbols=["<sep>", "@@"],
                  control_symbols=["<ctl>"], num_threads=1, minloglevel=2, hard_vocab_limit=False)
    plan = [
        ("uni-bf", dict(model_type="unigram", byte_fallback=True, normalization_rule_name="nmt_nfkc")),
        ("uni-unk", dict(model_type="unigram", byte_fallback=False, normalization_rule_name="nmt_nfkc")),
        ("bpe-bf", dict(model_type="bpe", byte_fallback=True, normalization_rule_name="nmt_nfkc")),
        ("bpe-unk", dict(model_type="bpe", byte_fallback=False, normalization_rule_name="nmt_nfkc")),
        ("uni-raw", dict(model_type="unigram", byte_fallback=False, normalization_rule_name="identity",
                         add_dummy_prefix=False, remove_extra_whitespaces=False)),
    ]
    for name, kw in plan:
        spm.SentencePieceTrainer.train(model_prefix=os.path.join(HERE, name), **dict(common, **kw))
        os.remove(os.path.join(HERE, name + ".vocab"))
    return [n for n, _ in plan]


def sp_fixtures(name, ts):
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=os.path.join(HERE, name + ".model"))
    with open(os.path.join(HERE, "expected-" + name + ".jsonl"), "w", encoding="utf-8") as f:
        for t in ts:
            ids = sp.encode(t)
            f.write(json.dumps({"ids": ids, "decoded": sp.decode(ids)}, ensure_ascii=False) + "\n")
    rng = random.Random(5)
    n = sp.get_piece_size()
    byte_ids = [i for i in range(n) if sp.is_byte(i)]
    with open(os.path.join(HERE, "decode-" + name + ".jsonl"), "w", encoding="utf-8") as f:
        for _ in range(300):
            ids = []
            for _ in range(rng.randint(0, 12)):
                c = rng.random()
                if c < 0.4 and byte_ids:
                    ids.append(rng.choice(byte_ids))
                elif c < 0.55:
                    ids.append(rng.randint(0, 5))
                else:
                    ids.append(rng.randrange(n))
            f.write(json.dumps({"ids": ids, "decoded": sp.decode(ids)}, ensure_ascii=False) + "\n")


def variant(d):
    """uni-unk.json in a T5-like configuration that exercises the other
    components: WhitespaceSplit then Metaspace (prepend_scheme first, no
    split), Precompiled + Strip (both sides) + Replace (a string) +
    Lowercase + NFKC, and normalized / lstrip / rstrip added tokens."""
    d["normalizer"] = {"type": "Sequence", "normalizers": [
        d["normalizer"]["normalizers"][0],
        {"type": "Strip", "strip_left": True, "strip_right": True},
        {"type": "Replace", "pattern": {"String": "``"}, "content": "\""},
        {"type": "Lowercase"}, {"type": "NFKC"}]}
    d["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "WhitespaceSplit"},
        {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False}]}
    d["decoder"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False}
    vocab = {p: i for i, (p, _) in enumerate(d["model"]["vocab"])}
    extra = [("\u2581the", True, False, False), ("my_tab", False, True, True), ("<sep>", False, False, False)]
    for content, normalized, lstrip, rstrip in extra:
        if content in vocab:
            d["added_tokens"] = [a for a in d["added_tokens"] if a["content"] != content]
            d["added_tokens"].append({"id": vocab[content], "content": content, "single_word": False, "lstrip": lstrip,
                                      "rstrip": rstrip, "normalized": normalized, "special": False})
        else:
            d["model"]["vocab"].append([content, -20.0])
            d["added_tokens"].append({"id": len(d["model"]["vocab"]) - 1, "content": content, "single_word": False,
                                      "lstrip": lstrip, "rstrip": rstrip, "normalized": normalized, "special": False})
    d["added_tokens"].sort(key=lambda a: a["id"])
    return d


def hf_fixtures(name, ts):
    import sentencepiece as spm
    from tokenizers import Tokenizer
    from transformers.convert_slow_tokenizer import SpmConverter

    src = "uni-unk" if name == "uni-t5" else name

    class Orig:
        vocab_file = os.path.join(HERE, src + ".model")
        add_prefix_space = True
        legacy = True

    class Conv(SpmConverter):
        handle_byte_fallback = name.endswith("-bf")

    tok = Conv(Orig()).converted()
    path = os.path.join(HERE, name + ".json")
    tok.save(path)
    if name == "uni-t5":
        d = variant(json.load(open(path, encoding="utf-8")))
        with open(path, "w", encoding="utf-8") as f:
            json.dump(d, f, ensure_ascii=False)
    tok = Tokenizer.from_file(path)
    sp = spm.SentencePieceProcessor(model_file=Orig.vocab_file)
    differ = 0
    with open(os.path.join(HERE, "hf-expected-" + name + ".jsonl"), "w", encoding="utf-8") as f:
        for t in ts:
            ids = tok.encode(t, add_special_tokens=False).ids
            tok.encode_special_tokens = True
            plain = tok.encode(t, add_special_tokens=False).ids
            tok.encode_special_tokens = False
            differ += ids != sp.encode(t)
            rec = {"ids": ids, "decoded": tok.decode(ids, skip_special_tokens=False)}
            if plain != ids:
                rec["plain"] = plain
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    rng = random.Random(6)
    n = tok.get_vocab_size()
    with open(os.path.join(HERE, "hf-decode-" + name + ".jsonl"), "w", encoding="utf-8") as f:
        for _ in range(300):
            ids = [rng.randrange(n) if rng.random() < 0.6 else rng.randint(0, 300) for _ in range(rng.randint(0, 12))]
            f.write(json.dumps({"ids": ids, "decoded": tok.decode(ids, skip_special_tokens=False)}, ensure_ascii=False) + "\n")
    print(name + ".json: HF ids differ from sentencepiece on", differ, "of", len(ts), "texts")


def main():
    os.makedirs(WORK, exist_ok=True)
    if sys.argv[1:] == ["hf"]:  # only the tokenizer.json fixtures, from the committed models
        ts = [json.loads(l)["text"] for l in open(os.path.join(HERE, "texts.jsonl"), encoding="utf-8")]
        for name in ["uni-bf", "uni-unk", "uni-t5"]:
            hf_fixtures(name, ts)
        return
    import mistral_common

    data = os.path.join(os.path.dirname(mistral_common.__file__), "data")
    shutil.copy(os.path.join(data, "tokenizer.model.v1"), os.path.join(HERE, "mistral-v1.model"))
    shutil.copy(os.path.join(data, "mistral_instruct_tokenizer_240323.model.v3"), os.path.join(HERE, "mistral-v3.model"))
    ts = texts()
    with open(os.path.join(HERE, "texts.jsonl"), "w", encoding="utf-8") as f:
        for t in ts:
            f.write(json.dumps({"text": t}, ensure_ascii=False) + "\n")
    names = train(WORK)
    for name in ["mistral-v1", "mistral-v3"] + names:
        sp_fixtures(name, ts)
    for name in ["uni-bf", "uni-unk", "uni-t5"]:
        hf_fixtures(name, ts)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Builds the fixtures of the SentencePiece-style BPE family (tok_spbpe.c).

Two venvs (the converter of transformers 5 cannot convert these files, and
transformers 4.x pins tokenizers < 0.23):
    python3 -m venv A && A/bin/pip install "transformers<5" mistral-common sentencepiece protobuf
    python3 -m venv B && B/bin/pip install tokenizers==0.23.3 sentencepiece==0.2.3 protobuf
    A/bin/python tests/data/tok/make_fixtures.py convert  # writes DIR/v1.json, DIR/v3.json (DIR below)
    B/bin/python tests/data/tok/make_fixtures.py fixtures
Step `convert` turns mistral-common's SentencePiece models (Mistral-7B v0.1
`tokenizer.model.v1`, Codestral Mamba's `mistral_instruct_tokenizer_240323.model.v3`)
into tokenizer.json with transformers' LlamaTokenizerFast(from_slow=True,
legacy=True, add_prefix_space=True): the configuration of the files on the Hub
(normalizer Prepend + Replace, no pre-tokenizer, byte_fallback, unk <unk>).
Step `fixtures` writes into tests/data/tok/:
- mistral-v1.json: the converted v1 file as is (the real tokenizer);
- v3-small-legacy.json, v3-small-meta.json: the v3 file trimmed to its first
  4000 merges (kept: the tokens those merges use and make, every single
  character, the 256 <0xXX> tokens, the 771 control/user tokens; ids renumbered
  densely), in the converter's legacy configuration and in its non-legacy one
  (Metaspace pre-tokenizer, prepend_scheme first, split false);
- unk-small.json, unk-nofuse.json: v1 trimmed to 2000 merges without
  byte_fallback and without the CJK/emoji characters (so they become <unk>),
  Metaspace(always, split true) and a Metaspace decoder, ignore_merges, and
  added tokens with normalized/lstrip/rstrip/single_word; fuse_unk true /
  false (and prepend_scheme never, split false, for nofuse);
- v1-small-norm.json: v1 trimmed to 2000 merges in its own (legacy)
  configuration with added tokens that are normalized (so Prepend and Replace
  apply to them: "hello" is matched as "\u2581hello"), lstrip, rstrip,
  single_word, and a special normalized one;
- expected-NAME.jsonl: for each text of texts.jsonl, HF's ids with special
  tokens parsed ("parse") and with encode_special_tokens=True ("plain"), and
  HF decode(parse ids, skip_special_tokens=False) ("decoded"); "plain" only
  where it differs from "parse";
- decode-NAME.jsonl (mistral-v1, unk-small, v1-small-norm): 1000 seeded
  random id lists (many <0xXX> tokens) and HF's decode of each;
- texts.jsonl: tests/data/bpe/corpus.jsonl, hand-written cases and 3000
  seeded random strings.
It also checks that HF's ids of the full converted v1 and v3 files equal
sentencepiece's encode(text) on every text (plain mode: sentencepiece never
parses control tokens), and prints the count of differences."""
import glob
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")
WORK = os.environ.get("TOK_WORK", "/tmp/tok-fixtures")


def convert():
    from transformers import LlamaTokenizerFast

    data = glob.glob(os.path.join(sys.prefix, "lib/python3*/site-packages/mistral_common/data"))[0]
    os.makedirs(WORK, exist_ok=True)
    for name, f in [("v1", "tokenizer.model.v1"), ("v3", "mistral_instruct_tokenizer_240323.model.v3")]:
        t = LlamaTokenizerFast(vocab_file=os.path.join(data, f), legacy=True, add_prefix_space=True, from_slow=True)
        t.backend_tokenizer.save(os.path.join(WORK, name + ".json"))
        os.system(f"cp {os.path.join(data, f)} {os.path.join(WORK, name + '.model')}")


HAND = [
    "", " ", "  ", "   ", "\n", "\t", "\r\n", " \n ", "Hello world", " Hello world", "Hello world ", "Hello  world",
    "Hello   world   ", "  leading", "trailing  ", "a\tb\tc", "line1\nline2\n\nline4", "\n\nx", "x\n\n",
    "1234567890 3.14159 1,000,000 007", "ä ö ü ß é è ñ ç", "e\u0301 a\u0308 n\u0303 \u0915\u094d\u0937",
    "中文分词测试，你好世界。", "日本語のテキスト", "한국어 텍스트", "Русский текст", "العربية", "עברית",
    "🙂🙃 👍🏽 👨\u200d👩\u200d👧 🇫🇷", "\u2581 already\u2581metaspace \u2581\u2581", "<s>", "</s>", "<unk>",
    "a<s>b</s>c", " <s> x </s> ", "<s><s></s>", "[INST] hi [/INST]", "[INST][/INST]", "x[INST]y",
    "[REFERENCE_DOC_1] ref", "[TOOL_CALLS]", "<0x41>", "<0x0A> <0xZZ>", "\u0000nul", "\u000b\u000c\u0085\u2028",
    "\U0001F600" * 20, "a" * 300, " " * 50, "\n" * 30, "ab" * 100, "xyz hello Hello HELLO\tmy_tab ",
    "hello world xyz xyzw wxyz", "def f(x):\n    return x * 2  # comment\n", "\ufeffBOM", "\u00a0nbsp\u3000ideo",
    "\U00010348 \U0001D11E \U000E0001", "\ue000 private \U000F0000", "ﬁ ﬂ ℌ ① ㎏",
]

ALPHABET = (list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") + [" "] * 12 +
            ["\n", "\n", "\t", "\r", ".", ",", "!", "?", "'", '"', "-", "_", "(", ")", "<", ">", "/", "#", "\u2581"] +
            list("äöüßéèñç") + ["e\u0301", "\u0308", "\u0327"] + list("中文分词你好世界日本語") + list("한국어") +
            list("Русскийтекст") + ["🙂", "👍🏽", "👨\u200d👩\u200d👧", "🇫🇷", "\U0001F9EA"] +
            ["\u00a0", "\u3000", "\u2028", "\u0085", "\u000b"] +
            ["<s>", "</s>", "<unk>", "[INST]", "[/INST]", "[REFERENCE_DOC_1]", "<0x41>"] +
            ["\ue000", "\U00010348", "\u0915\u094d", "ﬁ", "①", "hello", "Hello", "xyz", "my_tab", " world", "<sep>", "  ", "   "])


def texts():
    out = []
    with open(os.path.join(ROOT, "tests", "data", "bpe", "corpus.jsonl"), encoding="utf-8") as f:
        for line in f:
            out.append(json.loads(line)["text"])
    out += HAND
    rng = random.Random(10)
    for _ in range(3000):
        n = rng.randint(1, 24)
        out.append("".join(rng.choice(ALPHABET) for _ in range(n)))
    return out


def trim(d, n_merges, keep_ids, drop_chars=()):
    m = d["model"]
    vocab = m["vocab"]
    merges = [tuple(x) if isinstance(x, list) else tuple(x.split(" ")) for x in m["merges"][:n_merges]]
    keep = set()
    for a, b in merges:
        keep.update((a, b, a + b))
    for tok, i in vocab.items():
        if i < keep_ids or len(tok) == 1 or (len(tok) == 6 and tok.startswith("<0x")):
            keep.add(tok)
    keep -= set(drop_chars)
    merges = [(a, b) for a, b in merges if a in keep and b in keep and a + b in keep]
    order = sorted(keep, key=lambda t: vocab[t])
    new = {t: i for i, t in enumerate(order)}
    m["vocab"] = new
    m["merges"] = [list(x) for x in merges]
    remap = {vocab[t]: new[t] for t in order}
    d["added_tokens"] = [dict(a, id=remap[a["id"]]) for a in d["added_tokens"] if a["id"] in remap]
    if d.get("post_processor"):
        d["post_processor"] = None
    return d


def fixtures():
    from tokenizers import Tokenizer
    import sentencepiece as spm

    T = texts()
    with open(os.path.join(HERE, "texts.jsonl"), "w", encoding="utf-8") as f:
        for t in T:
            f.write(json.dumps({"text": t}, ensure_ascii=False) + "\n")
    # the converted files against sentencepiece itself
    for name in ("v1", "v3"):
        tok = Tokenizer.from_file(os.path.join(WORK, name + ".json"))
        tok.encode_special_tokens = True
        sp = spm.SentencePieceProcessor(model_file=os.path.join(WORK, name + ".model"))
        bad = [t for t in T if tok.encode(t, add_special_tokens=False).ids != sp.encode(t)]
        print(f"{name}: HF vs sentencepiece: {len(bad)} of {len(T)} texts differ", [b[:40] for b in bad[:5]])
    v1 = json.load(open(os.path.join(WORK, "v1.json"), encoding="utf-8"))
    v3 = json.load(open(os.path.join(WORK, "v3.json"), encoding="utf-8"))
    sets = {}
    os.system(f"cp {os.path.join(WORK, 'v1.json')} {os.path.join(HERE, 'mistral-v1.json')}")
    sets["mistral-v1"] = None
    small = trim(json.loads(json.dumps(v3)), 4000, 771)
    sets["v3-small-legacy"] = small
    meta = json.loads(json.dumps(small))
    meta["normalizer"] = None
    meta["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False}
    sets["v3-small-meta"] = meta
    cjk = [t for t in v1["model"]["vocab"] if len(t) == 1 and ord(t) >= 0x2E80]
    unk = trim(json.loads(json.dumps(v1)), 2000, 3, cjk)
    unk["normalizer"] = None
    unk["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
    unk["decoder"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
    unk["model"]["byte_fallback"] = False
    unk["model"]["ignore_merges"] = True
    nid = len(unk["model"]["vocab"])
    extra = [("my_tab", dict(lstrip=True, rstrip=True)), ("xyz", dict(single_word=True)),
             ("hello", dict(normalized=True)), ("Hello", dict(normalized=False))]
    for i, (c, flags) in enumerate(extra):
        a = {"id": nid + i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": False}
        a.update(flags)
        unk["added_tokens"].append(a)
    sets["unk-small"] = unk
    nofuse = json.loads(json.dumps(unk))
    nofuse["model"]["fuse_unk"] = False
    nofuse["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "never", "split": False}
    nofuse["decoder"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "never", "split": False}
    sets["unk-nofuse"] = nofuse
    norm = trim(json.loads(json.dumps(v1)), 2000, 3)
    nid = len(norm["model"]["vocab"])
    extra = [("hello", dict(normalized=True)), (" world", dict(normalized=True)), ("my_tab", dict(lstrip=True)),
             ("xyz", dict(rstrip=True, single_word=True)), ("<sep>", dict(special=True, normalized=True))]
    for i, (c, flags) in enumerate(extra):
        a = {"id": nid + i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": False}
        a.update(flags)
        norm["added_tokens"].append(a)
    sets["v1-small-norm"] = norm
    for name, d in sets.items():
        path = os.path.join(HERE, name + ".json")
        if d is not None:
            Tokenizer.from_str(json.dumps(d)).save(path)  # HF's own serialization of it
        tok = Tokenizer.from_file(path)
        with open(os.path.join(HERE, "expected-" + name + ".jsonl"), "w", encoding="utf-8") as f:
            for t in T:
                tok.encode_special_tokens = False
                parse = tok.encode(t, add_special_tokens=False).ids
                tok.encode_special_tokens = True
                plain = tok.encode(t, add_special_tokens=False).ids
                dec = tok.decode(parse, skip_special_tokens=False)
                o = {"parse": parse, "decoded": dec}
                if plain != parse:
                    o["plain"] = plain
                f.write(json.dumps(o, ensure_ascii=False) + "\n")
        print(name, os.path.getsize(path))
        if name in ("mistral-v1", "unk-small", "v1-small-norm"):
            random_decodes(tok, os.path.join(HERE, "decode-" + name + ".jsonl"))


def random_decodes(tok, out):
    """1000 random id lists (many <0xXX> byte tokens, so that invalid UTF-8
    runs occur; low ids: <unk>, <s>, </s>) with HF's decode of each."""
    n_ids = tok.get_vocab_size(with_added_tokens=True)
    byte_ids = [i for i in (tok.token_to_id("<0x%02X>" % b) for b in range(256)) if i is not None]
    rng = random.Random(7)
    with open(out, "w", encoding="utf-8") as f:
        for _ in range(1000):
            ids = []
            for _ in range(rng.randint(0, 30)):
                c = rng.random()
                ids.append(rng.choice(byte_ids) if c < 0.4 and byte_ids else
                           rng.randint(0, 10) if c < 0.5 else rng.randrange(n_ids))
            f.write(json.dumps({"ids": ids, "decoded": tok.decode(ids, skip_special_tokens=False)},
                               ensure_ascii=False) + "\n")


if __name__ == "__main__":
    {"convert": convert, "fixtures": fixtures}[sys.argv[1]]()

#!/usr/bin/env python3
"""Builds the fixtures of the Split + ByteLevel pipelines with Hugging Face
`tokenizers` (0.23.3), for two patterns:
- llama3: Llama-3's (= tiktoken cl100k's) pattern, BPE with ignore_merges,
  a TemplateProcessing post-processor (only used with add_special_tokens=True);
- qwen2: Qwen2's pattern (the same with single digits), an NFC normalizer,
  BPE without ignore_merges, a ByteLevel post-processor, as Qwen2's file has.
For each NAME:
- tests/data/bpe/NAME-tiny-tokenizer.json: a small BPE trained on the test
  corpus with pre-tokenizer Sequence [Split(pattern, Isolated),
  ByteLevel(add_prefix_space=False, use_regex=False)], ByteLevel decoder.
  For llama3, so that ignore_merges matters, 40 frequent corpus words that
  the merges split into 2+ tokens are added to the vocabulary without
  merges: HF then encodes them as one id (checked below: the ids differ from
  ignore_merges=False).
- tests/data/bpe/expected-NAME.jsonl: per corpus document, HF ids with
  special tokens parsed and with encode_special_tokens=True, and HF decode.
- tests/data/bpe/NAME-splits.jsonl: 3000 seeded random strings over an
  alphabet chosen for the regex (contractions in every case incl. U+017F,
  letters, marks, digits, Unicode spaces, CR/LF, punctuation, CJK, emoji)
  with HF's pre-tokenizer split (piece end offsets in UTF-8 bytes) and ids.
Developer tool: python3 -m venv V && V/bin/pip install tokenizers==0.23.3
    V/bin/python tests/bpe/make_split.py"""
import json
import os
import random

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "bpe")
PATTERNS = {
    "llama3": (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+"),
    "qwen2": (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
              r"|\s*[\r\n]+|\s+(?!\S)|\s+"),
}


def pre_tokenizer(name):
    return pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(PATTERNS[name]), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])


def build_qwen2(texts):
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizer("qwen2")
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=800, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"], show_progress=False)
    tok.train_from_iterator(texts * 3, trainer)
    return tok


def build_llama3(texts):
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizer("llama3")
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=800, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=["<|begin_of_text|>", "<|end_of_text|>"], show_progress=False)
    tok.train_from_iterator(texts * 3, trainer)
    # whole words without merges, so that ignore_merges decides their ids
    counts = {}
    for t in texts:
        for piece, _ in tok.pre_tokenizer.pre_tokenize_str(t):
            if len(piece) >= 4:
                counts[piece] = counts.get(piece, 0) + 1
    cfg = json.loads(tok.to_str())
    vocab = cfg["model"]["vocab"]
    added = 0
    # pieces are in byte-level form, as the vocabulary holds them; one that
    # is not in the vocabulary is 2+ tokens after the merges
    for piece, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if added == 40:
            break
        if piece in vocab:
            continue
        vocab[piece] = len(vocab)
        added += 1
    bos = vocab["<|begin_of_text|>"]
    tok = Tokenizer.from_str(json.dumps(cfg))
    tok.post_processor = processors.TemplateProcessing(single="<|begin_of_text|> $A",
                                                       special_tokens=[("<|begin_of_text|>", bos)])
    tok.add_special_tokens([AddedToken("<|eot_id|>", normalized=False, special=True)])
    return tok


def make(name, texts):
    tok = build_llama3(texts) if name == "llama3" else build_qwen2(texts)
    path = os.path.join(DATA, "%s-tiny-tokenizer.json" % name)
    tok.save(path, pretty=False)
    tok = Tokenizer.from_file(path)
    cfg = json.loads(open(path, encoding="utf-8").read())
    cfg["model"]["ignore_merges"] = not cfg["model"]["ignore_merges"]
    merging = Tokenizer.from_str(json.dumps(cfg))
    differ = 0
    with open(os.path.join(DATA, "expected-%s.jsonl" % name), "w", encoding="utf-8", newline="\n") as out:
        for l in open(os.path.join(DATA, "corpus.jsonl"), encoding="utf-8"):
            d = json.loads(l)
            tok.encode_special_tokens = False
            parse = tok.encode(d["text"], add_special_tokens=False).ids
            tok.encode_special_tokens = True
            plain = tok.encode(d["text"], add_special_tokens=False).ids
            tok.encode_special_tokens = False
            differ += parse != merging.encode(d["text"], add_special_tokens=False).ids
            dec = tok.decode(parse, skip_special_tokens=False)
            out.write(json.dumps({"id": d["id"], "parse": parse, "plain": plain, "decoded": dec},
                                 ensure_ascii=False) + "\n")
    if name == "llama3":
        assert differ > 10, differ
    alphabet = (["'", "'", "s", "S", "\u017f", "t", "T", "r", "R", "e", "E", "v", "V", "m", "M", "l", "L", "d", "D",
                 "a", "Z", "\u00e9", "\u0301", "\u0416", "\u4e2d", "\u0661", "1", "2", "9", "\u00b2", " ", " ", " ",
                 "\t", "\n", "\r", "\r\n", "\u00a0", "\u2028", "\u3000", "\x0b", "\x85", "!", ".", "-", "\u00bf",
                 "\U0001F600", "\u200d", "_", "\u02b0"])
    rng = random.Random(3)
    sp = pre_tokenizer(name)
    with open(os.path.join(DATA, "%s-splits.jsonl" % name), "w", encoding="utf-8", newline="\n") as out:
        for i in range(3000):
            s = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14)))
            ends, pos = [], 0
            for piece, (a, b) in sp.pre_tokenize_str(s):
                pos = len(s[:b].encode("utf-8"))
                ends.append(pos)
            ids = tok.encode(s, add_special_tokens=False).ids
            out.write(json.dumps({"text": s, "ends": ends, "ids": ids}, ensure_ascii=False) + "\n")
    print("wrote %s-tiny-tokenizer.json (vocab %d), expected-%s.jsonl (%d docs differ with ignore_merges "
          "flipped), %s-splits.jsonl" % (name, tok.get_vocab_size(), name, differ, name))


def main():
    texts = [json.loads(l)["text"] for l in open(os.path.join(DATA, "corpus.jsonl"), encoding="utf-8")]
    for name in PATTERNS:
        make(name, texts)


if __name__ == "__main__":
    main()

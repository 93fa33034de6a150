#!/usr/bin/env python3
"""Builds the fixtures of the general pre-tokenizer pipeline of the byte-level
BPE family (tokenize/models/bpe_load.c, bpe_encode.c; tests/cli/tok_bpe_pipeline.sh).

    python3 -m venv A && A/bin/pip install "transformers<5" tiktoken mistral-common
    A/bin/python tests/data/bpepipe/make_fixtures.py convert
    python3 -m venv V && V/bin/pip install tokenizers==0.23.3
    V/bin/python tests/data/bpepipe/make_fixtures.py

Step `convert` makes tekken.json and o200k.json: ../tiktoken/small.tiktoken
(the first 6000 ranks of Mistral's tekken_240911.json plus 106 of ours)
converted by transformers' TikTokenConverter with the tekken and the o200k
pattern, as tokenizer.json files of Mistral's tekken models are made (a Split
with the pattern, Isolated, then ByteLevel without regex, ignore_merges).

The main step trains small byte-level BPE models with HF `tokenizers` itself
(BpeTrainer, ByteLevel alphabet) on the first 400 texts of ../tok/texts.jsonl,
each under a pre-tokenizer pipeline that is none of the fast forms sluice
recognizes, and saves them as tokenizer.json. Ties are broken differently
from run to run, so all files are regenerated together.
expected.jsonl.gz: for every text of ../tiktoken/texts.jsonl (which begins
with ../tok/texts.jsonl) and ../tok/wp-texts.jsonl, per fixture HF's
encode(text, add_special_tokens=False).ids ("NAME") and decode(those ids)
("NAME.dec") where it differs from the text, and for clip.json (whose
post-processor is RobertaProcessing) encode(text, add_special_tokens=True)
("clip.ws"); the trained files skip the
1500 random strings of ../tiktoken/texts.jsonl (after its 3247 + 35 texts). decode.jsonl: seeded random id
lists for the files whose decoder is not ByteLevel, with HF's decode.
"""
import gzip
import json
import os
import random
import sys

D = os.path.dirname(os.path.abspath(__file__))
TEKKEN_PAT = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
CONTR = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
O200K_PAT = "|".join([
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+" + CONTR,
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*" + CONTR,
    r"\p{N}{1,3}", r" ?[^\s\p{L}\p{N}]+[\r\n/]*", r"\s*[\r\n]+", r"\s+(?!\S)", r"\s+"])


def convert():
    from transformers.convert_slow_tokenizer import TikTokenConverter
    for name, pat in (("tekken", TEKKEN_PAT), ("o200k", O200K_PAT)):
        conv = TikTokenConverter(vocab_file=os.path.join(D, "..", "tiktoken", "small.tiktoken"), pattern=pat,
                                 additional_special_tokens=["<s>", "</s>", "[INST]", "[/INST]"])
        tok = conv.converted()
        save(tok, name)


def save(tok, name):
    with open(os.path.join(D, name + ".json"), "w", encoding="utf-8") as f:
        f.write(tok.to_str(pretty=False))


def texts():
    t = [json.loads(l)["text"] for l in open(os.path.join(D, "..", "tiktoken", "texts.jsonl"), encoding="utf-8")]
    return t + [json.loads(l)["text"] for l in open(os.path.join(D, "..", "tok", "wp-texts.jsonl"), encoding="utf-8")]


def train_texts():
    return [json.loads(l)["text"] for l in open(os.path.join(D, "..", "tok", "texts.jsonl"), encoding="utf-8")][:400]


def build():
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers as N, pre_tokenizers as P, \
        processors, trainers
    alphabet = P.ByteLevel.alphabet()

    def train(pre, size=900, norm=None, dec=None, unk=None, fuse_unk=False, **kw):
        tok = Tokenizer(models.BPE(unk_token=unk, fuse_unk=fuse_unk, **kw))
        if norm is not None:
            tok.normalizer = norm
        tok.pre_tokenizer = pre
        tok.decoder = dec if dec is not None else decoders.ByteLevel()
        tr = trainers.BpeTrainer(vocab_size=size, initial_alphabet=alphabet, special_tokens=["<|endoftext|>"],
                                 show_progress=False, **kw)
        tok.train_from_iterator(train_texts(), tr)
        return tok

    fx = {}
    # Whitespace, then ByteLevel with a prefix space and no regex
    fx["ws"] = train(P.Sequence([P.Whitespace(), P.ByteLevel(add_prefix_space=True, use_regex=False)]))
    # Split (regex) isolated and merged_with_previous inverted, then ByteLevel with its regex, no prefix
    fx["split-a"] = train(P.Sequence([
        P.Split(Regex(r"\p{N}+"), behavior="isolated"),
        P.Split(Regex(r"[aeiou]"), behavior="merged_with_previous", invert=True),
        P.ByteLevel(add_prefix_space=False, use_regex=True)]))
    # Split (string) merged_with_next, Split (regex) contiguous and removed, ByteLevel with a prefix space
    fx["split-b"] = train(P.Sequence([
        P.Split(" ", behavior="merged_with_next"),
        P.Split(Regex(r"\p{P}"), behavior="contiguous"),
        P.Split(Regex(r"x+|\s{2,}"), behavior="removed"),
        P.ByteLevel(add_prefix_space=True, use_regex=False)]), norm=N.NFKC())
    # Punctuation, Digits (individual), ByteLevel with regex and prefix space
    fx["punct-digits"] = train(P.Sequence([P.Punctuation(), P.Digits(individual_digits=True),
                                           P.ByteLevel(add_prefix_space=True, use_regex=True)]))
    # steps after ByteLevel see its byte-level text: Split on "Ġ" (a space), Digits, a Falcon-like Split
    fx["after"] = train(P.Sequence([
        P.Punctuation(behavior="merged_with_next"),
        P.ByteLevel(add_prefix_space=False, use_regex=False),
        P.Split("Ġ", behavior="merged_with_next"),
        P.Digits(individual_digits=False),
        P.Split(Regex(r"[0-9]{2}"), behavior="isolated", invert=True)]))
    # CLIP-style: normalizer, Split (regex) removed inverted, ByteLevel without regex, end_of_word_suffix
    fx["clip"] = train(P.Sequence([
        P.Split(Regex(r"""'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""), behavior="removed",
                invert=True),
        P.ByteLevel(add_prefix_space=False, use_regex=False)]),
        norm=N.Sequence([N.NFC(), N.Replace(Regex(r"\s+"), " "), N.Lowercase()]),
        end_of_word_suffix="</w>", unk="<|endoftext|>")
    fx["clip"].post_processor = processors.RobertaProcessing(("<|endoftext|>", 0), ("<|endoftext|>", 0))
    # continuing_subword_prefix (BERT-like "##") with the GPT-2 regex and a WhitespaceSplit first
    fx["prefix"] = train(P.Sequence([P.WhitespaceSplit(), P.ByteLevel(add_prefix_space=False, use_regex=True)]),
                         continuing_subword_prefix="##")
    # both, and a decoder chain that is not ByteLevel (BPEDecoder, then the ByteLevel decoder)
    fx["affix"] = train(P.Sequence([P.Digits(individual_digits=False),
                                    P.ByteLevel(add_prefix_space=True, use_regex=True)]),
                        continuing_subword_prefix="@@", end_of_word_suffix="</w>",
                        dec=decoders.Sequence([decoders.BPEDecoder(suffix="</w>"), decoders.ByteLevel()]))
    # suffix only, decoded by BPEDecoder alone (the byte-level characters stay)
    fx["suffix-dec"] = train(P.Sequence([P.Whitespace(), P.ByteLevel(add_prefix_space=False, use_regex=False)]),
                             end_of_word_suffix="</w>", dec=decoders.BPEDecoder(suffix="</w>"),
                             unk="<|endoftext|>", fuse_unk=True)
    fx["ws"].add_tokens([AddedToken("hello", normalized=True), AddedToken("xyz", single_word=True)])
    for name in ("tekken", "o200k"):
        fx[name] = Tokenizer.from_file(os.path.join(D, name + ".json"))
    for name, tok in fx.items():
        if name not in ("tekken", "o200k"):
            save(tok, name)
            tok = fx[name] = Tokenizer.from_file(os.path.join(D, name + ".json"))

    recs = []
    n_tok = sum(1 for _ in open(os.path.join(D, "..", "tok", "texts.jsonl"), encoding="utf-8"))
    all_texts = texts()
    for i, t in enumerate(all_texts):
        r = {}
        for name, tok in fx.items():
            if name not in ("tekken", "o200k") and n_tok + 35 <= i < len(all_texts) - 23:
                continue  # the random strings of ../tiktoken/texts.jsonl: for the two converted files only
            ids = tok.encode(t, add_special_tokens=False).ids
            r[name] = ids
            if name == "clip":  # its RobertaProcessing, for --add-special-tokens
                r[name + ".ws"] = tok.encode(t, add_special_tokens=True).ids
            dec = tok.decode(ids, skip_special_tokens=False)
            if dec != t:
                r[name + ".dec"] = dec
        recs.append(r)
    data = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in recs)
    with open(os.path.join(D, "expected.jsonl.gz"), "wb") as f:
        f.write(gzip.compress(data.encode("utf-8"), 9, mtime=0))
    rng = random.Random(12)
    with open(os.path.join(D, "decode.jsonl"), "w", encoding="utf-8") as f:
        for name in ("affix", "suffix-dec"):
            tok = fx[name]
            n = tok.get_vocab_size(with_added_tokens=True)
            for _ in range(200):
                ids = [rng.randrange(n) for _ in range(rng.randrange(1, 16))]
                f.write(json.dumps({"tok": name, "ids": ids, "decoded": tok.decode(ids, skip_special_tokens=False)},
                                   ensure_ascii=False) + "\n")


if __name__ == "__main__":
    if sys.argv[1:] == ["convert"]:
        convert()
    else:
        build()

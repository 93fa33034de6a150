#!/usr/bin/env python3
"""Builds tests/data/bpe/tiny-tokenizer.json with Hugging Face `tokenizers`:
a small byte-level BPE trained on the test corpus, configured to exercise
the tokenizer.json features GPT-NeoX and GPT-2 do not use: a Sequence
normalizer (NFKC + Lowercase), ByteLevel with add_prefix_space=True, merges
in the ["a","b"] pair form, and added tokens with lstrip, rstrip,
single_word, normalized and special set in various ways.
Developer tool: /work/venv-bpe/bin/python tests/bpe/make_tiny.py"""
import json
import os

from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "bpe")


def main():
    texts = [json.loads(l)["text"] for l in open(os.path.join(DATA, "corpus.jsonl"), encoding="utf-8")]
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=["<|endoftext|>"], show_progress=False)
    tok.train_from_iterator(texts * 3, trainer)
    tok.add_special_tokens([AddedToken("<|sep|>", lstrip=True, rstrip=True, normalized=False)])
    tok.add_tokens([AddedToken("fox", single_word=True, normalized=True),
                    AddedToken("Quick", single_word=False, lstrip=True, normalized=True),
                    AddedToken("[MASK]", lstrip=True, normalized=False, special=False),
                    AddedToken("don't", rstrip=True, normalized=True)])
    tok.save(os.path.join(DATA, "tiny-tokenizer.json"), pretty=False)
    print("wrote tiny-tokenizer.json, vocab", tok.get_vocab_size())


if __name__ == "__main__":
    main()

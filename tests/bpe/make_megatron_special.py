#!/usr/bin/env python3
"""Megatron-style references for literal special tokens in the text
(tests/data/bpe/megatron-neox-{parse,plain}.{bin,idx}).

What Megatron-LM's tools/preprocess_data.py (--tokenizer-type
HuggingFaceTokenizer, --append-eod) and datatrove's DocumentTokenizer do with
tests/data/bpe/corpus.jsonl (189 documents, 72 with `<|endoftext|>` or
`<|padding|>` written in the text) and the GPT-NeoX-20B tokenizer.json:

  * ids = Hugging Face `tokenizers` `encode(text).ids`: the default, which
    turns a literal special token into its id ("parse"); with
    `encode_special_tokens = True` it is text ("plain", what sluice's
    `--special plain` gives). add_special_tokens is left at its default (True)
    as Megatron's `tokenizer(text)` and datatrove leave it; GPT-NeoX's
    post-processor (ByteLevel) adds nothing. transformers' own tokenizer on
    the same file (PreTrainedTokenizerFast, as AutoTokenizer loads it for
    Megatron) must give the same ids, and does.
  * a document whose ids are empty is skipped; the others get the EOD id
    (0, `<|endoftext|>`) appended and are one sequence and one document;
  * the .bin/.idx layout of megatron-core's IndexedDatasetBuilder
    (MMIDIDX\\0\\0, version 1, dtype code 8 = uint16 as vocab < 65500,
    sequence count, document-index count, int32 lengths, int64 byte
    pointers, int64 document indices). The writer below is checked first:
    it must rebuild tests/data/shard/mega_u16.{bin,idx}, which megatron-core
    0.16.1 itself wrote (tests/shard/make_megatron_fixture.py), byte for byte.

Developer tool, not run by `make test` (tests/cli/tok_special_megatron.sh
compares sluice's `export megatron` with these files):
    python3 -m venv /tmp/v && /tmp/v/bin/pip install tokenizers transformers
    /tmp/v/bin/python tests/bpe/make_megatron_special.py
(made with tokenizers 0.23.3 and transformers 5.24.0; deterministic)
"""
import json
import os
import struct
import sys

from tokenizers import Tokenizer

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
BPE = os.path.join(ROOT, "tests", "data", "bpe")
SHARD = os.path.join(ROOT, "tests", "data", "shard")
EOD = 0


def megatron_files(docs, vocab):
    """(.bin bytes, .idx bytes) for documents of one sequence each."""
    assert vocab < 65500  # DType.optimal_dtype: uint16, code 8
    lengths, pointers, data, off = [], [], bytearray(), 0
    for d in docs:
        lengths.append(len(d))
        pointers.append(off)
        data += struct.pack("<%dH" % len(d), *d)
        off += 2 * len(d)
    doc_idx = list(range(len(docs) + 1))
    idx = b"MMIDIDX\x00\x00" + struct.pack("<QB", 1, 8)
    idx += struct.pack("<QQ", len(lengths), len(doc_idx))
    idx += struct.pack("<%di" % len(lengths), *lengths)
    idx += struct.pack("<%dq" % len(pointers), *pointers)
    idx += struct.pack("<%dq" % len(doc_idx), *doc_idx)
    return bytes(data), idx


def check_writer():
    docs = [json.loads(l)["ids"] for l in open(os.path.join(SHARD, "mega_u16.jsonl"))]
    b, i = megatron_files([d + [EOD] for d in docs if d], 50277)
    if b != open(os.path.join(SHARD, "mega_u16.bin"), "rb").read() or \
            i != open(os.path.join(SHARD, "mega_u16.idx"), "rb").read():
        sys.exit("the writer here does not reproduce megatron-core's mega_u16")


def main():
    check_writer()
    path = os.path.join(BPE, "neox-tokenizer.json")
    tok = Tokenizer.from_file(path)
    texts = [json.loads(l)["text"] for l in open(os.path.join(BPE, "corpus.jsonl"), encoding="utf-8")]
    try:
        from transformers import PreTrainedTokenizerFast
        hf = PreTrainedTokenizerFast(tokenizer_file=path)
    except ImportError:
        hf = None
    for mode in ("parse", "plain"):
        tok.encode_special_tokens = mode == "plain"
        ids = [tok.encode(t).ids for t in texts]
        if hf is not None and mode == "parse" and [hf(t)["input_ids"] for t in texts] != ids:
            sys.exit("transformers and tokenizers disagree")
        b, i = megatron_files([d + [EOD] for d in ids if d], tok.get_vocab_size())
        for ext, data in ((".bin", b), (".idx", i)):
            with open(os.path.join(BPE, "megatron-neox-%s%s" % (mode, ext)), "wb") as f:
                f.write(data)
        n = sum(1 for t in texts if "<|endoftext|>" in t or "<|padding|>" in t)
        print(mode, len(ids), "documents,", sum(1 for d in ids if d), "written,", n, "with a special token's text,",
              sum(len(d) + 1 for d in ids if d), "tokens")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Builds the XLM-R-class Unigram fixtures of tests/data/xlmr from a file that
a PyPI package ships, and the expected outputs from the reference libraries.

Source: the sdist of `llama-cpp-python` 0.3.36 (PyPI) vendors llama.cpp's
vocabulary-only GGUF files; models/ggml-vocab-nomic-bert-moe.gguf is the
tokenizer of nomic-embed-text-v2-moe, which is XLM-RoBERTa's: 250,002 ids
(Hugging Face order: <s> <pad> </s> <unk>, the 249,997 SentencePiece pieces,
<mask>; padded to 250,048 with [PAD…] entries we drop), their float scores,
and SentencePiece's precompiled charsmap (nmt_nfkc). From it we write what
XLM-R ships:
  xlmr.model.xz  SentencePiece ModelProto in SentencePiece's id order
                 (<unk>=0 <s>=1 </s>=2, then the pieces), as sentencepiece.bpe.model
  xlmr.json.xz   tokenizer.json as transformers' XLMRobertaConverter writes it
                 (Precompiled + Replace(" {2,}"), WhitespaceSplit + Metaspace as in
                 the xlm-roberta-base tokenizer.json, Unigram unk_id 3, <s> $A </s>),
                 saved by `tokenizers`
and, from `sentencepiece` 0.2.3 and `tokenizers` 0.23.3:
  expected.jsonl.xz per text of texts(): {"text", "spm": sentencepiece ids,
                 "hf": HF ids (add_special_tokens=False)}

Run (a venv with sentencepiece==0.2.3 tokenizers==0.23.3 protobuf numpy
unicodedata2==17.0.0):
  pip download --no-deps --no-binary :all: llama-cpp-python==0.3.36
  tar xzf llama_cpp_python-0.3.36.tar.gz
  pip download --no-deps --no-binary :all: graphemeu==0.10.0
  tar xzf graphemeu-0.10.0.tar.gz
  python tests/data/xlmr/make_fixtures.py llama_cpp_python-0.3.36/vendor/llama.cpp \
      graphemeu-0.10.0/unicode-data
(gguf-py is read from the same vendored tree; the venv also needs
unicodedata2==17.0.0, and Python 3.11, whose unicodedata is Unicode 14.0.)"""
import json
import lzma
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def read_gguf(llama):
    sys.path.insert(0, os.path.join(llama, "gguf-py"))
    import gguf
    r = gguf.GGUFReader(os.path.join(llama, "models", "ggml-vocab-nomic-bert-moe.gguf"))
    f = r.fields
    toks = [bytes(f["tokenizer.ggml.tokens"].parts[i]).decode("utf-8") for i in f["tokenizer.ggml.tokens"].data]
    scores = [float(f["tokenizer.ggml.scores"].parts[i][0]) for i in f["tokenizer.ggml.scores"].data]
    cmap = bytes(f["tokenizer.ggml.precompiled_charsmap"].parts[f["tokenizer.ggml.precompiled_charsmap"].data[0]])
    if len(f["tokenizer.ggml.precompiled_charsmap"].data) > 1:
        cmap = bytes(int(f["tokenizer.ggml.precompiled_charsmap"].parts[i][0])
                     for i in f["tokenizer.ggml.precompiled_charsmap"].data)
    assert toks[:4] == ["<s>", "<pad>", "</s>", "<unk>"] and toks[250001] == "<mask>", toks[:5]
    return toks[:250002], scores[:250002], cmap


def write_model(toks, scores, cmap, path):
    from sentencepiece import sentencepiece_model_pb2 as pb
    m = pb.ModelProto()
    P = pb.ModelProto.SentencePiece
    for piece, kind in (("<unk>", P.UNKNOWN), ("<s>", P.CONTROL), ("</s>", P.CONTROL)):
        m.pieces.add(piece=piece, score=0.0, type=kind)
    for t, s in zip(toks[4:250001], scores[4:250001]):
        m.pieces.add(piece=t, score=s, type=P.NORMAL)
    ts = m.trainer_spec
    ts.model_type = pb.TrainerSpec.UNIGRAM
    ts.vocab_size = len(m.pieces)
    ts.unk_id, ts.bos_id, ts.eos_id, ts.pad_id = 0, 1, 2, -1
    ns = m.normalizer_spec
    ns.name = "nmt_nfkc"
    ns.precompiled_charsmap = cmap
    ns.add_dummy_prefix = True
    ns.remove_extra_whitespaces = True
    ns.escape_whitespaces = True
    data = m.SerializeToString()
    with open(path, "wb") as f:
        f.write(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME))
    return data


def write_json(toks, scores, cmap, path):
    import base64
    from tokenizers import Tokenizer
    specials = {0, 1, 2, 3, 250001}
    tj = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": i, "content": toks[i], "single_word": False, "lstrip": i == 250001,
                          "rstrip": False, "normalized": False, "special": True} for i in sorted(specials)],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(cmap).decode()},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "WhitespaceSplit"},
            {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}]},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                      {"Sequence": {"id": "A", "type_id": 0}},
                                      {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                           "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                    {"Sequence": {"id": "A", "type_id": 0}},
                                    {"SpecialToken": {"id": "</s>", "type_id": 0}},
                                    {"SpecialToken": {"id": "</s>", "type_id": 0}},
                                    {"Sequence": {"id": "B", "type_id": 0}},
                                    {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                           "special_tokens": {n: {"id": n, "ids": [i], "tokens": [n]}
                                              for n, i in (("<s>", 0), ("</s>", 2))}},
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": 3, "byte_fallback": False,
                  "vocab": [[t, s if i not in specials else 0.0] for i, (t, s) in enumerate(zip(toks, scores))]},
    }
    tok = Tokenizer.from_str(json.dumps(tj))
    s = tok.to_str()
    with open(path, "wb") as f:
        f.write(lzma.compress(s.encode(), preset=9 | lzma.PRESET_EXTREME))
    return tok


def new_chars(ucd):
    """Code points assigned in Unicode 15.0 to 17.0 (unicodedata2 17.0.0
    knows them, Python 3.11's unicodedata, Unicode 14.0, does not) that the
    cluster rules treat specially: Grapheme_Cluster_Break Extend, ZWJ,
    SpacingMark or Prepend, Extended_Pictographic, or an Indic_Conjunct_Break
    value (GraphemeBreakProperty.txt, emoji-data.txt, DerivedCoreProperties.txt
    of the Unicode 17.0.0 UCD, as scripts/gen/gen_grapheme.py reads them)."""
    import unicodedata
    import unicodedata2
    assert unicodedata2.unidata_version == "17.0.0" and unicodedata.unidata_version == "14.0.0"
    special = set()
    for name, want in (("GraphemeBreakProperty.txt", {"Extend", "ZWJ", "SpacingMark", "Prepend"}),
                       ("emoji-data.txt", {"Extended_Pictographic"}),
                       ("DerivedCoreProperties.txt", {"InCB"})):
        for line in open(os.path.join(ucd, name), encoding="utf-8"):
            f = [x.strip() for x in line.split("#", 1)[0].split(";")]
            if len(f) > 1 and f[1] in want:
                r = f[0].split("..")
                special.update(range(int(r[0], 16), int(r[-1], 16) + 1))
    return [chr(c) for c in sorted(special)
            if unicodedata2.category(chr(c)) != "Cn" and unicodedata.category(chr(c)) == "Cn"]


def texts(ucd):
    """The issue's examples, characters of Unicode 15, 16 and 17 (marks that
    extend a grapheme cluster in 16.0/17.0 but not in ICU 72's 15.0), and
    documents of 200k+ characters (the long-path precision case)."""
    out = ["\u00a0\u0897", "e\u0301\U0001e5ee", "\u00bd\ufe0f\U000113b8", "\u017f\u0897",
           "a\u0897b", "\u0915\u094d\u0937", "x\U0001e5ef y", "\u00e9\U000113bb\U000113c2",
           "\u1b4e\u1b4f", "a\U00016d40", "\u0c5c\u0cdd", "\U0001fae9\U0001faea", "\u1ac5\u1ae0",
           "\U00011b60\U00011b61", "\u0d57\U0001e5ee\u0301",
           "\u00a0\u0897 \u0900\u0897 \u00a0\u1dfa\u0897", "\U0001f469\u200d\U0001f4bb \U0001f1fa\U0001f1f8",
           "\u0915\u094d\u200d\u0937 \u0915\u0300\u094d\u0937", "\u1100\u1161\u11a8 \uac00\u11a8"]
    # each new character after characters the charsmap maps (NBSP, long s,
    # e + combining acute, one half), after a letter, and alone
    new = new_chars(ucd)
    for i in range(0, len(new), 40):
        out.append(" ".join("\u00a0%s \u017f%s e\u0301%s \u00bd%s x%s%s" % ((c,) * 6) for c in new[i:i + 40]))
    rng = random.Random(35)
    b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    out.append("".join(rng.choice(b64) for _ in range(220000)))
    return out


def main():
    llama = sys.argv[1]
    toks, scores, cmap = read_gguf(llama)
    data = write_model(toks, scores, cmap, os.path.join(HERE, "xlmr.model.xz"))
    tok = write_json(toks, scores, cmap, os.path.join(HERE, "xlmr.json.xz"))
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_proto=data)
    lines = []
    for t in texts(sys.argv[2]):
        rec = {"text": t, "spm": sp.encode(t), "hf": tok.encode(t, add_special_tokens=False).ids}
        lines.append(json.dumps(rec, ensure_ascii=False) + "\n")
    with open(os.path.join(HERE, "expected.jsonl.xz"), "wb") as f:
        f.write(lzma.compress("".join(lines).encode(), preset=9))
    print("wrote xlmr.model.xz, xlmr.json.xz, expected.jsonl.xz")


if __name__ == "__main__":
    main()

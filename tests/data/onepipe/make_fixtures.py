#!/usr/bin/env python3
"""Builds the fixtures of the shared pre-tokenizer and post-processor
components in the SentencePiece-style BPE, Unigram and WordPiece families
(tokenize/pre_tokenizers/pretokenizer.c, postproc.c, tok_spbpe.c, tok_unigram.c,
tok_wordpiece.c; tests/cli/tok_onepipe.sh).

    python3 -m venv V && V/bin/pip install tokenizers==0.23.3
    V/bin/python tests/data/onepipe/make_fixtures.py

Trains small models with HF `tokenizers` itself on the first 400 texts of
../tok/texts.jsonl, each under a pre-tokenizer and post-processor that the
family's old loader refused, and saves them as tokenizer.json. Ties are
broken differently from run to run, so all files are regenerated together.
expected.jsonl.gz: for every text of ../tiktoken/texts.jsonl (which begins
with ../tok/texts.jsonl) but its 1500 random strings, and ../tok/wp-texts.jsonl,
per fixture HF's encode(text, add_special_tokens=False).ids ("NAME"),
encode(text, add_special_tokens=True).ids ("NAME.ws") and, where it differs
from the text, decode(ids, skip_special_tokens=False) ("NAME.dec").
"""
import gzip
import json
import os
import sys

D = os.path.dirname(os.path.abspath(__file__))


def texts():
    t = [json.loads(l)["text"] for l in open(os.path.join(D, "..", "tiktoken", "texts.jsonl"), encoding="utf-8")]
    return t + [json.loads(l)["text"] for l in open(os.path.join(D, "..", "tok", "wp-texts.jsonl"), encoding="utf-8")]


def train_texts():
    return [json.loads(l)["text"] for l in open(os.path.join(D, "..", "tok", "texts.jsonl"), encoding="utf-8")][:400]


def build():
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers as N, pre_tokenizers as P, processors, \
        trainers

    def unigram(pre, norm=None, dec=None, post=None):
        tok = Tokenizer(models.Unigram())
        if norm is not None:
            tok.normalizer = norm
        tok.pre_tokenizer = pre
        if dec is not None:
            tok.decoder = dec
        tr = trainers.UnigramTrainer(vocab_size=700, special_tokens=["<unk>", "[CLS]", "[SEP]", "<s>", "</s>"],
                                     unk_token="<unk>", show_progress=False)
        tok.train_from_iterator(train_texts(), tr)
        if post is not None:
            tok.post_processor = post(tok)
        return tok

    def spbpe(pre, norm=None, dec=None, post=None, limit=150, unk="<unk>", fuse_unk=False, **kw):
        """A SentencePiece-style BPE: characters (a limited alphabet), <0xXX>
        byte tokens appended and byte_fallback on."""
        tok = Tokenizer(models.BPE(unk_token=unk, fuse_unk=fuse_unk, **kw))
        if norm is not None:
            tok.normalizer = norm
        tok.pre_tokenizer = pre
        tok.decoder = dec
        tr = trainers.BpeTrainer(vocab_size=900, special_tokens=["<unk>", "<s>", "</s>"], limit_alphabet=limit,
                                 show_progress=False, **kw)
        tok.train_from_iterator(train_texts(), tr)
        j = json.loads(tok.to_str())
        vocab = j["model"]["vocab"]
        for b in range(256):
            vocab.setdefault("<0x%02X>" % b, len(vocab))
        j["model"]["byte_fallback"] = True
        tok = Tokenizer.from_str(json.dumps(j))
        if post is not None:
            tok.post_processor = post(tok)
        return tok

    def bert(tok):
        return processors.BertProcessing(("[SEP]", tok.token_to_id("[SEP]")), ("[CLS]", tok.token_to_id("[CLS]")))

    def roberta(tok):
        return processors.RobertaProcessing(("</s>", tok.token_to_id("</s>")), ("<s>", tok.token_to_id("<s>")))

    def template(tok):
        return processors.TemplateProcessing(single="<s> $A </s> </s>", pair="<s> $A </s> $B:1 </s>:1",
                                             special_tokens=[("<s>", tok.token_to_id("<s>")),
                                                             ("</s>", tok.token_to_id("</s>"))])

    def seq(tok):
        return processors.Sequence([processors.ByteLevel(trim_offsets=False), template(tok)])

    llama_dec = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                   decoders.Strip(" ", 1, 0)])
    fx = {}
    # Unigram: WhitespaceSplit, Punctuation, Digits (individual); BertProcessing
    fx["uni-punct"] = unigram(P.Sequence([P.WhitespaceSplit(), P.Punctuation(), P.Digits(individual_digits=True)]),
                              post=bert, dec=decoders.Metaspace())
    # Unigram: NFKC + Strip; Split (regex) isolated, then Metaspace "first" with split; TemplateProcessing
    fx["uni-split"] = unigram(P.Sequence([P.Split(Regex(r"\p{N}+|[,.;]"), behavior="isolated"),
                                          P.Metaspace(prepend_scheme="first", split=True)]),
                              norm=N.Sequence([N.NFKC(), N.Strip()]), dec=decoders.Metaspace(prepend_scheme="first"),
                              post=template)
    # Unigram: Whitespace, then BertPreTokenizer; RobertaProcessing
    fx["uni-ws"] = unigram(P.Sequence([P.Whitespace(), P.BertPreTokenizer()]), norm=N.Lowercase(), post=roberta)
    # SentencePiece-style BPE: Split (punctuation, isolated), Metaspace "first" without split; Llama decoders;
    # TemplateProcessing
    fx["sp-split"] = spbpe(P.Sequence([P.Split(Regex(r"\p{P}+"), behavior="isolated"),
                                       P.Metaspace(prepend_scheme="first", split=False)]),
                           norm=N.Strip(left=True, right=False), dec=llama_dec, post=template)
    # WhitespaceSplit + Metaspace (always), continuing_subword_prefix, fuse_unk; Sequence [ByteLevel, Template]
    fx["sp-prefix"] = spbpe(P.Sequence([P.WhitespaceSplit(), P.Metaspace(prepend_scheme="always")]),
                            dec=decoders.Metaspace(), continuing_subword_prefix="##", fuse_unk=True, post=seq)
    # Digits, Punctuation, Metaspace (never, split); end_of_word_suffix; BertProcessing
    fx["sp-suffix"] = spbpe(P.Sequence([P.Digits(individual_digits=False), P.Punctuation(),
                                        P.Metaspace(prepend_scheme="never", split=True)]),
                            dec=decoders.Sequence([decoders.BPEDecoder(suffix="</w>"), decoders.ByteFallback()]),
                            end_of_word_suffix="</w>", limit=120, post=lambda t: processors.BertProcessing(
                                ("</s>", t.token_to_id("</s>")), ("<s>", t.token_to_id("<s>"))))
    # WordPiece under Metaspace ("first", split) and Punctuation; Lowercase + Strip; BertProcessing
    wp = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    wp.normalizer = N.Sequence([N.Strip(), N.Lowercase()])
    wp.pre_tokenizer = P.Sequence([P.Metaspace(prepend_scheme="first"), P.Punctuation()])
    wp.decoder = decoders.WordPiece()
    wp.train_from_iterator(train_texts(), trainers.WordPieceTrainer(
        vocab_size=900, special_tokens=["[UNK]", "[CLS]", "[SEP]"], show_progress=False))
    wp.post_processor = bert(wp)
    fx["wp-meta"] = wp
    # WordLevel under Metaspace (always, no split) after WhitespaceSplit
    wl = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    wl.pre_tokenizer = P.Sequence([P.WhitespaceSplit(), P.Metaspace(replacement="_", split=False)])
    wl.train_from_iterator(train_texts(), trainers.WordLevelTrainer(
        vocab_size=900, special_tokens=["[UNK]", "[CLS]", "[SEP]"], show_progress=False))
    wl.post_processor = bert(wl)
    fx["wl-meta"] = wl
    for name, tok in fx.items():
        with open(os.path.join(D, name + ".json"), "w", encoding="utf-8") as f:
            f.write(tok.to_str(pretty=False))
        fx[name] = Tokenizer.from_file(os.path.join(D, name + ".json"))

    recs = []
    n_tok = sum(1 for _ in open(os.path.join(D, "..", "tok", "texts.jsonl"), encoding="utf-8"))
    all_texts = texts()
    for i, t in enumerate(all_texts):
        if n_tok + 35 <= i < len(all_texts) - 23:
            continue  # the random strings of ../tiktoken/texts.jsonl
        r = {}
        for name, tok in fx.items():
            ids = tok.encode(t, add_special_tokens=False).ids
            r[name] = ids
            r[name + ".ws"] = tok.encode(t, add_special_tokens=True).ids
            dec = tok.decode(ids, skip_special_tokens=False)
            if dec != t:
                r[name + ".dec"] = dec
        recs.append(r)
    data = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in recs)
    with open(os.path.join(D, "expected.jsonl.gz"), "wb") as f:
        f.write(gzip.compress(data.encode("utf-8"), 9, mtime=0))


if __name__ == "__main__":
    build()
    sys.exit(0)

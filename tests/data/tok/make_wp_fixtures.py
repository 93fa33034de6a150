#!/usr/bin/env python3
"""Builds the fixtures of the WordPiece / WordLevel family (tok_wordpiece.c).

    python3 -m venv A && A/bin/pip install "transformers<5" gguf
    A/bin/python tests/data/tok/make_wp_fixtures.py bge ggml-vocab-bert-bge.gguf
    python3 -m venv V && V/bin/pip install tokenizers==0.23.3
    V/bin/python tests/data/tok/make_wp_fixtures.py
    ONLY_COMPONENTS=1 V/bin/python tests/data/tok/make_wp_fixtures.py   # all but the trained files

Step `bge` makes bert-bge.json, a real BERT tokenizer: the vocabulary of
llama.cpp's models/ggml-vocab-bert-bge.gguf (BAAI bge-small-en-v1.5 =
bert-base-uncased's 30522 tokens; the GGUF writes a word start as "\u2581x" and
a continuation "##x" as "x", undone here) given to transformers'
BertTokenizerFast(do_lower_case=True) and saved by it, as the files on the Hub
are made. HF's ids of it equal llama.cpp's own vectors
(llama.cpp-ggml-vocab-bert-bge.gguf.inp/.out, checked by the main step).

The other tokenizers are built with HF `tokenizers` itself: a vocabulary trained by
its WordPieceTrainer / WordLevelTrainer on texts.jsonl (ties are broken
differently from run to run, so all files are regenerated together), and a
pipeline made of the components under test; saved as tokenizer.json by HF.
components.jsonl: single normalizers and pre-tokenizers, HF's serialization of
each and HF's result on ~290 texts (test_tok_wordpiece.c).
For every text of texts.jsonl and wp-texts.jsonl (hand-written adversarial
cases, written by this script) the expected file has HF's
encode(text, add_special_tokens=False) ids with special tokens parsed
("parse") and, where different, not parsed ("plain"), the ids with
add_special_tokens=True ("with_special"), and decode(parse ids,
skip_special_tokens=False) ("decoded"). decode-NAME.jsonl: seeded random id
lists and HF's decode of them. Also expected-v1-small-norm-special.jsonl and
expected-llama3-tiny-special.jsonl: add_special_tokens=True ids of
v1-small-norm.json (its TemplateProcessing adds <s>) on the texts above and of
../bpe/llama3-tiny-tokenizer.json (<|begin_of_text|>) on ../bpe/corpus.jsonl.
"""
import json
import os
import random

from tokenizers import Regex, Tokenizer, decoders, models, normalizers as N, pre_tokenizers as P, processors, trainers

D = os.path.dirname(os.path.abspath(__file__))

EXTRA = [
    "Héllo Wörld! Ça va? naïve café ÅNGSTRÖM",
    "e\u0301 a\u0300 o\u0308\u0301 Ǆ ǅ ǆ ﬁ ﬂ ① ² ℌ Ⅻ",
    "中文字符测试，你好世界！日本語のテキスト、カタカナ。한국어 텍스트",
    "𠀀𠀁 𪜀 𫝀 𫠠 𬺰 丽 兀",
    "Hello,,,world!!!???...  ---  ((nested)) [brackets] {braces} \"quotes\" 'single'",
    "1234567890 12,345.67 ３４５ ٣٤٥ ۴۵۶ १२३ ½ ¼ Ⅷ",
    "tab\there\nnew\r\nline\x0bvt\x0cff\x00nul\x01\x1f\x7f\x85\u200b\u200d\ufeff\ufffd",
    "emoji 😀😃 👩‍👩‍👧‍👦 🇫🇷 ❤️ ✈︎ 🏳️‍🌈 a😀b",
    "multiple     spaces\u3000ideographic\u00a0nbsp\u2009thin\u2028ls\u2029ps",
    "don't won't I'm you're it's we've they're do not a . b ? c ! d , e ' f",
    "supercalifragilisticexpialidocious pneumonoultramicroscopicsilicovolcanoconiosis antidisestablishmentarianism",
    "UNAFFABLE unaffable un-aff-able state-of-the-art e-mail x--y",
    "[CLS] [SEP] [MASK] [PAD] [UNK] <s> </s> [cls] [MASK][MASK]x[MASK] a[SEP]b",
    "«guillemets» „quotes“ ‹single› — – … · • ¿¡ §¶ † ‡ ‰ ※ ‿ ⁀",
    "\u0300leading mark \u0301\u0302 and trailing e\u0301\u0327",
    "   ",
    "",
    "a",
    "ǰ̌ ΐ ὒ ﬀ İstanbul ıi ß ẞ ǈ Σσς",
    "x" * 150 + " " + "ab" * 60,
    "\U0001F16C \U0001FAE8 \U00031350 \uA7C0 \u0CF3 \U0001E030",
    "mixed中English文123数字",
    "$100 €50 ¥20 £5 @user #tag %20 ^_^ ~/path\\back|pipe`tick",
]


def texts():
    t = [json.loads(l)["text"] for l in open(os.path.join(D, "texts.jsonl"), encoding="utf-8")]
    return t + EXTRA


def train_texts():
    return [json.loads(l)["text"] for l in open(os.path.join(D, "texts.jsonl"), encoding="utf-8")][:400] + EXTRA


def special_tokens(tok, names):
    return {n: tok.token_to_id(n) for n in names}


def bert_lower():
    """BERT uncased as BertTokenizerFast builds it, vocabulary trained."""
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = N.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True)
    tok.pre_tokenizer = P.BertPreTokenizer()
    sp = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok.train_from_iterator(train_texts(), trainers.WordPieceTrainer(vocab_size=1500, special_tokens=sp))
    ids = special_tokens(tok, sp)
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])])
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=True)
    return tok


def bert_cased():
    """Cased, accents stripped, no CJK handling; a Sequence of splitting
    pre-tokenizers; BertProcessing; a short max_input_chars_per_word and
    another continuing-subword prefix."""
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=12, continuing_subword_prefix="@@"))
    tok.normalizer = N.BertNormalizer(clean_text=True, handle_chinese_chars=False, strip_accents=True, lowercase=False)
    tok.pre_tokenizer = P.Sequence([P.WhitespaceSplit(), P.Punctuation(behavior="merged_with_previous"),
                                    P.Digits(individual_digits=True)])
    sp = ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok.train_from_iterator(train_texts(), trainers.WordPieceTrainer(vocab_size=1200, special_tokens=sp,
                                                                    continuing_subword_prefix="@@"))
    ids = special_tokens(tok, sp)
    tok.post_processor = processors.BertProcessing(("[SEP]", ids["[SEP]"]), ("[CLS]", ids["[CLS]"]))
    tok.decoder = decoders.WordPiece(prefix="@@", cleanup=False)
    tok.add_tokens(["state-of-the-art"])
    return tok


def wordlevel_a():
    """WordLevel; normalizers NFD, StripAccents, Lowercase, Replace(regex),
    Strip; pre-tokenizers Whitespace, Split(string, merged_with_next),
    Digits(contiguous); RobertaProcessing; BPEDecoder."""
    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.normalizer = N.Sequence([N.NFD(), N.StripAccents(), N.Lowercase(), N.Replace(Regex(r"\s+"), " "),
                                 N.Strip(left=True, right=False)])
    tok.pre_tokenizer = P.Sequence([P.Whitespace(), P.Split("-", behavior="merged_with_next"),
                                    P.Digits(individual_digits=False)])
    sp = ["<s>", "</s>", "<unk>", "<pad>"]
    tok.train_from_iterator(train_texts(), trainers.WordLevelTrainer(vocab_size=1500, special_tokens=sp))
    ids = special_tokens(tok, sp)
    tok.post_processor = processors.RobertaProcessing(("</s>", ids["</s>"]), ("<s>", ids["<s>"]))
    tok.decoder = decoders.BPEDecoder(suffix="a")
    return tok


def wordlevel_b():
    """WordLevel; NFKD, NFKC, Strip(right), Replace(string); Split(regex)
    with each behavior and invert, Punctuation(removed), Digits; a Sequence
    post-processor (ByteLevel + TemplateProcessing with two tokens before
    the text); WordPiece decoder with cleanup; added tokens with flags."""
    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.normalizer = N.Sequence([N.NFKD(), N.NFKC(), N.Strip(left=False, right=True), N.Replace("''", "\""),
                                 N.Prepend("~")])
    tok.pre_tokenizer = P.Sequence([
        P.Split(Regex(r"\s+"), behavior="removed"),
        P.Split(Regex(r"[aeiou]"), behavior="isolated", invert=False),
        P.Split(Regex(r"\p{Lu}+"), behavior="merged_with_previous"),
        P.Split(Regex(r"(?i:th)"), behavior="contiguous", invert=True),
        P.Punctuation(behavior="removed"),
        P.Digits(individual_digits=True),
        P.Split("~", behavior="merged_with_next"),
    ])
    sp = ["[UNK]", "[BOS]", "[LANG]", "[EOS]"]
    tok.train_from_iterator(train_texts(), trainers.WordLevelTrainer(vocab_size=1500, special_tokens=sp))
    ids = special_tokens(tok, sp)
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single="[BOS] [LANG] $A [EOS]", special_tokens=[
            ("[BOS]", ids["[BOS]"]), ("[LANG]", ids["[LANG]"]), ("[EOS]", ids["[EOS]"])]),
    ])
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=True)
    from tokenizers import AddedToken
    tok.add_tokens([AddedToken("hello", normalized=True), AddedToken("xyz", single_word=True),
                    AddedToken("my_tab", lstrip=True, rstrip=True)])
    tok.add_special_tokens([AddedToken("<sep>", normalized=False)])
    return tok


def write_expected(name, tok, txts):
    with open(os.path.join(D, "expected-%s.jsonl" % name), "w", encoding="utf-8") as f:
        for t in txts:
            parse = tok.encode(t, add_special_tokens=False).ids
            tok.encode_special_tokens = True
            plain = tok.encode(t, add_special_tokens=False).ids
            tok.encode_special_tokens = False
            ws = tok.encode(t, add_special_tokens=True).ids
            rec = {"parse": parse}
            if plain != parse:
                rec["plain"] = plain
            rec["with_special"] = ws
            rec["decoded"] = tok.decode(parse, skip_special_tokens=False)
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")


def write_decode(name, tok, seed):
    rng = random.Random(seed)
    n = tok.get_vocab_size(with_added_tokens=True)
    with open(os.path.join(D, "decode-%s.jsonl" % name), "w", encoding="utf-8") as f:
        for _ in range(300):
            ids = [rng.randrange(n) if rng.random() < 0.8 else rng.randrange(min(n, 40)) for _ in range(rng.randrange(1, 20))]
            f.write(json.dumps({"ids": ids, "decoded": tok.decode(ids, skip_special_tokens=False)},
                               ensure_ascii=False) + "\n")


NORMALIZERS = [
    N.BertNormalizer(),
    N.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False),
    N.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=False, lowercase=True),
    N.NFD(), N.NFKD(), N.NFC(), N.NFKC(), N.StripAccents(), N.Lowercase(),
    N.Strip(), N.Strip(left=True, right=False), N.Strip(left=False, right=True),
    N.Replace(Regex(r"\p{L}+"), "L"), N.Replace(Regex(r"\d|\s"), ""), N.Replace(Regex(r"a*"), "-"),
    N.Replace(Regex(r"\W{2}|[^\p{L}\s]|[]x]"), "<>"), N.Replace("  ", " "), N.Prepend("_"),
    N.Sequence([N.NFD(), N.StripAccents(), N.Lowercase()]),
]
BEHAVIORS = ["removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"]
PRETOKENIZERS = (
    [P.BertPreTokenizer(), P.Whitespace(), P.WhitespaceSplit(), P.Digits(individual_digits=True),
     P.Digits(individual_digits=False)]
    + [P.Punctuation(behavior=b) for b in BEHAVIORS]
    + [P.Split(Regex(r"\s+|\p{P}"), behavior=b, invert=i) for b in BEHAVIORS for i in (False, True)]
    + [P.Split(" ", behavior=b, invert=i) for b in BEHAVIORS for i in (False, True)]
    + [P.Split(Regex(r"x*"), behavior="isolated"), P.Split(Regex(r"\b"), behavior="isolated"),
       P.Split(Regex(r"(?<=\p{Ll})(?=\p{Lu})|\p{N}{1,3}"), behavior="isolated"),
       P.Sequence([P.WhitespaceSplit(), P.Punctuation(), P.Digits(individual_digits=True)])]
)


def write_components(txts):
    """components.jsonl: line 1 the texts; then per component its
    tokenizer.json form and HF's result on each text (normalize_str, or the
    pieces of pre_tokenize_str)."""
    rng = random.Random(7)
    sample = [t for t in txts[:120]] + EXTRA + rng.sample(txts[300:-len(EXTRA)], 150)
    with open(os.path.join(D, "components.jsonl"), "w", encoding="utf-8") as f:
        f.write(json.dumps({"texts": sample}, ensure_ascii=False) + "\n")
        for n in NORMALIZERS:
            cfg = json.loads(Tokenizer(models.WordLevel({"a": 0}, unk_token="a")).to_str())
            t = Tokenizer(models.WordLevel({"a": 0}, unk_token="a"))
            t.normalizer = n
            cfg = json.loads(t.to_str())["normalizer"]
            f.write(json.dumps({"normalizer": cfg, "out": [n.normalize_str(x) for x in sample]},
                               ensure_ascii=False) + "\n")
        for p in PRETOKENIZERS:
            t = Tokenizer(models.WordLevel({"a": 0}, unk_token="a"))
            t.pre_tokenizer = p
            cfg = json.loads(t.to_str())["pre_tokenizer"]
            f.write(json.dumps({"pre_tokenizer": cfg, "out": [[s for s, _ in p.pre_tokenize_str(x)] for x in sample]},
                               ensure_ascii=False) + "\n")


def make_bge(gguf_path):
    import gguf
    from transformers import BertTokenizerFast
    r = gguf.GGUFReader(gguf_path)
    f = r.fields["tokenizer.ggml.tokens"]
    toks = [bytes(f.parts[i]).decode("utf-8") for i in f.data]

    def orig(t):
        if t.startswith("[") and t.endswith("]"):
            return t
        return t[1:] if t.startswith("\u2581") else "##" + t

    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "vocab.txt"), "w", encoding="utf-8") as v:
            v.write("".join(orig(t) + "\n" for t in toks))
        BertTokenizerFast(vocab_file=os.path.join(tmp, "vocab.txt"), do_lower_case=True).save_pretrained(tmp)
        os.replace(os.path.join(tmp, "tokenizer.json"), os.path.join(D, "bert-bge.json"))


def llama_cpp_texts(name):
    inp = open(os.path.join(D, "llama.cpp-ggml-vocab-%s.gguf.inp" % name), encoding="utf-8").read()
    out = open(os.path.join(D, "llama.cpp-ggml-vocab-%s.gguf.out" % name), encoding="utf-8").read()
    return inp.split("\n__ggml_vocab_test__\n"), [[int(x) for x in l.split()] for l in out.split("\n")]


def write_bge(txts):
    """expected-bert-bge.jsonl over the texts and then llama.cpp's inputs,
    after checking that HF gives llama.cpp's ids."""
    tok = Tokenizer.from_file(os.path.join(D, "bert-bge.json"))
    inp, want = llama_cpp_texts("bert-bge")
    assert len(inp) == len(want) == 47
    for x, w in zip(inp, want):
        assert tok.encode(x, add_special_tokens=False).ids == w, x
    write_expected("bert-bge", tok, txts + inp)
    write_decode("bert-bge", tok, 9)


def write_specials(txts):
    """add_special_tokens=True ids of files of the other families: the
    byte-level llama3-tiny (TemplateProcessing puts <|begin_of_text|> first)
    and the SentencePiece-style v1-small-norm (<s> first)."""
    l3 = Tokenizer.from_file(os.path.join(D, "..", "bpe", "llama3-tiny-tokenizer.json"))
    with open(os.path.join(D, "expected-llama3-tiny-special.jsonl"), "w", encoding="utf-8") as f:
        for l in open(os.path.join(D, "..", "bpe", "corpus.jsonl"), encoding="utf-8"):
            f.write(json.dumps({"with_special": l3.encode(json.loads(l)["text"], add_special_tokens=True).ids}) + "\n")
    v1 = Tokenizer.from_file(os.path.join(D, "v1-small-norm.json"))
    with open(os.path.join(D, "expected-v1-small-norm-special.jsonl"), "w", encoding="utf-8") as f:
        for t in txts:
            f.write(json.dumps({"with_special": v1.encode(t, add_special_tokens=True).ids}) + "\n")


def main():
    with open(os.path.join(D, "wp-texts.jsonl"), "w", encoding="utf-8") as f:
        for t in EXTRA:
            f.write(json.dumps({"text": t}, ensure_ascii=False) + "\n")
    txts = texts()
    write_components(txts)
    write_specials(txts)
    write_bge(txts)
    if os.environ.get("ONLY_COMPONENTS"):
        return  # the trainers are not deterministic from run to run: regenerate all or none
    for seed, (name, make) in enumerate([("bert-lower", bert_lower), ("bert-cased", bert_cased),
                                         ("wordlevel-a", wordlevel_a), ("wordlevel-b", wordlevel_b)]):
        tok = make()
        tok.save(os.path.join(D, "%s.json" % name))
        tok = Tokenizer.from_file(os.path.join(D, "%s.json" % name))
        write_expected(name, tok, txts)
        write_decode(name, tok, seed)


if __name__ == "__main__":
    import sys
    if sys.argv[1:2] == ["bge"]:
        make_bge(sys.argv[2])
    else:
        main()

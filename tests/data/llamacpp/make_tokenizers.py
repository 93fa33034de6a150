#!/usr/bin/env python3
"""Hugging Face tokenizer.json files for llama.cpp's tokenizer test vectors,
checked against those vectors with HF `tokenizers` itself.

    make_tokenizers.py MODELS_DIR QWEN_TIKTOKEN OUT_DIR

MODELS_DIR is llama.cpp's models/ folder (ggml-vocab-NAME.gguf with
ggml-vocab-NAME.gguf.inp/.out beside it); QWEN_TIKTOKEN is Qwen's rank file
qwen.tiktoken (its GGUF, ggml-vocab-qwen2.gguf, is not in the snapshot we
had). For each vocabulary in ORIGINAL this writes OUT_DIR/NAME.json.zst
(zstd -19), copies ggml-vocab-NAME.gguf.out to OUT_DIR/NAME.out and the .inp
(the same 46 cases for every vocabulary) to OUT_DIR/ggml-vocab.inp, and
writes OUT_DIR/starcoder-random.jsonl (seeded random strings aimed at the
Digits + ByteLevel pipeline with HF's ids under starcoder.json) and, for
starcoder and falcon, NAME-tiny.json (see tiny()) with
NAME-tiny-random.jsonl (random strings with HF's ids under it). It
encodes the 46 cases with HF (encode(text, add_special_tokens=False)) and
compares with the .out ids, which llama.cpp's convert_hf_to_gguf_update.py
made with HF's AutoTokenizer on the original model's tokenizer; it prints one
line per vocabulary (cases equal, cases whose HF decode is the text) and
each case that differs, and exits 1 on any difference.

Why not `AutoTokenizer.from_pretrained(dir, gguf_file=...)`: transformers'
GGUF converters (transformers/integrations/ggml.py) do not read
`tokenizer.ggml.pre`: every byte-level vocabulary gets GPT-2's ByteLevel
pre-tokenizer, Phi-3 gets no normalizer, and Refact's architecture is not
known, so those files do not give the original ids. This script takes the
vocabulary, merges and token types from the GGUF and puts back the pipeline
of the original tokenizer.json (the repositories named in ORIGINAL; the same
components llama.cpp's llama-vocab.cpp imitates for each pre-tokenizer type),
and the vectors check the result.

Token types (GGUF): 1 normal, 2 unknown, 3 control, 4 user-defined, 6 byte.
'[PADn]' entries are llama.cpp's filler up to the model's embedding size and
are not part of the tokenizer; they are left out. Control tokens become
special added tokens, user-defined ones non-special (normalized) added
tokens, as in the original files.

Needs `zstd` and the PyPI packages `tokenizers` (0.22.2 here),
`transformers` (4.57.6, for the SentencePiece merge order) and `gguf`
(0.19.0).
"""
import base64
import json
import os
import random
import shutil
import subprocess
import sys

import gguf
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers.convert_slow_tokenizer import generate_merges

SEP = "\n__ggml_vocab_test__\n"

# name: (original HF repository, kind)
ORIGINAL = {
    "phi-3": ("microsoft/Phi-3-mini-4k-instruct", "spm"),
    "llama-spm": ("meta-llama/Llama-2-7b-hf", "spm"),
    "deepseek-coder": ("deepseek-ai/deepseek-coder-6.7b-base", "bpe"),
    "deepseek-llm": ("deepseek-ai/deepseek-llm-7b-base", "bpe"),
    "falcon": ("tiiuae/falcon-7b", "bpe"),
    "starcoder": ("bigcode/starcoder2-3b", "bpe"),
    "refact": ("smallcloudai/Refact-1_6-base", "bpe"),
    "qwen2": ("Qwen/Qwen1.5-7B", "qwen2"),
}
# vocabularies whose vectors are those of another (same .out, checked here)
ALSO = {"qwen2": ["deepseek-r1-qwen"]}
# written but not compressed into OUT_DIR (llama-spm: the Llama 2 license;
# its vocabulary and merges are phi-3's first 32000 ids, its .out phi-3's)
KEEP_JSON = {"llama-spm"}
QWEN2_PATTERN = (
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
)
SPECIALS_QWEN2 = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

# The pre-tokenizers of the original tokenizer.json files.
DEEPSEEK_LLM_LETTERS = (
    "\\s?[A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af"
    "\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5"
    "\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba"
    "\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45"
    "\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2"
    "-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102"
    "\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139\u213c"
    "-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640"
    "-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13"
    "-\ufb17\uff21-\uff3a\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb"
    "\U00010c80-\U00010cb2\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943]+"
)
CJK = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"


def split(rx):
    return pre_tokenizers.Split(Regex(rx), behavior="isolated", invert=False)


def byte_level(use_regex):
    return pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=use_regex)


def bpe_pipeline(name):
    """normalizer, pre_tokenizer of the byte-level originals"""
    if name == "deepseek-llm":
        return normalizers.Sequence([]), pre_tokenizers.Sequence([
            split("[\r\n]"),
            split(DEEPSEEK_LLM_LETTERS),
            split("\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+"),
            split("\\s+$"),
            split(CJK),
            pre_tokenizers.Digits(individual_digits=True),
            byte_level(False),
        ])
    if name == "deepseek-coder":
        return normalizers.Sequence([]), pre_tokenizers.Sequence([
            split("[\r\n]"),
            split("\\s?\\p{L}+"),
            split("\\s?\\p{P}+"),
            split(CJK),
            pre_tokenizers.Digits(individual_digits=True),
            byte_level(False),
        ])
    if name == "falcon":
        return None, pre_tokenizers.Sequence([
            pre_tokenizers.Punctuation(behavior="contiguous"),
            byte_level(True),
            pre_tokenizers.Digits(individual_digits=False),
            split("[0-9][0-9][0-9]"),
        ])
    if name in ("starcoder", "refact"):
        return None, pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level(True)])
    raise KeyError(name)


def read_gguf(path):
    r = gguf.GGUFReader(path)

    def get(key, default=None):
        f = r.fields.get(key)
        return f.contents() if f is not None else default

    return {
        "tokens": get("tokenizer.ggml.tokens"),
        "types": get("tokenizer.ggml.token_type"),
        "scores": get("tokenizer.ggml.scores"),
        "merges": get("tokenizer.ggml.merges"),
        "unk": get("tokenizer.ggml.unknown_token_id"),
        "bos": get("tokenizer.ggml.bos_token_id"),
    }


def added_tokens(g, keep):
    out = []
    for i, (t, ty) in enumerate(zip(g["tokens"], g["types"])):
        if i in keep and ty in (3, 4):
            out.append((i, AddedToken(t, special=ty == 3, normalized=ty == 4)))
    return out


def build_bpe(name, g):
    keep = {i for i, t in enumerate(g["tokens"]) if not (t.startswith("[PAD") and g["types"][i] in (2, 4))}
    vocab = {g["tokens"][i]: i for i in sorted(keep)}
    merges = [tuple(m.split(" ")) for m in g["merges"]]
    tok = Tokenizer(models.BPE(vocab, merges, dropout=None, fuse_unk=False, byte_fallback=False))
    norm, pre = bpe_pipeline(name)
    if norm is not None:
        tok.normalizer = norm
    tok.pre_tokenizer = pre
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=True)
    return tok, added_tokens(g, keep)


def build_spm(name, g):
    """Llama-2 style: Prepend + Replace normalizer, no pre-tokenizer, BPE with
    byte fallback and <unk>; merges ordered as transformers' LlamaConverter
    orders them (by the merged piece's score)."""
    keep = {i for i, t in enumerate(g["tokens"]) if not t.startswith("[PAD")}
    vocab = {g["tokens"][i]: i for i in sorted(keep)}
    scores = [(g["tokens"][i], float(g["scores"][i])) for i in sorted(keep)]
    merges = generate_merges(vocab, scores)
    unk = g["tokens"][g["unk"]]
    tok = Tokenizer(models.BPE(vocab, merges, unk_token=unk, fuse_unk=True, byte_fallback=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
    )
    bos = g["tokens"][g["bos"]]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A", pair=f"{bos} $A {bos} $B", special_tokens=[(bos, g["bos"])]
    )
    added = []
    for i, (t, ty) in enumerate(zip(g["tokens"], g["types"])):
        if i not in keep:
            continue
        if i < 3:  # <unk> <s> </s>
            added.append((i, AddedToken(t, special=True, normalized=False)))
        elif ty in (3, 4):  # Phi-3's chat tokens: rstrip as in its tokenizer.json, not <|endoftext|>
            added.append((i, AddedToken(t, special=True, normalized=False, rstrip=t != "<|endoftext|>")))
    return tok, added


def build_qwen2(tiktoken_path):
    """Qwen1.5/Qwen2: the tiktoken ranks as a byte-level vocabulary, one merge
    per token (the last merge tiktoken's BPE makes for it when only lower
    ranks may merge: how Qwen's merges.txt relates to qwen.tiktoken), and
    transformers' Qwen2Converter pipeline (NFC, Split with Qwen2's regex,
    ByteLevel without regex) with the three special tokens."""
    ranks = {}
    with open(tiktoken_path, "rb") as f:
        for line in f:
            t, r = line.split()
            ranks[base64.b64decode(t)] = int(r)
    keep = [b for b in range(256) if 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or 0xAE <= b <= 0xFF]
    b2u, extra = {}, 0
    for b in range(256):
        if b in keep:
            b2u[b] = chr(b)
        else:
            b2u[b] = chr(256 + extra)
            extra += 1

    def enc(bs):
        return "".join(b2u[x] for x in bs)

    def last_merge(tok, max_rank):
        parts = [bytes([x]) for x in tok]
        while len(parts) > 2:
            best = None
            for i in range(len(parts) - 1):
                r = ranks.get(parts[i] + parts[i + 1])
                if r is not None and r < max_rank and (best is None or r < best[0]):
                    best = (r, i)
            assert best is not None, tok
            i = best[1]
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        return parts

    vocab = {enc(t): r for t, r in ranks.items()}
    merges = []
    for t, r in sorted(ranks.items(), key=lambda x: x[1]):
        if len(t) > 1:
            a, b = last_merge(t, r)
            merges.append((enc(a), enc(b)))
    tok = Tokenizer(models.BPE(vocab, merges, dropout=None, fuse_unk=False, byte_fallback=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        split(QWEN2_PATTERN),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    n = len(ranks)
    return tok, [(n + k, AddedToken(s, special=True, normalized=False)) for k, s in enumerate(SPECIALS_QWEN2)]


# Pieces of random strings for the Digits + ByteLevel pipeline: numbers of
# every kind (Nd, Nl, No, astral, and two of Unicode 17, which Rust's
# is_numeric knows and Oniguruma's \\p{N} does not), whitespace of several
# kinds before and after them, contractions, letters, marks, punctuation.
DIGITS_ALPHABET = (
    list("abcXYZ") + ["'s", "'ll", "'RE", "'d", "'", "'t"] + list("0123456789") + ["33", "2024"]
    + ["\u0661", "\u00b2", "\u00bd", "\u216b", "\u3007", "\U0001d7d9", "\U00011de0", "\U00016ff4"]
    + [" ", " ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u2009", "\x0b", "\x85"]
    + ["!", ".", "-", "(", "$", "...", "\U0001f600", "\u4e2d", "\u00e9", "e\u0301", "\u0416", "\u017f"]
)
UNICODE17 = ("\U00011de0", "\U00016ff4")


# ... and for Falcon's pipeline, whose Digits and Split see byte-level
# characters: bytes 0xB2 0xB3 0xB9 0xBC 0xBD 0xBE are "numbers" there, also
# inside letters (\u00fc = C3 BC), punctuation (\u2e3c = E2 B8 BC) and emoji
# (\U0001f63c = F0 9F 98 BC); punctuation of several kinds around spaces.
FALCON_ALPHABET = (
    list("abcXYZ") + ["'s", "don't", "'", "n't"] + list("0123456789") + ["33", "2024", "12345"]
    + ["\u00b2", "\u00bd", "\u00b9", "\u00be", "\u0661\u0662\u0663", "\u0967", "\u2172"]
    + ["\u00fc", "\u00f2", "F\u00fchrer", "\u02bc", "\u2e3c", "\U0001f63c", "\U0001f600", "\u4e2d"]
    + [" ", " ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000"]
    + ["!", ".", "-", "(", ")", "$", "+", "<", "=", "^", "`", "|", "~", "\u00bf", "\u00ab", "\u00b7", "...", "\u2014"]
)


def random_strings(tok, path, alphabet, newer=(), n=2500, seed=12):
    """n random strings over alphabet with HF's ids under tok; pcre2 false
    where a string holds a character newer than PCRE2's Unicode tables."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as f:
        for _ in range(n):
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
            ids = tok.encode(text, add_special_tokens=False).ids
            pcre2 = not any(c in text for c in newer)
            f.write(json.dumps({"text": text, "ids": ids, "pcre2": pcre2}) + "\n")


def tiny(real, alphabet, seed):
    """A 1000-token byte-level BPE trained on random strings over alphabet
    with no pre-tokenizer split at all (ByteLevel without regex), then given
    real's normalizer and pre-tokenizer: its merges cross every boundary the
    pipeline makes, so its ids show any split that differs (the real
    vocabularies were trained with their pipelines, so a wrong split can
    give their ids all the same)."""
    rng = random.Random(seed)
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(3000)]
    t = Tokenizer(models.BPE())
    t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    t.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=1000, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    t.train_from_iterator(texts, trainer)
    if real.normalizer is not None:
        t.normalizer = real.normalizer
    t.pre_tokenizer = real.pre_tokenizer
    return t


def cases(models_dir, name):
    with open(os.path.join(models_dir, f"ggml-vocab-{name}.gguf.inp"), encoding="utf-8") as f:
        inp = f.read()
    texts = inp.split(SEP)
    assert texts[-1] == "", "the .inp must end with the separator"
    texts = texts[:-1]
    with open(os.path.join(models_dir, f"ggml-vocab-{name}.gguf.out"), encoding="utf-8") as f:
        want = [[int(x) for x in line.split()] for line in f.read().split("\n")[:-1]]
    assert len(texts) == len(want) == 46, (len(texts), len(want))
    return inp, texts, want


def main():
    models_dir, qwen_tiktoken, out_dir = sys.argv[1:4]
    os.makedirs(out_dir, exist_ok=True)
    bad = 0
    inp0 = None
    for name, (repo, kind) in ORIGINAL.items():
        if kind == "qwen2":
            tok, added = build_qwen2(qwen_tiktoken)
        else:
            g = read_gguf(os.path.join(models_dir, f"ggml-vocab-{name}.gguf"))
            tok, added = (build_spm if kind == "spm" else build_bpe)(name, g)
        for i, a in added:  # added in id order, each must get its own id
            tok.add_special_tokens([a]) if a.special else tok.add_tokens([a])
            assert tok.token_to_id(a.content) == i, (name, a.content, i, tok.token_to_id(a.content))
        path = os.path.join(out_dir, f"{name}.json")
        tok.save(path, pretty=False)
        tok = Tokenizer.from_file(path)  # check the file, not the object
        names = [name] + ALSO.get(name, [])
        for vec in names:
            inp, texts, want = cases(models_dir, vec)
            assert inp0 is None or inp == inp0, "the .inp files differ"
            inp0 = inp
            ok = same = 0
            for k, (t, w) in enumerate(zip(texts, want)):
                got = tok.encode(t, add_special_tokens=False).ids
                same += tok.decode(got, skip_special_tokens=False) == t
                if got == w:
                    ok += 1
                else:
                    bad += 1
                    print(f"  {vec} case {k} {t[:40]!r}: HF {got[:12]} llama.cpp {w[:12]}")
            print(f"{vec}: {ok}/{len(texts)} cases equal, HF decode gives the text back in {same} "
                  f"({repo}, {len(tok.get_vocab())} ids)")
            shutil.copyfile(os.path.join(models_dir, f"ggml-vocab-{vec}.gguf.out"),
                            os.path.join(out_dir, f"{vec}.out"))
        if name in ("starcoder", "falcon"):
            alphabet, newer = (DIGITS_ALPHABET, UNICODE17) if name == "starcoder" else (FALCON_ALPHABET, ())
            if name == "starcoder":
                random_strings(tok, os.path.join(out_dir, "starcoder-random.jsonl"), alphabet, newer)
            t = tiny(tok, alphabet, seed=14)
            t.save(os.path.join(out_dir, f"{name}-tiny.json"), pretty=False)
            t = Tokenizer.from_file(os.path.join(out_dir, f"{name}-tiny.json"))
            random_strings(t, os.path.join(out_dir, f"{name}-tiny-random.jsonl"), alphabet, newer, seed=15)
        if name in KEEP_JSON:
            continue
        subprocess.run(["zstd", "-q", "-19", "-f", "--rm", path, "-o", path + ".zst"], check=True)
    with open(os.path.join(out_dir, "ggml-vocab.inp"), "w", encoding="utf-8") as f:
        f.write(inp0)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

"""Reference tokenizers for the developer scripts in tests/bpe and bench/:
Hugging Face `tokenizers` (GPT-NeoX-20B from tokenizer.json, GPT-2 from
vocab.json + merges.txt) and `tiktoken` GPT-2 built from the same files
(tiktoken.get_encoding would download them; nothing downloads here)."""
import json
import os


def hf_neox(data):
    from tokenizers import Tokenizer
    return Tokenizer.from_file(os.path.join(data, "neox-tokenizer.json"))


def hf_tiny(data):
    from tokenizers import Tokenizer
    return Tokenizer.from_file(os.path.join(data, "tiny-tokenizer.json"))


def hf_gpt2(data):
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
    m = models.BPE.from_file(os.path.join(data, "gpt2", "vocab.json"), os.path.join(data, "gpt2", "merges.txt"))
    t = Tokenizer(m)
    t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    t.decoder = decoders.ByteLevel()
    t.add_special_tokens([AddedToken("<|endoftext|>", special=True, normalized=False)])
    return t


def _bytes_to_unicode():
    bs = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def tiktoken_gpt2(data):
    import tiktoken
    u2b = _bytes_to_unicode()
    vocab = json.load(open(os.path.join(data, "gpt2", "vocab.json"), encoding="utf-8"))
    ranks = {bytes(u2b[c] for c in tok): i for tok, i in vocab.items() if tok != "<|endoftext|>"}
    pat = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
    return tiktoken.Encoding("gpt2-local", pat_str=pat, mergeable_ranks=ranks,
                             special_tokens={"<|endoftext|>": 50256})

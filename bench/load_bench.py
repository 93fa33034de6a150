#!/usr/bin/env python3
"""Load times per tokenizer family, sluice beside its reference library.
Called by bench/load.sh. usage: load_bench.py SLUICE TMPDIR DATA"""
import os
import resource
import subprocess
import sys
import time

RUNS = 3


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def self_cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def sluice_load(sluice, path, extra, one):
    cpus, walls = [], []
    for _ in range(RUNS):
        c0, t0 = child_cpu(), time.perf_counter()
        subprocess.run([sluice, "tokenize", "text", "-q", "-@", "1", "-t", path] + extra + [one, "-o", os.devnull],
                       check=True)
        walls.append(time.perf_counter() - t0)
        cpus.append(child_cpu() - c0)
    return sorted(cpus)[RUNS // 2], sorted(walls)[RUNS // 2]


def load_spm(path):
    import sentencepiece as spm
    return spm.SentencePieceProcessor(model_file=path)


def load_hf(path):
    from tokenizers import Tokenizer
    return Tokenizer.from_file(path)


def load_tiktoken(path):
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    pat = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
    ranks = load_tiktoken_bpe(path)
    return tiktoken.Encoding("w", pat_str=pat, mergeable_ranks=ranks, special_tokens={"<|endoftext|>": len(ranks)})


def peer_load(fn, path):
    try:
        fn(path)  # imports and caches warm
    except ImportError as e:
        return None, str(e)
    cpus = []
    for _ in range(RUNS):
        c0 = self_cpu()
        fn(path)
        cpus.append(self_cpu() - c0)
    return sorted(cpus)[RUNS // 2], None


def main():
    sluice, tmp, data = sys.argv[1], sys.argv[2], sys.argv[3]
    one = os.path.join(tmp, "one.jsonl")
    with open(one, "w") as f:
        f.write('{"id":"a","text":"hello world"}\n')
    cases = [("Unigram .model (XLM-R, 250k)", os.path.join(tmp, "xlmr.model"), [], "sentencepiece", load_spm),
             ("Unigram tokenizer.json (XLM-R, 250k)", os.path.join(tmp, "xlmr.json"), [], "tokenizers", load_hf),
             ("tiktoken (Whisper multilingual, 50k)", os.path.join(tmp, "multilingual.tiktoken"),
              ["--pattern", "gpt2"], "tiktoken", load_tiktoken),
             ("SentencePiece BPE .model (Mistral-7B, 32k)", os.path.join(data, "spm", "mistral-v1.model"), [],
              "sentencepiece", load_spm),
             ("byte-level BPE tokenizer.json (GPT-NeoX, 50k)", os.path.join(data, "bpe", "neox-tokenizer.json"), [],
              "tokenizers", load_hf),
             ("WordPiece tokenizer.json (bge-small, 30k)", os.path.join(data, "tok", "bert-bge.json"), [],
              "tokenizers", load_hf)]
    print("%-46s %12s %12s  %s" % ("family (file)", "sluice CPU s", "peer CPU s", "peer"))
    for name, path, extra, peer, fn in cases:
        cpu, _ = sluice_load(sluice, path, extra, one)
        pc, why = peer_load(fn, path)
        print("%-46s %12.3f %12s  %s" % (name, cpu, "%.3f" % pc if pc is not None else "-",
                                         peer if why is None else "%s (skipped: %s)" % (peer, why)))
    print("(sluice: the whole command on one short document; the peer: its load call in-process)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Runs sluice tokenize text side by side with the `sentencepiece` library
(.model files) and Hugging Face `tokenizers` (tokenizer.json files: Unigram,
SentencePiece-style BPE as Mistral-7B v0.1, WordPiece as bge-small) on
the same corpus, 1 thread and 2, and prints MB/s (text bytes / wall time),
CPU seconds (each the median of 3 runs; SPM_BENCH_PEER_RUNS sets the
peers'), the ratio peer/sluice (CPU time, so that a loaded machine skews
both alike) and whether the ids agree. sluice's time is the whole
command (reading JSON Lines, writing the token stream); the peers' is encode
alone. Then one document of 1 MB without spaces, and the same twice as long
(linear time). Called by bench/spm.sh.
usage: spm_bench.py SLUICE CORPUS.jsonl"""
import json
import lzma
import os
import random
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data")
# (file under tests/data, peer): SentencePiece .model files against the
# sentencepiece library; tokenizer.json files of the other HF families
# (Unigram, SentencePiece-style BPE, WordPiece) against HF tokenizers
PEER_RUNS = max(1, int(os.environ.get("SPM_BENCH_PEER_RUNS", "3")))
# (uni-bf.model has 800 pieces; XLM-R's 250k-piece Unigram model, kept
# xz-compressed, is the size of the Unigram models people use: its load is
# a larger part of sluice's time, and its walks are longer)
FILES = [("spm/mistral-v1.model", "sentencepiece"), ("spm/uni-bf.model", "sentencepiece"),
         ("xlmr/xlmr.model.xz", "sentencepiece"),
         ("spm/uni-bf.json", "tokenizers"), ("tok/mistral-v1.json", "tokenizers"), ("tok/bert-bge.json", "tokenizers")]


def data_path(name, tmp):
    """The file under tests/data; an .xz one decompressed into tmp first."""
    path = os.path.join(DATA, name)
    if not name.endswith(".xz"):
        return path
    out = os.path.join(tmp, os.path.basename(name)[:-3])
    if not os.path.exists(out):
        with lzma.open(path) as f, open(out, "wb") as g:
            g.write(f.read())
    return out


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def self_cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run_sluice(sluice, tok, corpus, threads, out, runs=3):
    """Wall and CPU seconds, each the median of `runs` runs (a shared
    machine moves single runs by 10-20%; the peers, which take ten times
    longer, run SPM_BENCH_PEER_RUNS times, default 3, their median too)."""
    walls, cpus = [], []
    for _ in range(runs):
        c0, t0 = child_cpu(), time.perf_counter()
        subprocess.run([sluice, "tokenize", "text", "-q", "-@", str(threads), "-t", tok, corpus, "-o", out], check=True)
        walls.append(time.perf_counter() - t0)
        cpus.append(child_cpu() - c0)
    return sorted(walls)[runs // 2], sorted(cpus)[runs // 2]


def sluice_ids(sluice, out):
    r = subprocess.run([sluice, "cat", out], check=True, capture_output=True, text=True)
    return [json.loads(l)["ids"] for l in r.stdout.splitlines()]


def peer(kind, path):
    if kind == "sentencepiece":
        import sentencepiece as spm

        sp = spm.SentencePieceProcessor(model_file=path)
        return lambda docs: sp.encode(docs, num_threads=1)
    os.environ["RAYON_NUM_THREADS"] = "1"
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(path)
    tok.encode_special_tokens = True  # sluice's default: literal special tokens are text
    return lambda docs: [tok.encode(d, add_special_tokens=False).ids for d in docs]


def main():
    sluice, corpus = sys.argv[1], sys.argv[2]
    docs = [json.loads(l)["text"] for l in open(corpus, encoding="utf-8")]
    mb = sum(len(d.encode("utf-8")) for d in docs) / 1e6
    print("corpus: %d documents, %.1f MB of text; %d CPUs" % (len(docs), mb, os.cpu_count() or 1))
    print("(-@ 2's figure here includes the load and the start, a large part of a run this size; bench/threads.sh "
          "measures thread scaling on 64 MB, against two processes)")
    out = corpus + ".tok"
    tmp = os.path.dirname(os.path.abspath(corpus))
    for name, kind in FILES:
        path = data_path(name, tmp)
        wall1, cpu1 = run_sluice(sluice, path, corpus, 1, out)
        got = sluice_ids(sluice, out)
        wall2, cpu2 = run_sluice(sluice, path, corpus, 2, out)
        line = "%-21s sluice -@ 1: %6.2f MB/s (%.2f s CPU); -@ 2: %6.2f MB/s (x%.2f)" % (
            name, mb / wall1, cpu1, mb / wall2, wall1 / wall2)
        try:
            enc = peer(kind, path)
        except ImportError:
            print(line + "; peer skipped: %s is not installed for %s" % (kind, sys.executable))
            continue
        walls, cpus = [], []
        for _ in range(PEER_RUNS):
            c0, t0 = self_cpu(), time.perf_counter()
            ids = enc(docs)
            walls.append(time.perf_counter() - t0)
            cpus.append(self_cpu() - c0)
        wall, cpu = sorted(walls)[PEER_RUNS // 2], sorted(cpus)[PEER_RUNS // 2]
        same = sum(a == list(b) for a, b in zip(got, ids))
        print(line + "; %s 1 thread: %6.2f MB/s (%.2f s CPU); CPU time %s/sluice x%.1f; ids equal on %d/%d documents"
              % (kind, mb / wall, cpu, kind, cpu / cpu1, same, len(docs)))
    rng = random.Random(1)
    alphabet = "abcdefghijklmnopqrstuvwxyz\u00e9\u6f22\u5b57\U0001f642"
    for n in (1 << 20, 1 << 21):
        text = "".join(rng.choice(alphabet) for _ in range(n // 2))
        one = os.path.join(os.path.dirname(corpus), "nospace.jsonl")
        with open(one, "w", encoding="utf-8") as f:
            f.write(json.dumps({"id": "x", "text": text}) + "\n")
        for name, _ in FILES:
            wall, _ = run_sluice(sluice, data_path(name, tmp), one, 1, out, runs=1)
            print("%-21s sluice, %d KB without spaces: %.2f s" % (name, len(text.encode()) // 1024, wall))


if __name__ == "__main__":
    main()

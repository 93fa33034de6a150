#!/usr/bin/env python3
"""Runs sluice tokenize bpe side by side with tiktoken (encode_ordinary_batch)
on the same corpus, per tokenizer and thread count, checks the ids agree and
prints MB/s and the ratio sluice/peer; each time is the median of
TIKTOKEN_BENCH_RUNS runs (default 3). Called by bench/tiktoken.sh.
usage: tiktoken_bench.py SLUICE CORPUS.jsonl TMPDIR"""
import base64
import glob
import json
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GPT2 = os.path.join(HERE, "..", "tests", "data", "bpe", "gpt2")
O200K = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""", r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""", r"""\s*[\r\n]+""", r"""\s+(?!\S)""", r"""\s+"""])
R50K = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""


def r50k_ranks():
    """tiktoken's data_gym_to_mergeable_bpe_ranks on GPT-2's files."""
    merges = open(os.path.join(GPT2, "merges.txt"), encoding="utf-8").read().split("\n")[1:-1]
    order = [b for b in range(256) if chr(b).isprintable() and chr(b) != " "]
    dg = {chr(b): b for b in order}
    n = 0
    for b in range(256):
        if b not in order:
            order.append(b)
            dg[chr(256 + n)] = b
            n += 1
    ranks = {bytes([b]): i for i, b in enumerate(order)}
    for m in merges:
        a, b = m.split()
        ranks[bytes(dg[c] for c in a) + bytes(dg[c] for c in b)] = len(ranks)
    return ranks


RUNS = max(1, int(os.environ.get("TIKTOKEN_BENCH_RUNS", "3")))


def median(xs):
    return sorted(xs)[len(xs) // 2]


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main():
    sluice, corpus, tmp = sys.argv[1:4]
    docs = [json.loads(l)["text"] for l in open(corpus, encoding="utf-8")]
    mb = sum(len(d.encode("utf-8")) for d in docs) / 1e6
    ncpu = os.cpu_count() or 1
    print("corpus: %d documents, %.1f MB of text; %d CPUs" % (len(docs), mb, ncpu))
    try:
        import tiktoken
    except ImportError:
        tiktoken = None
        print("peer skipped: tiktoken is not installed for %s" % sys.executable)
    ranks = r50k_ranks()
    rank_file = os.path.join(tmp, "r50k_base.tiktoken")
    with open(rank_file, "wb") as f:
        for tok, r in sorted(ranks.items(), key=lambda x: x[1]):
            f.write(base64.b64encode(tok) + b" " + str(r).encode() + b"\n")
    cases = [("r50k/gpt2", [rank_file, "--pattern", "gpt2"], R50K, ranks, 0),
             ("r50k/o200k", [rank_file, "--pattern", "o200k"], O200K, ranks, 0)]
    tekken = glob.glob(os.path.join(sys.prefix, "lib/python3*/site-packages/mistral_common/data/tekken_240911.json"))
    if tekken:
        d = json.load(open(tekken[0], encoding="utf-8"))
        n_sp = d["config"]["default_num_special_tokens"]
        tranks = {base64.b64decode(v["token_bytes"]): v["rank"]
                  for v in d["vocab"][:d["config"]["default_vocab_size"] - n_sp]}
        cases.append(("tekken", [tekken[0]], d["config"]["pattern"], tranks, n_sp))
    else:
        print("tekken skipped: mistral-common is not installed for %s" % sys.executable)
    out = os.path.join(tmp, "out.tok")
    rows = []
    for name, args, pat, rk, offset in cases:
        enc = tiktoken.Encoding("b_" + name, pat_str=pat, mergeable_ranks=rk, special_tokens={}) if tiktoken else None
        for threads in sorted({1, ncpu}):
            w, c = [], []
            for _ in range(RUNS):
                c0, t0 = child_cpu(), time.perf_counter()
                subprocess.run([sluice, "tokenize", "bpe", "-q", "-@", str(threads), "-t"] + args + [corpus, "-o", out],
                               check=True)
                w.append(time.perf_counter() - t0)
                c.append(child_cpu() - c0)
            rows.append(("sluice", name, threads, median(w), median(c)))
            if enc:
                w, c = [], []
                for _ in range(RUNS):
                    r0 = resource.getrusage(resource.RUSAGE_SELF)
                    t0 = time.perf_counter()
                    ids = enc.encode_ordinary_batch(docs, num_threads=threads)
                    w.append(time.perf_counter() - t0)
                    r1 = resource.getrusage(resource.RUSAGE_SELF)
                    c.append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
                rows.append(("tiktoken", name, threads, median(w), median(c)))
                if threads == 1:
                    got = subprocess.run([sluice, "cat", out], check=True, capture_output=True, text=True).stdout
                    got = [json.loads(l)["ids"] for l in got.splitlines()]
                    same = got == [[i + offset for i in x] for x in ids]
                    print("%s: ids %s tiktoken's on all %d documents" % (name, "equal" if same else "DIFFER from",
                                                                        len(docs)))
    print("%-9s %-11s %7s %9s %9s %9s %12s" % ("tool", "tokenizer", "threads", "wall s", "cpu s", "MB/s", "sluice/peer"))
    best = {(r[1], r[2]): r[3] for r in rows if r[0] == "sluice"}
    for tool, name, threads, wall, cpu in rows:
        ratio = "" if tool == "sluice" else "%.2fx" % (wall / best[(name, threads)])
        print("%-9s %-11s %7d %9.2f %9.2f %9.1f %12s" % (tool, name, threads, wall, cpu, mb / wall, ratio))
    print("(ratio = tiktoken wall time / sluice wall time on the same input; >1 means sluice is faster)")


if __name__ == "__main__":
    main()

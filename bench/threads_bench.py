#!/usr/bin/env python3
"""Thread scaling of `sluice tokenize text`: each round runs every file at
-@ 1 and then at -@ 2 (interleaved, so that a slow spell of a shared host
falls on both), and prints per file the median wall time and CPU seconds
at each, the scaling of the medians, and the scaling of the least times
(the runs the host disturbed least). The load of the tokenizer is part of
every run, as it is for a user. The ids of -@ 2 are checked to be those of
-@ 1 (the same output, byte for byte).
usage: threads_bench.py SLUICE CORPUS.jsonl [ROUNDS]"""
import filecmp
import os
import resource
import statistics
import subprocess
import sys
import time

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data")
FILES = ["spm/mistral-v1.model", "spm/uni-bf.model", "spm/uni-bf.json", "tok/mistral-v1.json", "tok/bert-bge.json",
         "bpe/neox-tokenizer.json"]


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(sluice, tok, corpus, threads, out):
    c0, t0 = child_cpu(), time.perf_counter()
    subprocess.run([sluice, "tokenize", "text", "-q", "-@", str(threads), "-t", tok, corpus, "-o", out], check=True)
    return time.perf_counter() - t0, child_cpu() - c0


def main():
    sluice, corpus = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    mb = os.path.getsize(corpus) / 1e6
    print("corpus: %.1f MB of JSON Lines; %d rounds, -@ 1 and -@ 2 interleaved" % (mb, rounds))
    times = {(f, t): [] for f in FILES for t in (1, 2)}
    outs = {t: corpus + ".%d.tok" % t for t in (1, 2)}
    for _ in range(rounds):
        for f in FILES:
            for t in (1, 2):
                times[(f, t)].append(run(sluice, os.path.join(DATA, f), corpus, t, outs[t]))
            if not filecmp.cmp(outs[1], outs[2], shallow=False):
                sys.exit("threads_bench: %s: -@ 2 wrote another stream than -@ 1" % f)
    print("%-24s %15s %15s %9s %9s" % ("file", "-@ 1 s (CPU)", "-@ 2 s (CPU)", "x median", "x least"))
    for f in FILES:
        one, two = times[(f, 1)], times[(f, 2)]
        w1, w2 = statistics.median(w for w, _ in one), statistics.median(w for w, _ in two)
        c1, c2 = statistics.median(c for _, c in one), statistics.median(c for _, c in two)
        m1, m2 = min(w for w, _ in one), min(w for w, _ in two)
        print("%-24s %6.2f (%6.2f) %6.2f (%6.2f) %8.2fx %8.2fx" % (f, w1, c1, w2, c2, w1 / w2, m1 / m2))
    for t in (1, 2):
        os.remove(outs[t])


if __name__ == "__main__":
    main()

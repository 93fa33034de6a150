#!/usr/bin/env python3
"""Thread scaling of `sluice tokenize text`: each round runs every file at
-@ 1, at -@ 2, and as two -@ 1 processes side by side on the same input
(interleaved, so that a slow spell of a shared host falls on all three),
and prints per file the median wall time and CPU seconds at -@ 1 and -@ 2,
the scaling of the medians, the scaling of the least times (the runs the
host disturbed least), and what two processes get: twice the work in the
pair's wall time, over -@ 1's. Two processes share nothing but the machine,
so their figure is what this machine gives a second core on this work
(each also loads its own tokenizer at the same time as the other, where
-@ 2 loads one before its threads start); -@ 2 can at best match it. The
load of the tokenizer is part of every run, as it is for a user. The output
of -@ 2 is checked to be that of -@ 1, byte for byte. Each run writes a new
file: the one of the round before is removed untimed (replacing it freed
its pages inside the run, 4 ms of a 0.5 s run on tmpfs, for -@ 1 and -@ 2
alike).
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


def fresh(*paths):
    for p in paths:
        if os.path.exists(p):
            os.remove(p)


def run(sluice, tok, corpus, threads, out):
    fresh(out)
    c0, t0 = child_cpu(), time.perf_counter()
    subprocess.run([sluice, "tokenize", "text", "-q", "-@", str(threads), "-t", tok, corpus, "-o", out], check=True)
    return time.perf_counter() - t0, child_cpu() - c0


def run_pair(sluice, tok, corpus, outs):
    fresh(*outs)
    t0 = time.perf_counter()
    ps = [subprocess.Popen([sluice, "tokenize", "text", "-q", "-@", "1", "-t", tok, corpus, "-o", o]) for o in outs]
    if any(p.wait() for p in ps):
        sys.exit("threads_bench: %s: a run failed" % tok)
    return time.perf_counter() - t0


def main():
    sluice, corpus = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    mb = os.path.getsize(corpus) / 1e6
    print("corpus: %.1f MB of JSON Lines; %d rounds, -@ 1, -@ 2 and two -@ 1 processes interleaved" % (mb, rounds))
    times = {(f, t): [] for f in FILES for t in (1, 2)}
    pairs = {f: [] for f in FILES}
    outs = {t: corpus + ".%d.tok" % t for t in (1, 2)}
    for _ in range(rounds):
        for f in FILES:
            for t in (1, 2):
                times[(f, t)].append(run(sluice, os.path.join(DATA, f), corpus, t, outs[t]))
            if not filecmp.cmp(outs[1], outs[2], shallow=False):
                sys.exit("threads_bench: %s: -@ 2 wrote another stream than -@ 1" % f)
            pairs[f].append(run_pair(sluice, os.path.join(DATA, f), corpus, [outs[1], outs[2]]))
    print("%-24s %15s %15s %9s %9s %11s" % ("file", "-@ 1 s (CPU)", "-@ 2 s (CPU)", "x median", "x least",
                                            "x 2 procs"))
    for f in FILES:
        one, two = times[(f, 1)], times[(f, 2)]
        w1, w2 = statistics.median(w for w, _ in one), statistics.median(w for w, _ in two)
        c1, c2 = statistics.median(c for _, c in one), statistics.median(c for _, c in two)
        m1, m2 = min(w for w, _ in one), min(w for w, _ in two)
        print("%-24s %6.2f (%6.2f) %6.2f (%6.2f) %8.2fx %8.2fx %10.2fx" % (f, w1, c1, w2, c2, w1 / w2, m1 / m2,
                                                                          2 * w1 / statistics.median(pairs[f])))
    fresh(*outs.values())


if __name__ == "__main__":
    main()

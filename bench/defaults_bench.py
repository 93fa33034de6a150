#!/usr/bin/env python3
"""Every stage at its default thread count against -@ 1, on the same input,
interleaved round by round (so that a slow spell of a shared host falls on
both): the median wall time of each and their ratio. A default should never
be slower than one thread: a stage whose work is mostly serial (reading,
writing) and whose parallel part is light pays more in hand-offs between
cores than its threads save (`read` and `tokenize char` did: 1.5-2.2x on two
cores, docs/performance.md, twenty-first round), and a command with no
parallel work pays only the re-execution that sets OMP_WAIT_POLICY. Such a
stage's default is one thread (cli/cli.h, `serial`). A ratio above 1.05 is
marked SLOWER. The outputs of the two runs are compared byte for byte.
usage: defaults_bench.py SLUICE DOCS.jsonl FASTA [ROUNDS]"""
import filecmp
import os
import statistics
import subprocess
import sys
import time

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data")


def stages(docs, fasta, tok):
    """(name, command words, arguments): every stage that takes documents, sequences or a token stream."""
    gpt2 = os.path.join(DATA, "bpe", "gpt2")
    lid = os.path.join(DATA, "classify", "lid.176.ftz")
    return [
        ("read", ["read"], [docs]),
        ("tokenize text (GPT-2)", ["tokenize", "text"], ["-t", gpt2, docs]),
        ("tokenize char", ["tokenize", "char"], [docs]),
        ("tokenize dna", ["tokenize", "dna"], [fasta]),
        ("classify (lid.176)", ["classify"], ["--model", lid, docs]),
        ("filter --rules", ["filter"], ["--rules", "gopher-quality,gopher-repetition,c4,fineweb", docs]),
        ("dedup exact", ["dedup", "exact"], [docs]),
        ("dedup exact --normalize", ["dedup", "exact"], ["--normalize", docs]),
        ("dedup lines", ["dedup", "lines"], [docs]),
        ("dedup minhash", ["dedup", "minhash"], [docs]),
        ("cat", ["cat"], [tok]),
        ("stats", ["stats"], [tok]),
        ("head -n 100", ["head"], ["-n", "100", tok]),
        ("pack --seq-len 2048", ["pack"], ["--seq-len", "2048", tok]),
    ]


def run(sluice, words, args, threads, out):
    """Wall seconds of one run; threads 0: the stage's default (no -@)."""
    if os.path.exists(out):
        os.remove(out)
    cmd = [sluice] + words + ["-q"] + (["-@", str(threads)] if threads else []) + args + ["-o", out]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main():
    sluice, docs, fasta = sys.argv[1:4]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    tmp = os.path.dirname(os.path.abspath(docs))
    tok = os.path.join(tmp, "stream.tok")
    subprocess.run([sluice, "tokenize", "text", "-q", "-t", os.path.join(DATA, "bpe", "gpt2"), docs, "-o", tok],
                   check=True)
    print("inputs: %.1f MB of JSON Lines, %.1f MB of FASTA, a %.1f MB token stream; %d CPUs; %d rounds" %
          (os.path.getsize(docs) / 1e6, os.path.getsize(fasta) / 1e6, os.path.getsize(tok) / 1e6, os.cpu_count(),
           rounds))
    print("%-26s %12s %12s %9s" % ("stage", "default s", "-@ 1 s", "default/1"))
    slower = 0
    for name, words, args in stages(docs, fasta, tok):
        outs = {t: os.path.join(tmp, "out.%d" % t) for t in (0, 1)}
        times = {0: [], 1: []}
        for r in range(rounds):
            for t in ((0, 1) if r % 2 == 0 else (1, 0)):
                times[t].append(run(sluice, words, args, t, outs[t]))
        if not filecmp.cmp(outs[0], outs[1], shallow=False):
            sys.exit("defaults_bench: %s: the default and -@ 1 wrote different outputs" % name)
        d, one = statistics.median(times[0]), statistics.median(times[1])
        mark = "  SLOWER" if d > 1.05 * one else ""
        slower += bool(mark)
        print("%-26s %12.3f %12.3f %8.2fx%s" % (name, d, one, d / one, mark))
        for o in outs.values():
            os.remove(o)
    os.remove(tok)
    print("stages whose default is slower than -@ 1: %d" % slower)


if __name__ == "__main__":
    main()

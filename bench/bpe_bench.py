#!/usr/bin/env python3
"""Runs sluice tokenize bpe side by side with Hugging Face `tokenizers`
(GPT-NeoX-20B and GPT-2) and `tiktoken` (GPT-2) on the same corpus, with 1
thread and with all threads, and prints MB/s (text bytes / wall time), CPU
seconds and the ratio sluice/peer. Peers that are not installed are skipped
with a message. Called by bench/bpe.sh.
usage: bpe_bench.py SLUICE CORPUS.jsonl"""
import json
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
DATA = os.path.join(ROOT, "tests", "data", "bpe")
sys.path.insert(0, os.path.join(ROOT, "tests", "bpe"))
TOKS = {"neox": os.path.join(DATA, "neox-tokenizer.json"), "gpt2": os.path.join(DATA, "gpt2")}


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def self_cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run_sluice(sluice, tok, corpus, threads, out):
    c0, t0 = child_cpu(), time.perf_counter()
    subprocess.run([sluice, "tokenize", "bpe", "-q", "-@", str(threads), "-t", TOKS[tok], corpus, "-o", out],
                   check=True)
    return time.perf_counter() - t0, child_cpu() - c0


def timed(fn):
    c0, t0 = self_cpu(), time.perf_counter()
    r = fn()
    return time.perf_counter() - t0, self_cpu() - c0, r


def main():
    sluice, corpus = sys.argv[1], sys.argv[2]
    docs = [json.loads(l)["text"] for l in open(corpus, encoding="utf-8")]
    mb = sum(len(d.encode("utf-8")) for d in docs) / 1e6
    ncpu = os.cpu_count() or 1
    print("corpus: %d documents, %.1f MB of text; %d CPUs" % (len(docs), mb, ncpu))
    out = corpus + ".tok"
    rows = []
    try:
        import tokenizers  # noqa: F401
        from refs import hf_gpt2, hf_neox
        hf = {"neox": hf_neox(DATA), "gpt2": hf_gpt2(DATA)}
    except ImportError:
        hf = None
        print("peer skipped: Hugging Face tokenizers is not installed for %s "
              "(python3 -m venv V && V/bin/pip install tokenizers tiktoken; BPE_BENCH_PYTHON=V/bin/python)" % sys.executable)
    try:
        import tiktoken  # noqa: F401
        from refs import tiktoken_gpt2
        tk = tiktoken_gpt2(DATA)
    except ImportError:
        tk = None
        print("peer skipped: tiktoken is not installed for %s" % sys.executable)
    for threads in sorted({1, ncpu}):
        for tok in ("neox", "gpt2"):
            wall, cpu = run_sluice(sluice, tok, corpus, threads, out)
            rows.append(("sluice", tok, threads, wall, cpu))
            if hf:
                # HF parallelizes encode_batch with rayon; RAYON_NUM_THREADS is read once per
                # process, so the thread count is set with a fresh interpreter per setting.
                code = ("import json,sys,time,resource;sys.path.insert(0,%r);from refs import hf_%s as f;"
                        "t=f(%r);d=[json.loads(l)['text'] for l in open(%r,encoding='utf-8')];"
                        "r=resource.getrusage(resource.RUSAGE_SELF);c0=r.ru_utime+r.ru_stime;t0=time.perf_counter();"
                        "t.encode_batch(d,add_special_tokens=False);w=time.perf_counter()-t0;"
                        "r=resource.getrusage(resource.RUSAGE_SELF);print(w,r.ru_utime+r.ru_stime-c0)"
                        % (os.path.join(ROOT, "tests", "bpe"), tok, DATA, corpus))
                env = dict(os.environ, RAYON_NUM_THREADS=str(threads), TOKENIZERS_PARALLELISM="true")
                w, c = map(float, subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                                 capture_output=True, text=True).stdout.split())
                rows.append(("hf-tokenizers", tok, threads, w, c))
            if tk and tok == "gpt2":
                w, c, _ = timed(lambda: tk.encode_ordinary_batch(docs, num_threads=threads))
                rows.append(("tiktoken", tok, threads, w, c))
    os.remove(out)
    print("%-14s %-5s %7s %9s %9s %9s %12s" % ("tool", "tok", "threads", "wall s", "cpu s", "MB/s", "sluice/peer"))
    best = {(r[1], r[2]): r[3] for r in rows if r[0] == "sluice"}
    for name, tok, threads, wall, cpu in rows:
        ratio = "" if name == "sluice" else "%.2fx" % (wall / best[(tok, threads)])
        print("%-14s %-5s %7d %9.2f %9.2f %9.1f %12s" % (name, tok, threads, wall, cpu, mb / wall, ratio))
    print("(ratio = peer wall time / sluice wall time on the same input; >1 means sluice is faster)")


if __name__ == "__main__":
    main()

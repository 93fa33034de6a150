#!/usr/bin/env python3
"""One-thread encode of the same corpus by sluice and by the fast exact
tokenizers on PyPI, per byte-level BPE vocabulary, side by side: CPU seconds
(medians of interleaved rounds), MB/s of CPU time, and whether each peer's
ids equal sluice's on every document (sluice's are checked against HF
tokenizers and tiktoken by the test suite). sluice's figure is its whole
process (start, tokenizer load, JSON Lines reading, encode, token stream
writing); a peer's is its encode call alone, on texts already in memory,
in a process of its own for each round, after it has encoded WARM.jsonl
(other documents of the same kinds, not timed): its piece cache or memo is
then as warm as midway through a longer corpus, but holds none of the
corpus's own pieces because of an earlier round. (Encoding the corpus a
second time in one process, as rounds before 2026-11-29 did, times a
memoizing peer such as gigatok on lookups alone; that figure is kept as the
"repeat" column.) With WARM.jsonl sluice is also measured the peers' way,
as "steady": the run of WARM.jsonl followed by the corpus, less the run of
WARM.jsonl alone (start, load and the warm-up cancel), which is what the
corpus costs sluice midway through a longer run; the verdict on the goal
stays with the whole-process figure. Called by bench/peers.sh.
usage: peers_bench.py SLUICE CORPUS.jsonl TMPDIR [WARM.jsonl]

Vocabularies: GPT-2 (tests/data/bpe/gpt2), GPT-NeoX-20B
(tests/data/bpe/neox-tokenizer.json), cl100k_base and o200k_base (the rank
files the bpe-openai package ships). Peers: fastokens, gigatok, tiktoken,
riptoken, bpe-openai, quicktok, toktok (toktok-rs), rs-bpe (the last four on
cl100k and o200k only) and, with PEERS_BENCH_HF=1, HF tokenizers; a peer
that is not installed is left out.
Env: PEERS_BENCH_ROUNDS (default 5), PEERS_BENCH_ONLY (comma list of
vocabularies), PEERS_BENCH_HF (1: also HF tokenizers, one round; 40-60 s
each)."""
import base64
import glob
import gzip
import importlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time

# one thread for every peer (rayon, HF, tiktoken's batch pool are not used)
os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
DATA = os.path.join(ROOT, "tests", "data", "bpe")
sys.path.insert(0, os.path.join(ROOT, "tests", "bpe"))

CL100K = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|"""
          r"""\s*[\r\n]|\s+(?!\S)|\s""")
O200K = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""", r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""", r"""\s*[\r\n]+""", r"""\s+(?!\S)""", r"""\s+"""])
LLAMA3 = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"""
          r"""\s*[\r\n]+|\s+(?!\S)|\s+""")
R50K = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""

ROUNDS = max(1, int(os.environ.get("PEERS_BENCH_ROUNDS", "5")))


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def self_cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def version(mod):
    try:
        from importlib import metadata
        return metadata.version(mod)
    except Exception:  # noqa: BLE001
        return "?"


def read_ranks(path):
    opener = gzip.open if path.endswith(".gz") else open
    ranks = {}
    with opener(path, "rb") as f:
        for line in f:
            if line.strip():
                tok, r = line.split()
                ranks[base64.b64decode(tok)] = int(r)
    return ranks


def bytes_to_unicode():
    """GPT-2's byte -> character map (the inverse of tests/bpe/refs.py's)."""
    from refs import _bytes_to_unicode
    return {b: c for c, b in _bytes_to_unicode().items()}


def tiktoken_to_json(ranks, pattern, path):
    """A tokenizer.json for a tiktoken rank file, made the way Llama-3's was
    (transformers' TikTokenConverter): each token's merges are its splits into
    two tokens, ordered by the token's rank; Split(pattern) then ByteLevel
    without its regex; ignore_merges."""
    b2u = bytes_to_unicode()

    def u(b):
        return "".join(b2u[x] for x in b)
    merges = []
    for tok, r in ranks.items():
        if len(tok) < 2:
            continue
        local = []
        for i in range(1, len(tok)):
            a, b = tok[:i], tok[i:]
            if a in ranks and b in ranks and ranks[a] < r and ranks[b] < r:
                local.append((ranks[a], ranks[b], a, b))
        local.sort()
        merges.extend((r, ra, rb, a, b) for ra, rb, a, b in local)
    merges.sort()
    j = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
         "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
             {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False},
             {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
         "post_processor": None, "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                                             "use_regex": True},
         "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                   "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": True,
                   "vocab": {u(t): r for t, r in sorted(ranks.items(), key=lambda x: x[1])},
                   "merges": [[u(a), u(b)] for _, _, _, a, b in merges]}}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(j, f, ensure_ascii=False)


def vocabularies(tmp):
    """name -> dict(sluice args, ranks/pattern for tiktoken-style peers, tokenizer.json for HF-style peers)."""
    out = {}
    gpt2_json = os.path.join(tmp, "gpt2-tokenizer.json")
    try:
        from refs import hf_gpt2
        if not os.path.exists(gpt2_json):  # (a worker reuses the files its parent made)
            hf_gpt2(DATA).save(gpt2_json)
    except ImportError:
        gpt2_json = None
    u2b = None
    try:
        from refs import _bytes_to_unicode
        u2b = _bytes_to_unicode()
    except ImportError:
        pass
    gpt2_ranks = None
    if u2b:
        vocab = json.load(open(os.path.join(DATA, "gpt2", "vocab.json"), encoding="utf-8"))
        gpt2_ranks = {bytes(u2b[c] for c in t): i for t, i in vocab.items() if t != "<|endoftext|>"}
    out["gpt2"] = dict(sluice=[os.path.join(DATA, "gpt2")], json=gpt2_json, ranks=gpt2_ranks, pat=R50K)
    out["neox"] = dict(sluice=[os.path.join(DATA, "neox-tokenizer.json")],
                       json=os.path.join(DATA, "neox-tokenizer.json"))
    data = glob.glob(os.path.join(sys.prefix, "lib/python3*/site-packages/bpe_openai/data"))
    for name, pat, jpat in (("cl100k", CL100K, LLAMA3), ("o200k", O200K, O200K)):
        if not data:
            print("%s skipped: the bpe-openai package (which ships the rank file) is not installed" % name)
            continue
        path = os.path.join(tmp, "%s_base.tiktoken" % name)
        if not os.path.exists(path):
            with open(path, "wb") as f:
                f.write(gzip.open(os.path.join(data[0], "%s_base.tiktoken.gz" % name)).read())
        ranks = read_ranks(path)
        js = os.path.join(tmp, "%s-tokenizer.json" % name)
        if not os.path.exists(js):
            tiktoken_to_json(ranks, jpat, js)
        out[name] = dict(sluice=[path], tiktoken=path, json=js, ranks=ranks, pat=pat, openai="%s_base" % name)
    return out


def sluice_ids(sluice, out):
    import numpy as np
    txt = subprocess.run([sluice, "cat", out], check=True, capture_output=True, text=True).stdout
    return [np.asarray(json.loads(l)["ids"], dtype=np.uint32) for l in txt.splitlines()]


def compare(refs, got):
    """refs: sluice's ids with special tokens' text encoded as text, and (or
    None) with it parsed (--special parse)."""
    import numpy as np
    ref, parsed = refs
    if len(ref) != len(got):
        return "no (%d docs vs %d)" % (len(got), len(ref))
    got = [np.asarray(b, dtype=np.uint32) for b in got]
    bad = sum(1 for a, b in zip(ref, got) if not np.array_equal(a, b))
    if bad and parsed is not None and all(np.array_equal(a, b) for a, b in zip(parsed, got)):
        return "yes (= --special parse: <|endoftext|> in text parsed)"
    return "yes" if bad == 0 else "no (%d docs differ)" % bad


def peers_for(name, v, docs):
    """[(peer, version, prepare() -> encode(docs) -> per-doc ids)] available for vocabulary v."""
    peers = []

    def add(label, module, dist, make):
        """The peer when its module imports; make(module) builds it and returns encode."""
        try:
            mod = importlib.import_module(module)
        except ImportError:
            return
        peers.append((label, version(dist), lambda: make(mod)))

    def batch_ids(t, **kw):
        return lambda ds: [e.ids for e in t.encode_batch(ds, **kw)]

    def per_doc(encode):
        return lambda ds: [encode(d) for d in ds]

    if v.get("json"):
        add("fastokens", "fastokens", "fastokens",
            lambda m: batch_ids(m.Tokenizer.from_file(v["json"]), split_special_tokens=True))
        add("gigatok", "gigatok", "gigatok", lambda m: per_doc(m.Tokenizer(v["json"]).encode))
    elif v.get("tiktoken"):
        add("fastokens", "fastokens", "fastokens",
            lambda m: batch_ids(m.Tokenizer.from_tiktoken(v["tiktoken"], pattern=v["pat"], encoding=v["openai"]),
                                split_special_tokens=True))
        add("gigatok", "gigatok", "gigatok", lambda m: per_doc(m.Tokenizer.from_tiktoken(v["tiktoken"]).encode))
    if v.get("ranks"):
        add("tiktoken", "tiktoken", "tiktoken",
            lambda m: per_doc(m.Encoding("b_" + name, pat_str=v["pat"], mergeable_ranks=v["ranks"],
                                         special_tokens={}).encode_ordinary))
        add("riptoken", "riptoken", "riptoken", lambda m: per_doc(m.CoreBPE(v["ranks"], {}, v["pat"]).encode_ordinary))
    if v.get("openai"):
        add("bpe-openai", "bpe_openai", "bpe-openai", lambda m: per_doc(m.get_encoding(v["openai"]).encode_ordinary))
        # quicktok (C++; its own hand-written pre-tokenizers: cl100k and o200k here, not GPT-2's or NeoX's)
        add("quicktok", "quicktok", "quicktok-v1", lambda m: per_doc(m.get_encoding(v["openai"]).encode_ordinary))
        # toktok-rs (Rust; exact backtracking BPE after bpe-openai, quicktok's data structures; its
        # encodings compiled in). The module is named toktok, as NLTK's unrelated word tokenizer is.
        add("toktok", "toktok", "toktok-rs",
            lambda m: per_doc(m._Tokenizer(v["openai"], "").encode_ordinary))
        # rs-bpe (Rust; its own cl100k_base and o200k_base)
        add("rs-bpe", "rs_bpe", "rs-bpe", lambda m: per_doc(getattr(m.openai, v["openai"])().encode))
    if v.get("json") and os.environ.get("PEERS_BENCH_HF") == "1":

        def hf(m):
            t = m.Tokenizer.from_file(v["json"])
            t.encode_special_tokens = True
            return batch_ids(t, add_special_tokens=False)
        add("HF tokenizers", "tokenizers", "tokenizers", hf)
    return peers

def read_docs(path):
    return [json.loads(l)["text"] for l in open(path, encoding="utf-8")] if path else []


def worker(name, peer, corpus, warm, tmp, ref_path):
    """One round of one peer, in a process of its own (fastokens keeps its
    piece cache per thread, gigatok its memo per tokenizer: a fresh process
    starts both empty): build the tokenizer, encode the warm-up corpus, then
    time the encode of the corpus, then the same corpus again. Prints one
    JSON line."""
    docs, wdocs = read_docs(corpus), read_docs(warm)
    v = vocabularies(tmp)[name]
    prep = next(prep for p, _, prep in peers_for(name, v, docs) if p == peer)
    c0 = self_cpu()
    enc = prep()
    res = {"load": self_cpu() - c0}
    c0 = self_cpu()
    if wdocs:
        enc(wdocs)
    res["warm"] = self_cpu() - c0
    c0 = self_cpu()
    ids = enc(docs)
    res["cpu"] = self_cpu() - c0
    if ref_path:
        import pickle
        with open(ref_path, "rb") as f:
            res["same"] = compare(pickle.load(f), ids)
    del ids
    c0 = self_cpu()
    enc(docs)
    res["repeat"] = self_cpu() - c0
    print(json.dumps(res))


def main():
    if sys.argv[1] == "--worker":
        worker(*sys.argv[2:8])
        return
    sluice, corpus, tmp = sys.argv[1:4]
    warm = sys.argv[4] if len(sys.argv) > 4 else ""
    docs = read_docs(corpus)
    mb = sum(len(d.encode("utf-8")) for d in docs) / 1e6
    wmb = sum(len(d.encode("utf-8")) for d in read_docs(warm)) / 1e6
    print("corpus: %d documents, %.1f MB of text; one thread each; %d rounds, medians of CPU seconds" %
          (len(docs), mb, ROUNDS))
    print("each peer's round in a process of its own, its tokenizer built, then %.1f MB of other documents "
          "encoded (warm-up, not timed), then the corpus (timed)" % wmb)
    only = [x for x in os.environ.get("PEERS_BENCH_ONLY", "").split(",") if x]
    out = os.path.join(tmp, "out.tok")
    # sluice measured as the peers are: the warm-up then the corpus in one run,
    # less the warm-up's run alone (its load, start and the warm-up's pieces
    # cancel): the corpus's cost to a run that has seen as much text before
    both = ""
    if warm:
        both = os.path.join(tmp, "warm-corpus.jsonl")
        with open(both, "wb") as f:
            for path in (warm, corpus):
                with open(path, "rb") as g:
                    shutil.copyfileobj(g, f)
    table = []
    for name, v in vocabularies(tmp).items():
        if only and name not in only:
            continue
        empty = os.path.join(tmp, "empty.jsonl")
        with open(empty, "w") as f:
            f.write('{"text":""}\n')
        cmd = [sluice, "tokenize", "text", "-q", "-@", "1", "-t"] + v["sluice"]
        peers = peers_for(name, v, docs)
        times = {"sluice": [], "sluice load": [], "sluice steady": []}
        info = {}
        ref_path = os.path.join(tmp, "ref-%s.pickle" % name)
        for r in range(ROUNDS):
            c0 = child_cpu()
            subprocess.run(cmd + [empty, "-o", out], check=True)
            times["sluice load"].append(child_cpu() - c0)
            c0 = child_cpu()
            subprocess.run(cmd + [corpus, "-o", out], check=True)
            times["sluice"].append(child_cpu() - c0)
            if r == 0:
                import pickle
                ref = sluice_ids(sluice, out)
                parsed = None
                if v.get("json") and "--pattern" not in cmd and v["sluice"][0].endswith((".json", "gpt2")):
                    subprocess.run(cmd + ["--special", "parse", corpus, "-o", out], check=True)
                    parsed = sluice_ids(sluice, out)
                with open(ref_path, "wb") as f:
                    pickle.dump((ref, parsed), f)
                del ref, parsed
            if both:
                c0 = child_cpu()
                subprocess.run(cmd + [warm, "-o", out], check=True)
                c1 = child_cpu()
                subprocess.run(cmd + [both, "-o", out], check=True)
                times["sluice steady"].append((child_cpu() - c1) - (c1 - c0))
            for p, _, _ in peers:
                if p in info and info[p] is None or (p == "HF tokenizers" and r > 0):
                    continue
                run = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", name, p, corpus, warm, tmp,
                                      ref_path if r == 0 else ""], capture_output=True, text=True)
                if run.returncode != 0:
                    # the exception's line (a Rust error's text can run over several lines)
                    lines = [l for l in run.stderr.splitlines() if re.match(r"\w+(Error|Exception): ", l)]
                    err = lines[-1] if lines else "exit %d" % run.returncode
                    print("%s %s: cannot run: %s" % (name, p, err[:160]))
                    info[p] = None
                    continue
                res = json.loads(run.stdout.strip().splitlines()[-1])
                times.setdefault(p, []).append(res["cpu"])
                times.setdefault(p + " repeat", []).append(res["repeat"])
                if r == 0:
                    info[p] = (res["load"], res["same"])
        s = median(times["sluice"])
        table.append((name, "sluice", "", s, median(times["sluice load"]), "(ref)", s, None, None, None))
        for p, ver, _ in peers:
            if info.get(p):
                # the ratio within each round (the peer's run soon after sluice's), then
                # their median: the host's drift between rounds moves it less
                paired = median([t / times["sluice"][r] for r, t in enumerate(times[p])])
                steady = (median([t / times["sluice steady"][r] for r, t in enumerate(times[p])])
                          if times["sluice steady"] else None)
                table.append((name, p, ver, median(times[p]), info[p][0], info[p][1], s, paired,
                              median(times[p + " repeat"]), steady))
        if times["sluice steady"]:
            print("%s: sluice steady (the corpus after %.1f MB of warm-up in the same run, less that run alone): "
                  "%.2f s CPU, rounds %s" % (name, wmb, median(times["sluice steady"]),
                                            " ".join("%.2f" % t for t in times["sluice steady"])))
        print_table(table[-1 - len([p for p, _, _ in peers if info.get(p)]):], mb)
        sys.stdout.flush()
    print("\nall vocabularies:")
    print_table(table, mb)
    print("(sluice: the whole process, start and tokenizer load included; load = the same run on one empty "
          "document. peer: its encode call alone, texts in memory, after a warm-up on other documents; load = "
          "building the tokenizer; repeat = the corpus encoded a second time in the same process (its pieces "
          "all in the peer's memo or cache: not a run anyone makes, shown because earlier rounds reported it). "
          "peer/sluice > 1: sluice is faster per core; peer/sluice is the ratio of the medians, paired the "
          "median of each round's own ratio; steady = the paired ratio against sluice's steady figure: the "
          "corpus encoded after the same warm-up as the peers', in the run that encoded it, less that warm-up's "
          "run alone, so that start, load and cold caches count for neither side)")


def print_table(rows, mb):
    print("%-7s %-14s %-8s %8s %8s %8s %11s %8s %8s %8s  %s" % ("vocab", "tool", "version", "cpu s", "MB/s", "load s",
                                                                  "peer/sluice", "paired", "steady", "repeat s",
                                                                  "ids equal"))
    for name, tool, ver, cpu, load, same, s, paired, repeat, steady in rows:
        ratio = "" if tool == "sluice" else "%.2fx" % (cpu / s)
        pr = "" if paired is None else "%.2fx" % paired
        st = "" if steady is None else "%.2fx" % steady
        rp = "" if repeat is None else "%.2f" % repeat
        print("%-7s %-14s %-8s %8.2f %8.1f %8.2f %11s %8s %8s %8s  %s" % (name, tool, ver, cpu, mb / cpu, load, ratio,
                                                                         pr, st, rp, same))


if __name__ == "__main__":
    main()

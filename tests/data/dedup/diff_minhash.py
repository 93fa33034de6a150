#!/usr/bin/env python3
"""Randomized differential test of `sluice dedup minhash` against datatrove
0.10.1's MinHash deduplication (MinhashDedupSignature, MinhashDedupBuckets,
MinhashDedupCluster, MinhashDedupFilter); a developer tool, not run by
`make test`.

    python3 -m venv /tmp/dt-venv && /tmp/dt-venv/bin/pip install 'datatrove[processing]==0.10.1' spacy 'xxhash<4' tokenizers orjson
    /tmp/dt-venv/bin/python tests/data/dedup/diff_minhash.py --seed 1 --n 50 --sluice build/sluice
    /tmp/dt-venv/bin/python tests/data/dedup/diff_minhash.py --seed 1 --case 17 --keep -v   # one case again
    /tmp/dt-venv/bin/python tests/data/dedup/diff_minhash.py --seed 1 --case 17 --minimize  # shrink it

Each case (seed, number) generates a corpus of a few hundred to a few
thousand documents: English-like prose (contractions, abbreviations, hyphens,
URLs, e-mail addresses, numbers with separators and units, emoticons,
hashtags, quotes and brackets), sentences in German, French, Spanish,
Turkish, Greek, Russian, Chinese, Arabic and Hindi, random code points of
other scripts, combining marks and emoji; then planted near-duplicates: exact
copies, random word substitutions, insertions, deletions and swaps (1 to 50%
of the words), sentences reordered, text cut at either end, boilerplate
added, upper/lower/title case, NFD/NFC, full-width and other scripts'
digits, punctuation and white space replaced, chains (a variant of a
variant) and clusters of 5 to 60 copies; documents with fewer words than
--ngram, empty and white-space-only or punctuation-only documents; now and
then NUL and other control or format characters, astral code points, a
token of thousands of characters, a document of thousands of sentences. The
documents are shuffled and split into 1 to 3 input files (some gzipped, some
with every non-ASCII character as a \\uXXXX escape).

Random options: --ngram 1..8, --buckets 1..40, --rows 1..12, --seed (small
or up to 2^32-1), --hash xxhash64|xxhash32|sha1-64|sha1-32, sometimes
--jaccard 0 (the plain LSH), -@ 1|2 and --mem-budget 1M (spilled runs).

datatrove's four stages run as make_minhash_fixtures.py runs them
(LocalPipelineExecutor; the signature stage as one task over the input
files, one bucket task per band, the cluster stage with save_cluster_id and
save_cluster_size, the filter with an exclusion writer and the cluster
metadata loaded); sluice runs `dedup minhash` on the same files. Compared:
  - every signature: each band's sorted records of sluice's signature file
    (`--step signatures --part 0/1`) against datatrove's .minhash.sig
    (values and document, by id);
  - the removed documents (ids, in input order) and the kept output (ids and
    texts, in input order; empty documents, which datatrove's reader skips,
    must be kept by sluice);
  - the clusters: `--annotate`'s dup_cluster/dup_count against datatrove's
    minhash_cluster_id/minhash_cluster_size partition, and --removed's
    "kept" against the one member of its cluster that datatrove keeps;
  - the summary's counts against datatrove's;
  - with probability 1/2, the --step chain (signatures and filter with
    --part R/N, buckets with --part R/M, N 1..5, M 1..B+3, -@ 1|2): the
    filter parts concatenated byte for byte the one-process output, the
    removed lists too, the cluster step's summary the one-process summary.

Options: --n cases, --seed S, --case K (only that case), --start K,
--sluice PATH (default build/sluice), --work DIR (default a temporary
folder), --keep (keep each failing case's files under --work/case-K),
--minimize (with --case: drop documents while it still fails, then print
the smallest corpus and options), -v (one line per case). Exit status: 0
when every case agrees, 1 otherwise."""
import gzip
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import time
import unicodedata

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
import diffcli  # noqa: E402  (tests/data/diffcli.py: the command line)

# --- text -------------------------------------------------------------------------

EN = ("the of and to in is was for that on with as by at from it he she they we you this be are have has had "
      "not but or an which their one all were there been more when will would who so no if out up about into "
      "time year people way day man thing woman life child world school state family student group country "
      "problem hand part place case week company system program question work government number night point "
      "home water room mother area money story fact month lot right study book eye job word business issue "
      "side kind head house service friend father power hour game line end member law car city community name "
      "president team minute idea kid body information back parent face others level office door health person "
      "art war history party result change morning reason research girl guy moment air teacher force education "
      "river bridge market music table window garden winter summer station village engine letter picture").split()
EN_SPECIAL = ["don't", "can't", "won't", "it's", "I'm", "they're", "we'll", "you've", "shouldn't", "ain't", "y'all",
              "o'clock", "gonna", "Mr.", "Dr.", "e.g.", "i.e.", "U.S.", "etc.", "vs.", "No.", "St.", "a.m.",
              "well-known", "state-of-the-art", "co-operate", "https://example.com/a/b?c=1&d=2", "www.foo.org",
              "http://x.io", "foo@bar.com", "192.168.0.1", "3.14", "1,000", "10km", "$5", "5%", "10:30", "2024-05-01",
              "1/2", ":)", ":-(", "<3", "#tag", "@user", "(see", "above)", "\"quoted\"", "'single'", "[1]", "C++",
              "A&B", "rock'n'roll", "Ph.D.", "U.K.", "10.5.3", "+44", "-5", "3x", "£20", "€30", "20°C", "½",
              "IS_ALPHA", "l'homme", "d'Artagnan", "can't've", "'s", "N.Y.", "...", "--", "—", "a/b", "and/or"]
from make_minhash_fixtures import LEX  # noqa: E402  (the languages' word lists of the committed fixtures)
# code point ranges for random "words" of other scripts
RANGES = [(0x41, 0x7A), (0xC0, 0x24F), (0x370, 0x3FF), (0x400, 0x4FF), (0x530, 0x58F), (0x5D0, 0x5EA),
          (0x600, 0x6FF), (0x900, 0x97F), (0x980, 0x9FF), (0xE00, 0xE7F), (0x10A0, 0x10FF), (0x1E00, 0x1EFF),
          (0x3040, 0x30FF), (0x4E00, 0x4E80), (0xAC00, 0xAC80), (0xFF01, 0xFF5E), (0x1F300, 0x1F64F),
          (0x300, 0x36F), (0x2000, 0x206F), (0x20A0, 0x20CF), (0x2190, 0x21FF), (0x1D400, 0x1D4FF),
          (0x0660, 0x0669), (0x06F0, 0x06F9), (0x09E6, 0x09EF), (0x0E50, 0x0E59), (0xFF10, 0xFF19)]
PUNCT = list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") + ["…", "“", "”", "‘", "’", "«", "»", "¿", "¡", "–", "—", "·",
                                                       "、", "。", "，", "！", "？", "『", "』", "§", "¶", "†", "•"]
CONTROLS = ["\x00", "\x01", "\x07", "\x1b", "\x7f", "\x80", "\x9f", "\u00ad", "\u200d", "\u2060", "\ufeff",
            "\ufffd", "\U000e0001", "\U0010fffd", "\u0301", "\u0345", "\U0001f600", "\u0130", "\u03a3", "\u1e9e"]
SPACES = [" ", "  ", "\t", "\n", "\n\n", "\u00a0", "\u2003", "\u3000", "\r\n", "\u2028", "\x0b", "\x0c", "\x85",
          "\u200b", "\x1f"]
BOILER = ["Subscribe to our newsletter! Cookies help us deliver our services. © 2024 All rights reserved.",
          "Click here to read more.", "Share this: Twitter Facebook", "Posted by admin on March 3, 2021 at 10:15 am",
          "Copyright (c) 2019-2023 Example Inc. | Privacy Policy | Terms of Use",
          "Home > News > World", "Related posts:", "Tags: news, world, politics"]
DIGIT_SETS = [0xFF10, 0x0660, 0x06F0, 0x0966, 0x09E6, 0x0E50, 0x1D7CE]


def rand_word(r):
    lo, hi = r.choice(RANGES)
    return "".join(chr(r.randint(lo, hi)) for _ in range(r.randint(1, 8)))


def en_sentence(r):
    words = []
    for _ in range(r.randint(3, 18)):
        x = r.random()
        words.append(r.choice(EN_SPECIAL) if x < 0.08 else rand_word(r) if x < 0.11 else
                     str(r.randint(0, 10 ** r.randint(1, 7))) if x < 0.15 else r.choice(EN))
    s = " ".join(words)
    s = s[0].upper() + s[1:]
    if r.random() < 0.2:
        i = s.find(" ")
        if i > 0:
            s = s[:i] + r.choice([",", ";", " -", ":"]) + s[i:]
    return s + r.choice([".", ".", ".", "!", "?", "...", ";", "", ".\"", ")."])


def lang_sentence(r, lang):
    w = LEX[lang]
    words = [r.choice(w) for _ in range(r.randint(3, 14))]
    if r.random() < 0.3:
        words.insert(r.randrange(len(words)), str(r.randint(0, 99999)))
    if r.random() < 0.2:
        words.insert(r.randrange(len(words)), f"{r.randint(0, 99)}{r.choice('.,')}{r.randint(0, 99)}")
    sep = "" if lang == "zh" and r.random() < 0.7 else " "
    s = sep.join(words) + ("。" if lang == "zh" else r.choice([".", "!", "?", ";", "،", "।"]))
    return s[0].upper() + s[1:]


def base_doc(r):
    kind = r.random()
    paras = []
    for _ in range(r.choice([1, 1, 1, 2, 3, 5])):
        if kind < 0.55:
            sents = [en_sentence(r) for _ in range(r.randint(1, 6))]
        elif kind < 0.85:
            lang = r.choice(list(LEX))
            sents = [lang_sentence(r, lang) for _ in range(r.randint(1, 5))]
        else:
            sents = [r.choice([en_sentence, lambda r: lang_sentence(r, r.choice(list(LEX))),
                               lambda r: " ".join(rand_word(r) for _ in range(r.randint(2, 10)))])(r)
                     for _ in range(r.randint(1, 5))]
        paras.append(" ".join(sents))
    t = r.choice(["\n\n", "\n", " "]).join(paras)
    if r.random() < 0.1:  # control characters, NUL, format characters, astral code points
        for _ in range(r.randint(1, 5)):
            i = r.randint(0, len(t))
            t = t[:i] + r.choice(CONTROLS) + t[i:]
    if r.random() < 0.01:  # a long token
        i = r.randint(0, len(t))
        t = t[:i] + " " + r.choice(["x", "ab", "é", "-", "0"]) * r.randint(500, 5000) + " " + t[i:]
    if r.random() < 0.005:  # a long document
        t = " ".join(en_sentence(r) for _ in range(r.randint(500, 3000)))
    return t


def edit_words(r, t, frac):
    words = t.split(" ")
    for _ in range(max(1, int(len(words) * frac))):
        i = r.randrange(len(words))
        op = r.random()
        if op < 0.35:
            words[i] = r.choice([r.choice(EN), r.choice(EN_SPECIAL), rand_word(r), str(r.randint(0, 999))])
        elif op < 0.6:
            del words[i]
            if not words:
                words = [r.choice(EN)]
        elif op < 0.85:
            words.insert(i, r.choice(EN + EN_SPECIAL[:20]))
        else:
            j = r.randrange(len(words))
            words[i], words[j] = words[j], words[i]
    return " ".join(words)


def variant(r, t):
    kind = r.choice(["copy", "copy", "edit", "edit", "edit", "edit", "reorder", "cut", "boiler", "case", "nfd",
                     "digits", "punct", "space", "mixed"])
    if kind == "copy":
        return t
    if kind == "edit":
        return edit_words(r, t, r.choice([0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5]))
    if kind == "reorder":
        sep = r.choice(["\n\n", "\n", ". ", " "])
        ps = t.split(sep)
        if len(ps) > 1:
            i, j = r.randrange(len(ps)), r.randrange(len(ps))
            ps[i], ps[j] = ps[j], ps[i]
            if r.random() < 0.5:
                r.shuffle(ps)
        return sep.join(ps)
    if kind == "cut":
        w = t.split(" ")
        k = r.randint(1, max(1, len(w) // 4))
        return " ".join(w[k:] if r.random() < 0.5 else w[:-k] or w)
    if kind == "boiler":
        b = r.choice(BOILER)
        return (b + r.choice(["\n", " ", "\n\n"]) + t) if r.random() < 0.5 else (t + r.choice(["\n", " "]) + b)
    if kind == "case":
        return r.choice([str.upper, str.lower, str.title, str.swapcase, str.casefold])(t)
    if kind == "nfd":
        return unicodedata.normalize(r.choice(["NFD", "NFC", "NFKC", "NFKD"]), t)
    if kind == "digits":
        z = r.choice(DIGIT_SETS)
        return "".join(chr(ord(c) - 0x30 + z) if "0" <= c <= "9" else c for c in t)
    if kind == "punct":
        a, b = r.choice(PUNCT), r.choice(PUNCT + [" ", ""])
        t = t.replace(r.choice([".", ",", " ", "'", "-"]), a)
        return t.replace(r.choice(["!", "?", ";", "the", "e"]), b)
    if kind == "space":
        return t.replace(" ", r.choice(SPACES))
    return variant(r, variant(r, t))


def short_doc(r, n):
    k = r.randint(0, max(0, n - 1))
    return r.choice([
        lambda: "",
        lambda: " ",
        lambda: r.choice(SPACES) * r.randint(1, 3),
        lambda: "".join(r.choice(PUNCT) + r.choice(["", " "]) for _ in range(r.randint(1, 12))),
        lambda: " ".join(r.choice(EN) for _ in range(k)),
        lambda: " ".join(r.choice(EN) for _ in range(k)) + r.choice([".", "!", " :)", " ..."]),
        lambda: " ".join(str(r.randint(0, 99)) for _ in range(r.randint(1, n + 1))),
        lambda: " ".join(r.choice(EN) for _ in range(n)),  # exactly n words (one shingle)
        lambda: r.choice(EN_SPECIAL),
    ])()


def gen_case(seed, case):
    r = random.Random(f"{seed}-{case}")
    opts = {
        "ngram": r.choice([1, 2, 2, 3, 3, 4, 5, 5, 5, 5, 6, 8]),
        "buckets": r.choice([1, 2, 3, 5, 9, 14, 14, 14, 20, 40]),
        "rows": r.choice([1, 2, 3, 4, 5, 8, 8, 8, 12]),
        "seed": r.choice([1, 1, 0, 7, r.randint(0, 1000), r.randint(0, 2 ** 32 - 1)]),
        "hash": r.choice(["xxhash64", "xxhash64", "xxhash32", "sha1-64", "sha1-32"]),
        "jaccard0": r.random() < 0.15,
    }
    nbase = r.randint(100, 900)
    docs = [base_doc(r) for _ in range(nbase)]
    variants = []
    for t in r.sample(docs, min(len(docs), r.randint(nbase // 4, nbase))):
        k = 1 if r.random() < 0.85 else r.randint(5, 60)  # a cluster of many copies
        for _ in range(k):
            v = variant(r, t)
            variants.append(v)
            if r.random() < 0.2:  # a chain
                variants.append(variant(r, v))
    docs += variants
    docs += [short_doc(r, opts["ngram"]) for _ in range(r.randint(0, 60))]
    r.shuffle(docs)
    nfiles = r.choice([1, 1, 1, 2, 3])
    cuts = sorted(r.sample(range(1, len(docs)), nfiles - 1)) if nfiles > 1 else []
    bounds = [0] + cuts + [len(docs)]
    files = [(f"part-{i}" + (".ascii" if r.random() < 0.3 else "") + ".jsonl" + (".gz" if r.random() < 0.25 else ""),
              bounds[i], bounds[i + 1]) for i in range(nfiles)]
    run = {
        "threads": r.choice([1, 2]),
        "mem1m": r.random() < 0.25,
        "steps": r.random() < 0.5,
        "N": r.randint(1, 5),
        "M": r.randint(1, opts["buckets"] + 3),
        "step_threads": r.choice([1, 2]),
    }
    ids = [f"c{case}-{i}" for i in range(len(docs))]
    return opts, [{"id": i, "text": t} for i, t in zip(ids, docs)], files, run


# --- running -----------------------------------------------------------------------

def write_corpus(cdir, docs, files):
    os.makedirs(cdir, exist_ok=True)
    paths = []
    for name, a, b in files:
        p = os.path.join(cdir, name)
        asc = ".ascii." in name  # \uXXXX escapes, surrogate pairs for the astral ones
        data = "".join(json.dumps(d, ensure_ascii=asc) + "\n" for d in docs[a:b]).encode()
        if name.endswith(".gz"):
            with gzip.open(p, "wb") as f:
                f.write(data)
        else:
            with open(p, "wb") as f:
                f.write(data)
        paths.append(p)
    return sorted(paths)


class Quiet:
    """fd 2 (loguru, tqdm) to a file while datatrove runs."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        sys.stderr.flush()
        self.saved = os.dup(2)
        self.f = open(self.path, "ab")
        os.dup2(self.f.fileno(), 2)

    def __exit__(self, *a):
        sys.stderr.flush()
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.f.close()


def run_datatrove(cdir, work, opts):
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup.minhash import (MinhashConfig, MinhashDedupBuckets, MinhashDedupCluster,
                                                  MinhashDedupFilter, MinhashDedupSignature)
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter
    from datatrove.utils.hashing import HashConfig

    fc, bits = opts["hash"].split("-") if opts["hash"].startswith("sha1") else ("xxhash", opts["hash"][6:])
    cfg = MinhashConfig(n_grams=opts["ngram"], num_buckets=opts["buckets"], hashes_per_bucket=opts["rows"],
                        seed=opts["seed"], hash_config=HashConfig(precision=int(bits), hash_fc=fc))
    sig, bk, cl, out, rem = (os.path.join(work, x) for x in ["sig", "buckets", "clusters", "out", "removed"])
    with Quiet(os.path.join(work, "datatrove.log")):
        LocalPipelineExecutor(pipeline=[JsonlReader(cdir), MinhashDedupSignature(sig, config=cfg)], tasks=1,
                              workers=1, logging_dir=os.path.join(work, "l1")).run()
        LocalPipelineExecutor(pipeline=[MinhashDedupBuckets(sig, bk, config=cfg)], tasks=cfg.num_buckets,
                              workers=1, logging_dir=os.path.join(work, "l2")).run()
        LocalPipelineExecutor(pipeline=[MinhashDedupCluster(bk, cl, config=cfg, save_cluster_id=True,
                                                            save_cluster_size=True)],
                              tasks=1, workers=1, logging_dir=os.path.join(work, "l3")).run()
        LocalPipelineExecutor(pipeline=[JsonlReader(cdir),
                                        MinhashDedupFilter(cl, exclusion_writer=JsonlWriter(rem),
                                                           load_cluster_ids=True, load_cluster_sizes=True),
                                        JsonlWriter(out)], tasks=1, workers=1,
                              logging_dir=os.path.join(work, "l4")).run()
    fmt = "Q" if cfg.hash_config.precision == 64 else "I"
    R = cfg.hashes_per_bucket
    size = struct.calcsize(f"<{R}{fmt}I")
    bands = []
    for b in range(cfg.num_buckets):
        p = os.path.join(sig, f"bucket_{b:03d}", "00000.minhash.sig")
        data = open(p, "rb").read() if os.path.exists(p) else b""
        bands.append([struct.unpack(f"<{R}{fmt}I", data[o:o + size]) for o in range(0, len(data), size)])

    def read_jsonl(d):
        rows = []
        for p in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            op = gzip.open if p.endswith(".gz") else open
            with op(os.path.join(d, p), "rt", encoding="utf-8") as f:
                rows += [json.loads(line) for line in f]
        return rows

    return bands, read_jsonl(out), read_jsonl(rem)


def sluice_opts(opts):
    a = ["--ngram", str(opts["ngram"]), "--buckets", str(opts["buckets"]), "--rows", str(opts["rows"]),
         "--seed", str(opts["seed"]), "--hash", opts["hash"]]
    if opts["jaccard0"]:
        a += ["--jaccard", "0"]
    return a


def sh(cmd, log):
    p = subprocess.run(cmd, capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.decode(errors='replace')[-2000:]}")
    log.append(" ".join(cmd))
    return p


def read_mhsig(path, R):
    b = open(path, "rb").read()
    t = struct.unpack("<15Q", b[-128:-8])
    nsig, off = t[2], t[7]
    rec = (R + 1) * 8
    nb = (len(b) - 128 - off) // rec // max(nsig, 1) if nsig else 0
    bands = []
    for band in range(nb):
        o = off + band * nsig * rec
        bands.append([struct.unpack(f"<{R + 1}Q", b[o + i * rec:o + (i + 1) * rec]) for i in range(nsig)])
    return t, bands


def check_case(seed, case, sluice, work, docs=None, opts=None, files=None, run=None, verbose=False):
    """Returns (problems, info): problems a list of strings (empty when all agree)."""
    g_opts, g_docs, g_files, g_run = gen_case(seed, case)
    opts = opts or g_opts
    docs = g_docs if docs is None else docs
    files = files or g_files
    run = run or g_run
    if os.path.exists(work):
        shutil.rmtree(work)
    os.makedirs(work)
    cdir = os.path.join(work, "corpus")
    paths = write_corpus(cdir, docs, files)
    # document order as both read it: the files in sorted order
    order = []
    for p in paths:
        name = os.path.basename(p)
        a, b = next((a, b) for n, a, b in files if n == name)
        order += docs[a:b]
    nonempty = [d for d in order if d["text"]]
    t0 = time.time()
    dt_bands, dt_out, dt_rem = run_datatrove(cdir, work, opts)
    t_dt = time.time() - t0
    problems = []
    log = []
    so = sluice_opts(opts)
    R, B = opts["rows"], opts["buckets"]
    pos = {d["id"]: i for i, d in enumerate(order)}

    # --- one process
    one = [sluice, "dedup", "minhash", "-q", "-@", str(run["threads"])] + so
    if run["mem1m"]:
        one += ["--mem-budget", "1M"]
    sh(one + paths + ["-o", f"{work}/kept.jsonl", "--removed", f"{work}/removed.jsonl", "--summary",
                      f"{work}/summary.json"], log)
    sh(one + ["--annotate"] + paths + ["-o", f"{work}/annot.jsonl"], log)
    kept = [json.loads(line) for line in open(f"{work}/kept.jsonl", encoding="utf-8")]
    removed = [json.loads(line) for line in open(f"{work}/removed.jsonl", encoding="utf-8")]
    annot = [json.loads(line) for line in open(f"{work}/annot.jsonl", encoding="utf-8")]
    summary = json.load(open(f"{work}/summary.json"))

    # removed ids, input order
    want_rm = sorted((d["id"] for d in dt_rem), key=pos.get)
    got_rm = [x["id"] for x in removed]
    if got_rm != want_rm:
        extra = [i for i in got_rm if i not in set(want_rm)]
        missing = [i for i in want_rm if i not in set(got_rm)]
        problems.append(f"removed differ: sluice {len(got_rm)}, datatrove {len(want_rm)}; only sluice "
                        f"{extra[:5]}, only datatrove {missing[:5]}" + ("" if extra or missing else " (order)"))
    # kept: datatrove's output = sluice's kept without the empty ones
    want_kept = [(d["id"], d["text"]) for d in dt_out]
    got_kept = [(d["id"], d["text"]) for d in kept if d["text"]]
    if got_kept != want_kept:
        problems.append(f"kept differ: sluice {len(got_kept)} non-empty, datatrove {len(want_kept)}")
    empties = [d["id"] for d in order if not d["text"]]
    if [d["id"] for d in kept if not d["text"]] != empties:
        problems.append("sluice does not keep every empty document")
    if [(d["id"], d["text"]) for d in annot] != [(d["id"], d["text"]) for d in order]:
        problems.append("--annotate does not write every document as it is")

    # clusters: datatrove's partition (metadata on every non-empty document)
    dt_cl, dt_size = {}, {}
    for d in dt_out + dt_rem:
        m = d.get("metadata", {})
        dt_cl[d["id"]], dt_size[d["id"]] = m.get("minhash_cluster_id", -1), m.get("minhash_cluster_size", 1)
    dt_groups = {}
    for i, c in dt_cl.items():
        if c != -1:
            dt_groups.setdefault(c, set()).add(i)
    sl_groups, first = {}, []
    for i, d in enumerate(annot):
        if d["dup_count"] > 1:
            sl_groups.setdefault(d["dup_cluster"], set()).add(d["id"])
        if d["text"] and d["dup_count"] != dt_size.get(d["id"]):
            first.append(f"cluster size of {d['id']}: sluice {d['dup_count']}, datatrove {dt_size.get(d['id'])}")
        if d["dup_count"] > 1 and order[d["dup_cluster"]]["id"] in set(want_rm):
            first.append(f"--annotate: {d['id']}'s cluster is numbered by a removed document")
    problems += first[:1]
    if sorted(map(sorted, dt_groups.values())) != sorted(map(sorted, sl_groups.values())):
        problems.append(f"clusters differ: sluice {len(sl_groups)}, datatrove {len(dt_groups)}")
    rmset = set(want_rm)
    for x in removed:
        c = dt_cl.get(x["id"])
        keeper = [i for i in dt_groups.get(c, ()) if i not in rmset]
        if keeper != [x["kept"]] or order[x["cluster"]]["id"] != x["kept"]:
            problems.append(f"--removed {x}: datatrove keeps {keeper}")
            break
    hist = {}
    for grp in dt_groups.values():
        k = str(len(grp)) if len(grp) < 64 else ">=64"  # sluice's summary: sizes 2 to 63, and 64 or more
        hist[k] = hist.get(k, 0) + 1
    want_sum = {"docs": len(order), "empty": len(order) - len(nonempty), "kept": len(order) - len(want_rm),
                "removed": len(want_rm), "clusters": len(dt_groups),
                "no_signature": len(order) - (len(dt_bands[0]) if dt_bands else 0), "cluster_sizes": hist}
    for k, v in want_sum.items():
        if summary.get(k) != v:
            problems.append(f"summary {k}: sluice {summary.get(k)}, datatrove {v}")

    # signatures
    sdir = f"{work}/sig1"
    sh([sluice, "dedup", "minhash", "-q", "--step", "signatures", "--part", "0/1", "--signatures", sdir] + so + paths,
       log)
    t, sl_bands = read_mhsig(f"{sdir}/sigs/sig-00000-of-00001.mhsig", R)
    if t[2] != (len(dt_bands[0]) if dt_bands else 0):
        problems.append(f"signatures: sluice {t[2]} documents, datatrove {len(dt_bands[0])}")
    else:
        for b in range(B):
            want = [(tuple(x[:-1]), nonempty[x[-1]]["id"]) for x in dt_bands[b]]
            got = [(tuple(x[:-1]), order[x[-1]]["id"]) for x in (sl_bands[b] if b < len(sl_bands) else [])]
            if got != want:
                bad = next((w, g) for w, g in zip(want + [None] * len(got), got + [None] * len(want)) if w != g)
                problems.append(f"signatures: band {b} differs, first datatrove {bad[0]} sluice {bad[1]}")
                break

    # the step chain
    if run["steps"]:
        N, M, th = run["N"], run["M"], ["-@", str(run["step_threads"])]
        wdir = f"{work}/steps"
        mem = ["--mem-budget", "1M"] if run["mem1m"] else []
        base = [sluice, "dedup", "minhash", "-q"] + th + mem + so + ["--signatures", wdir]
        for r_ in range(N):
            sh(base + ["--step", "signatures", "--part", f"{r_}/{N}"] + paths, log)
        for r_ in range(M):
            sh(base + ["--step", "buckets", "--part", f"{r_}/{M}"], log)
        sh(base + ["--step", "cluster", "--summary", f"{wdir}/summary.json"], log)
        kept_b, rm_b = b"", b""
        for r_ in range(N):
            sh(base + ["--step", "filter", "--part", f"{r_}/{N}"] + paths +
               ["-o", f"{wdir}/kept-{r_}.jsonl", "--removed", f"{wdir}/removed-{r_}.jsonl"], log)
            kept_b += open(f"{wdir}/kept-{r_}.jsonl", "rb").read()
            rm_b += open(f"{wdir}/removed-{r_}.jsonl", "rb").read()
        if kept_b != open(f"{work}/kept.jsonl", "rb").read():
            problems.append(f"steps N={N} M={M}: kept output differs from the one-process run")
        if rm_b != open(f"{work}/removed.jsonl", "rb").read():
            problems.append(f"steps N={N} M={M}: removed list differs from the one-process run")
        if open(f"{wdir}/summary.json", "rb").read() != open(f"{work}/summary.json", "rb").read():
            problems.append(f"steps N={N} M={M}: summary differs from the one-process run")
    with open(f"{work}/commands.txt", "w") as f:
        f.write("\n".join(log) + "\n")
    info = dict(docs=len(order), bytes=sum(len(d["text"].encode()) for d in order), removed=len(want_rm),
                t_dt=t_dt, opts=opts, run=run)
    return problems, info


def minimize(seed, case, sluice, work, verbose):
    opts, docs, files, run = gen_case(seed, case)
    run = dict(run, steps=False)

    def fails(ds):
        try:
            p, _ = check_case(seed, case, sluice, work, docs=ds, opts=opts, files=[("part-0.jsonl", 0, len(ds))],
                              run=run)
        except Exception as e:  # noqa: BLE001
            p = [f"error: {e}"]
        return bool(p), p

    f, p = fails(docs)
    if not f:
        print("minimize: the case passes with its documents in one file and no steps", flush=True)
        return None
    n = 2
    while len(docs) >= 2:
        chunk = max(1, len(docs) // n)
        progress = False
        for i in range(0, len(docs), chunk):
            trial = docs[:i] + docs[i + chunk:]
            if not trial:
                continue
            f, p2 = fails(trial)
            if f:
                docs, p, progress = trial, p2, True
                if verbose:
                    print(f"  {len(docs)} documents: {p2[0]}", flush=True)
                break
        if progress:
            n = max(2, n - 1)
        elif chunk == 1:
            break
        else:
            n = min(len(docs), n * 2)
    print(f"minimized to {len(docs)} documents, options {opts}: {p}")
    for d in docs:
        print(json.dumps(d, ensure_ascii=False))
    return docs


def main():
    a, _, sluice, work, cases = diffcli.case_args(__doc__, "diff_minhash.", n=20)
    failed, ndocs, nbytes = 0, 0, 0
    t0 = time.time()
    for c in cases:
        cw = os.path.join(work, f"case-{c}")
        try:
            problems, info = check_case(a.seed, c, sluice, cw)
        except Exception as e:  # noqa: BLE001
            problems, info = [f"error: {e}"], {}
        ndocs += info.get("docs", 0)
        nbytes += info.get("bytes", 0)
        if a.verbose or problems:
            print(f"case {c}: {'FAIL' if problems else 'ok'} {info.get('docs')} docs {info.get('bytes')} bytes "
                  f"{info.get('removed')} removed, datatrove {info.get('t_dt', 0):.1f}s, {info.get('opts')} "
                  f"{info.get('run')}", flush=True)
        for p in problems:
            print("    " + p, flush=True)
        if problems:
            failed += 1
            if a.minimize:
                minimize(a.seed, c, sluice, cw + "-min", a.verbose)
        if not problems or not a.keep:
            shutil.rmtree(cw, ignore_errors=True)
    print(f"{len(cases) - failed}/{len(cases)} cases agree ({ndocs} documents, {nbytes} bytes, "
          f"{time.time() - t0:.0f}s)", flush=True)
    if not a.work and not (a.keep and failed):
        shutil.rmtree(work, ignore_errors=True)
    elif failed:
        print(f"files under {work}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

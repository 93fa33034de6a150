#!/usr/bin/env python3
"""Randomized differential test of `sluice tokenize dna` against pysam,
Biopython and pyfaidx (a developer tool; not run by `make test`).

    python3 -m venv /tmp/dna-venv && /tmp/dna-venv/bin/pip install pysam pyfaidx biopython numpy zstandard
    /tmp/dna-venv/bin/python tests/data/dna/diff_random.py --seed 1 --n 300 --sluice build/sluice
    /tmp/dna-venv/bin/python tests/data/dna/diff_random.py --seed 1 --case 17 --keep -v   # one case again

Each case (seed, number) writes a random genome or reads file and runs
`sluice tokenize dna` on it with a random option set from docs/dna.md, then
decodes the output (`sluice cat`) and compares every document (id, ids,
metadata `desc`, `softmask`, BED `chrom`/`start`/`end`/`strand`) with the
expected one.

Inputs: FASTA with 0 to 8 records, names with odd ASCII and UTF-8 bytes,
descriptions, blanks before the name, empty names; sequences of 0 to ~1 Mbp
(mostly short) with soft-masked runs, N/n runs, IUPAC codes, '.' and '-';
fixed line widths per record or ragged lines, CRLF, blank lines, spaces and
tabs inside sequence lines, a missing final newline. FASTQ with multi-line
sequences and qualities whose lines start with '@', '+' or '>'. UCSC .2bit
(written by fa2twobit.py). Compression: none, gzip, multi-member gzip, BGZF
(pysam.tabix_compress, with `.gzi`/`.fai` from pysam.faidx), zstd, xz,
bzip2, and standard input. BED files (tabs or blanks, comments, track and
browser lines, 3 to 6 columns, both strands, zero-length and edge
intervals, with and without --window, with and without a `.fai`).

Options: --case upper|keep|mask-as-unk, --n token|pad|drop, --add-eos,
--max-length with either padding side, --window/--stride/--drop-last,
--kmer/--kmer-stride, --revcomp, -@ 1|2, a small --in-memory (long records
take the temporary-file path).

Expected values: sequences and names come from the reference readers
(Bio.SeqIO for FASTA, pysam.FastxFile and Bio.SeqIO for FASTQ,
pysam.FastaFile.fetch and pyfaidx.Fasta for BED intervals on files with a
regular line layout); where docs/dna.md extends what they accept (spaces or
tabs in sequence lines, ragged lines, names after blanks) the script's own
reading of the documented rule is used and the reference tools are checked
on what they agree on. Tokens follow the documented vocabulary (HyenaDNA's
CharacterTokenizer, DNABERT k-mers) and Hugging Face truncation/padding;
reverse complement as Biopython's reverse_complement on ACGT/acgt, other
characters unchanged (docs). A .2bit gives N/n for every non-ACGT base,
per base (the docs' rule).

Error cases (one in eight): a FASTA without header, a control or high byte
in a sequence, a truncated FASTQ, a quality string of the wrong length, a
truncated gzip, BED start > end, past the chromosome end, unknown
chromosome, a stale .fai. sluice must exit 1 with one stderr line naming the
file and a line or offset, and leave no output file.

Exit status: 0 when every case agrees, 1 otherwise.
"""
import bz2
import gzip
import io
import json
import lzma
import os
import random
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import diffcli  # noqa: E402  (tests/data/diffcli.py: the command line)

import pysam  # noqa: E402
import pyfaidx  # noqa: E402
from Bio import SeqIO  # noqa: E402
from Bio.Seq import reverse_complement as bio_rc  # noqa: E402

try:
    import zstandard
except ImportError:  # zstd through the command-line tool then
    zstandard = None

IUPAC = "RYKMSWBDHV"
CHAR_IDS = {"A": 7, "C": 8, "G": 9, "T": 10, "N": 11}
CLS, SEP, PAD, UNK = 0, 1, 4, 6
KM_PAD, KM_UNK, KM_SEP = 0, 1, 3
DNABERT = "ATCG"


# ---- random inputs -----------------------------------------------------------------

def rand_len(rng):
    r = rng.random()
    if r < 0.08:
        return 0
    if r < 0.6:
        return rng.randint(1, 120)
    if r < 0.9:
        return rng.randint(100, 5000)
    if r < 0.98:
        return rng.randint(5000, 70000)
    return rng.randint(200000, 1000000)


def rand_seq(rng, n, twobit=False):
    out = []
    while sum(map(len, out)) < n:
        r = rng.random()
        run = rng.randint(1, 60) if rng.random() < 0.8 else rng.randint(60, 3000)
        if r < 0.65:
            s = "".join(rng.choices("ACGT", k=run))
        elif r < 0.8:
            s = "N" * run
        elif r < 0.88:
            s = "".join(rng.choices(IUPAC + ("" if twobit else ".-"), k=rng.randint(1, 4)))
        else:
            s = "".join(rng.choices("ACGTN", weights=[5, 5, 5, 5, 1], k=run))
        if rng.random() < 0.3:
            s = s.lower()
        out.append(s)
    return "".join(out)[:n]


NAME_CHARS = ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
              "_.:|-=/\\!\"#$%&'()*+,;<>?@[]^`{}~") + "éλ染"


def rand_name(rng, used, simple=False):
    for _ in range(100):
        if simple:
            n = "chr" + "".join(rng.choices("0123456789abcXYZ_", k=rng.randint(1, 6)))
        elif rng.random() < 0.05:
            n = ""
        else:
            n = "".join(rng.choices(NAME_CHARS, k=rng.randint(1, 20)))
            if n[0] in ">@":
                n = "x" + n
        if n not in used:
            used.add(n)
            return n
    raise RuntimeError("names")


def rand_desc(rng):
    if rng.random() < 0.5:
        return ""
    words = ["".join(rng.choices(NAME_CHARS + " ", k=rng.randint(1, 12))) for _ in range(rng.randint(1, 4))]
    d = " ".join(words).strip(" ")
    return d


def split_lines(rng, s, layout):
    """sequence -> list of lines under a layout: ('fixed', W) or ('ragged',)."""
    if not s:
        return []
    if layout[0] == "fixed":
        w = layout[1]
        return [s[i:i + w] for i in range(0, len(s), w)]
    lines, i = [], 0
    while i < len(s):
        w = rng.randint(1, 100)
        lines.append(s[i:i + w])
        i += w
    return lines


def write_fasta(rng, recs, clean):
    """recs: [(name, desc, seq)] -> bytes. clean: regular layout (faidx-able)."""
    eol = "\r\n" if (not clean and rng.random() < 0.2) else "\n"
    width = rng.choice([1, 3, 10, 60, 61, 70, 80, 100, 1000, 70000])
    parts = []
    for name, desc, seq in recs:
        lead = "" if clean or rng.random() < 0.8 else rng.choice([" ", "\t", "  "])
        sep = rng.choice([" ", "\t", " \t "]) if not clean else " "
        hdr = ">" + lead + name + ((sep + desc) if desc else "")
        parts.append(hdr + eol)
        if clean:
            layout = ("fixed", width)
        else:
            layout = ("fixed", rng.choice([1, 7, 60, 80, 1000])) if rng.random() < 0.6 else ("ragged",)
        for ln in split_lines(rng, seq, layout):
            if not clean and rng.random() < 0.02:
                k = rng.randint(0, len(ln))
                ln = ln[:k] + rng.choice([" ", "\t", "  \t"]) + ln[k:]
            parts.append(ln + eol)
            if not clean and rng.random() < 0.01:
                parts.append(eol)
        if not clean and rng.random() < 0.1:
            parts.append(eol)
    text = "".join(parts)
    if not clean and text and rng.random() < 0.2:
        text = text[:-len(eol)]
    return text.encode("utf-8")


def write_fastq(rng, recs):
    eol = "\r\n" if rng.random() < 0.1 else "\n"
    parts = []
    for name, desc, seq in recs:
        parts.append("@" + name + ((" " + desc) if desc else "") + eol)
        w = rng.choice([len(seq) or 1, len(seq) or 1, 5, 60, 17])
        for ln in split_lines(rng, seq, ("fixed", w)):
            parts.append(ln + eol)
        title = name + ((" " + desc) if desc else "")
        parts.append("+" + (title if rng.random() < 0.3 else "") + eol)
        qual = "".join(rng.choices([chr(c) for c in range(33, 127)], k=len(seq)))
        # lines that start with '@', '+' or '>' (docs: accepted)
        qual = "".join(rng.choice("@+>") if (i % w == 0 and rng.random() < 0.3) else c for i, c in enumerate(qual))
        for ln in split_lines(rng, qual, ("fixed", w)):
            parts.append(ln + eol)
    return "".join(parts).encode("utf-8")


def compress(rng, data, kind, path):
    if kind == "none":
        open(path, "wb").write(data)
    elif kind == "gzip":
        open(path, "wb").write(gzip.compress(data, compresslevel=rng.choice([1, 6, 9])))
    elif kind == "mgzip":
        cut = sorted(rng.randint(0, len(data)) for _ in range(rng.randint(1, 3)))
        pieces, last = [], 0
        for c in cut + [len(data)]:
            pieces.append(gzip.compress(data[last:c]))
            last = c
        open(path, "wb").write(b"".join(pieces))
    elif kind == "bgzf":
        raw = path + ".raw"
        open(raw, "wb").write(data)
        pysam.tabix_compress(raw, path, force=True)
        os.unlink(raw)
    elif kind == "zstd":
        if zstandard is not None:
            open(path, "wb").write(zstandard.ZstdCompressor(level=rng.choice([1, 3, 19])).compress(data))
        else:
            open(path + ".raw", "wb").write(data)
            subprocess.run(["zstd", "-q", "-f", path + ".raw", "-o", path], check=True)
            os.unlink(path + ".raw")
    elif kind == "xz":
        open(path, "wb").write(lzma.compress(data))
    elif kind == "bz2":
        open(path, "wb").write(bz2.compress(data))
    else:
        raise ValueError(kind)


# ---- the documented model ----------------------------------------------------------

def split_header(h):
    """samtools rule (docs): blanks, name = first word, desc = the rest after blanks."""
    h = h.lstrip(" \t")
    i = 0
    while i < len(h) and h[i] not in " \t":
        i += 1
    return h[:i], h[i:].lstrip(" \t")


def parse_fasta_doc(text):
    """docs/dna.md's FASTA rule: [(name, desc, seq)]."""
    recs = []
    cur = None
    for line in text.split("\n"):
        if line.endswith("\r"):
            line = line[:-1]
        if line.startswith(">"):
            cur = list(split_header(line[1:])) + [[]]
            recs.append(cur)
        elif cur is not None:
            cur[2].append(line.replace(" ", "").replace("\t", ""))
    return [(n, d, "".join(s)) for n, d, s in recs]


def revcomp(s):
    return s.translate(str.maketrans("ACGTacgt", "TGCAtgca"))[::-1]


def char_tokens(seq, o):
    ids, mask = [], []
    for c in seq:
        low = c.islower()
        if o["case"] == "mask-as-unk" and low:
            t = UNK
        else:
            t = CHAR_IDS.get(c.upper(), UNK)
        if t == 11 and o["n"] == "pad":
            t = PAD
        if t == 11 and o["n"] == "drop":
            continue
        ids.append(t)
        mask.append(low)
    return ids, mask


def kmer_tokens(seq, o):
    k, st = o["kmer"], o["kstride"]
    ids, mask = [], []
    for p in range(0, len(seq) - k + 1, st):
        w = seq[p:p + k]
        low = any(c.islower() for c in w)
        ww = w if o["case"] == "mask-as-unk" else w.upper()
        if all(c in DNABERT for c in ww):
            v = 0
            for c in ww:
                v = v * 4 + DNABERT.index(c)
            t = 5 + v
        else:
            if o["n"] == "drop":
                continue
            t = KM_PAD if o["n"] == "pad" else KM_UNK
        ids.append(t)
        mask.append(low)
    return ids, mask


def finish(ids, mask, o):
    eos = KM_SEP if o["kmer"] else SEP
    pad = KM_PAD if o["kmer"] else PAD
    L = o["max_length"]
    if not L:
        if o["eos"]:
            return ids + [eos], mask + [False]
        return ids, mask
    if not ids and not o["eos"]:
        return ids, mask  # Hugging Face quirk (docs)
    if o["eos"]:
        ids, mask = ids[:L - 1] + [eos], mask[:L - 1] + [False]
    else:
        ids, mask = ids[:L], mask[:L]
    npad = L - len(ids)
    if o["side"] == "left":
        return [pad] * npad + ids, [False] * npad + mask
    return ids + [pad] * npad, mask + [False] * npad


def runs(mask):
    out, i = [], 0
    while i < len(mask):
        if mask[i]:
            j = i
            while j < len(mask) and mask[j]:
                j += 1
            out.append([i, j])
            i = j
        else:
            i += 1
    return out


def make_doc(docid, seq, o, meta):
    ids, mask = (kmer_tokens if o["kmer"] else char_tokens)(seq, o)
    ids, mask = finish(ids, mask, o)
    d = {"id": docid, "ids": ids}
    d.update(meta)
    if o["case"] == "keep":
        d["softmask"] = runs(mask)
    return d


def windows(n, L, S, drop_last):
    out, i = [], 0
    while i * S + L <= n:
        out.append((i * S, i * S + L))
        i += 1
    covered = out[-1][1] if out else 0
    if not drop_last and covered < n and i * S < n:
        out.append((i * S, n))
    return out


def expected_docs(recs, o):
    docs = []
    for name, desc, seq in recs:
        pieces = []
        if o["window"]:
            for s, e in windows(len(seq), o["window"], o["wstride"], o["drop_last"]):
                pieces.append(("%s:%d-%d" % (name, s, e), seq[s:e], {"chrom": name, "start": s, "end": e}))
        else:
            pieces.append((name, seq, {"desc": desc} if desc else {}))
        for did, s, meta in pieces:
            docs.append(make_doc(did, s, o, meta))
            if o["revcomp"]:
                docs.append(make_doc(did + "/rc", revcomp(s), o, meta))
    return docs


# ---- reference readers -------------------------------------------------------------

def bio_fasta(text):
    return [(r.id, str(r.seq)) for r in SeqIO.parse(io.StringIO(text), "fasta")]


def bio_fastq(text):
    return [(r.id, str(r.seq)) for r in SeqIO.parse(io.StringIO(text), "fastq")]


def pysam_fastx(path):
    with pysam.FastxFile(path) as f:
        return [(r.name, r.sequence or "") for r in f]


# ---- a case --------------------------------------------------------------------

class Case:
    def __init__(self, seed, num, work, sluice, verbose):
        self.rng = random.Random("%s:%d" % (seed, num))
        self.num, self.sluice, self.verbose = num, sluice, verbose
        self.dir = os.path.join(work, "case%d" % num)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.desc = []
        self.problems = []

    def note(self, s):
        self.desc.append(s)

    def bad(self, s):
        self.problems.append(s)

    def run_sluice(self, args, stdin_path=None):
        out = os.path.join(self.dir, "out.tok")
        if os.path.exists(out):
            os.unlink(out)
        cmd = [self.sluice, "tokenize", "dna", "-q", "-o", out] + args
        self.note("cmd: " + " ".join(cmd) + (" < " + stdin_path if stdin_path else ""))
        env = dict(os.environ, TMPDIR=self.dir)
        with open(stdin_path, "rb") if stdin_path else open(os.devnull, "rb") as fin:
            p = subprocess.run(cmd, stdin=fin, capture_output=True, env=env, timeout=300)
        return p, out

    def decode(self, out):
        p = subprocess.run([self.sluice, "cat", out], capture_output=True, timeout=300)
        if p.returncode:
            self.bad("sluice cat failed: " + p.stderr.decode(errors="replace").strip())
            return None
        docs = []
        for line in p.stdout.decode("utf-8").splitlines():
            d = json.loads(line)
            d.pop("src_bytes", None)
            docs.append(d)
        return docs

    def compare(self, exp, got):
        if got is None:
            return
        if len(exp) != len(got):
            self.bad("document count: expected %d, sluice %d (ids %s vs %s)" % (
                len(exp), len(got), [d["id"] for d in exp][:8], [d["id"] for d in got][:8]))
        for i, (e, g) in enumerate(zip(exp, got)):
            for k, v in e.items():
                gv = g.get(k)
                if gv != v:
                    if k == "ids":
                        j = next((j for j, (a, b) in enumerate(zip(v, gv or [])) if a != b), min(len(v), len(gv or [])))
                        self.bad("doc %d (%r): ids differ at %d (len %d vs %d): expected %s, sluice %s" % (
                            i, e["id"], j, len(v), len(gv or []), v[j:j + 12], (gv or [])[j:j + 12]))
                    else:
                        self.bad("doc %d (%r): %s: expected %r, sluice %r" % (i, e["id"], k, str(v)[:200], str(gv)[:200]))
                    break
            if "desc" not in e and "desc" in g:
                self.bad("doc %d (%r): unexpected desc %r" % (i, e["id"], g["desc"]))
            if len(self.problems) > 5:
                return

    def options(self, allow_window=True, allow_kmer=True):
        r = self.rng
        o = {"case": r.choice(["upper", "keep", "mask-as-unk"]), "n": r.choice(["token", "pad", "drop"]),
             "eos": r.random() < 0.3, "max_length": 0, "side": "left", "window": 0, "wstride": 0,
             "drop_last": False, "kmer": 0, "kstride": 1, "revcomp": r.random() < 0.2,
             "threads": r.choice([1, 2]), "in_memory": 0}
        if r.random() < 0.25:
            # --max-length 1 --add-eos is a usage error (room for no base)
            o["max_length"] = r.choice([2, 5, 64, 300] + ([] if o["eos"] else [1]))
            o["side"] = r.choice(["left", "right"])
        if allow_kmer and r.random() < 0.15:
            o["kmer"] = r.randint(1, 7)
            o["kstride"] = r.choice([1, 1, 2, o["kmer"]])
            if o["case"] == "keep" and r.random() < 0.5:
                o["case"] = "upper"
        if allow_window and r.random() < 0.25:
            o["window"] = r.choice([1, 7, 100, 1000, 65536])
            o["wstride"] = r.choice([o["window"], max(1, o["window"] // 2), o["window"] * 2])
            o["drop_last"] = r.random() < 0.3
        elif r.random() < 0.3:
            o["in_memory"] = r.choice([1, 100, 4000, 100000])
        return o

    def opt_args(self, o):
        a = ["--case", o["case"], "--n", o["n"], "-@", str(o["threads"])]
        if o["eos"]:
            a.append("--add-eos")
        if o["max_length"]:
            a += ["--max-length", str(o["max_length"]), "--padding-side", o["side"]]
        if o["kmer"]:
            a += ["--kmer", str(o["kmer"]), "--kmer-stride", str(o["kstride"])]
        if o["window"]:
            a += ["--window", str(o["window"]), "--stride", str(o["wstride"])]
            if o["drop_last"]:
                a.append("--drop-last")
        if o["in_memory"]:
            a += ["--in-memory", str(o["in_memory"])]
        if o["revcomp"]:
            a.append("--revcomp")
        return a

    # -- sequential reading --
    def seq_case(self):
        r = self.rng
        kind = r.choices(["fasta", "fastq", "2bit"], weights=[6, 2, 1])[0]
        nrec = r.choice([0, 1, 1, 2, 3, 5, 8])
        used = set()
        recs = []
        for _ in range(nrec):
            name = rand_name(r, used, simple=(kind == "2bit"))
            desc = "" if kind == "2bit" else rand_desc(r)
            n = rand_len(r)
            if kind == "fastq":
                n = min(n, 20000)
            recs.append((name, desc, rand_seq(r, n, twobit=(kind == "2bit"))))
        o = self.options()
        comp = r.choice(["none", "none", "gzip", "mgzip", "bgzf", "zstd", "xz", "bz2"])
        if kind == "fasta":
            data = write_fasta(r, recs, clean=r.random() < 0.3)
            text = data.decode("utf-8")
            exp_recs = parse_fasta_doc(text)
            # reference readers on what they agree on
            ref = bio_fasta(text)
            mine = [(n, s) for n, _, s in exp_recs]
            if " " not in "".join(s for _, _, s in recs) and "\t" not in text.replace("\t", "", 0):
                pass
            for (rn, rs), (mn, ms) in zip(ref, mine):
                if rs.replace(" ", "").replace("\t", "") != ms:
                    self.bad("script model vs Bio.SeqIO sequence for %r" % mn)
                if rn != mn:
                    self.bad("script model vs Bio.SeqIO name: %r vs %r" % (mn, rn))
            if len(ref) != len(mine):
                self.bad("script model vs Bio.SeqIO record count %d vs %d" % (len(mine), len(ref)))
            if [(n, d, s) for n, d, s in exp_recs] != [split_header(n + " " + d) + (s,) for n, d, s in recs]:
                # the generator's records must come back (names after blanks etc.)
                self.bad("script model vs generator")
            suffix = ".fa"
        elif kind == "fastq":
            data = write_fastq(r, recs)
            text = data.decode("utf-8")
            exp_recs = [split_header(n + ((" " + d) if d else "")) + (s,) for n, d, s in recs]
            try:
                ref = bio_fastq(text)
            except Exception as e:  # noqa: BLE001  (Bio cannot read an empty title)
                self.note("Bio.SeqIO fastq: %s" % e)
                ref = [(n, s) for n, _, s in exp_recs]
            if [(n, s) for n, _, s in exp_recs] != [(a, b) for a, b in ref]:
                self.bad("script model vs Bio.SeqIO fastq")
            suffix = ".fq"
        else:
            fa = os.path.join(self.dir, "src.fa")
            open(fa, "wb").write(write_fasta(r, recs, clean=True))
            tb = os.path.join(self.dir, "g.2bit")
            subprocess.run([sys.executable, os.path.join(HERE, "fa2twobit.py"), fa, tb], check=True)
            data = open(tb, "rb").read()
            exp_recs = [(n, "", "".join(c if c in "ACGTacgt" else ("n" if c.islower() else "N") for c in s))
                        for n, _, s in recs]
            comp = r.choice(["none", "none", "none", "gzip", "zstd"])
            suffix = ".2bit"
        path = os.path.join(self.dir, "in" + suffix + {"none": "", "gzip": ".gz", "mgzip": ".gz", "bgzf": ".gz",
                                                        "zstd": ".zst", "xz": ".xz", "bz2": ".bz2"}[comp])
        compress(r, data, comp, path)
        if kind == "fastq" and comp in ("none", "gzip", "bgzf"):
            try:
                ps = pysam_fastx(path)
                # kseq (pysam) does not skip blanks before the name as samtools faidx,
                # Biopython and docs/dna.md do: compare its names only where none are
                if [s for _, _, s in exp_recs] != [s for _, s in ps] or any(
                        n != pn for (n, _, _), (g, _, _), (pn, _) in zip(exp_recs, recs, ps) if g):
                    self.bad("generator vs pysam.FastxFile")
            except Exception as e:  # noqa: BLE001
                self.note("pysam.FastxFile: %s" % e)
        stdin = r.random() < 0.2
        self.note("%s, %d records, lengths %s, %s%s, opts %s" % (
            kind, len(recs), [len(s) for _, _, s in recs][:8], comp, " stdin" if stdin else "", o))
        args = self.opt_args(o)
        p, out = self.run_sluice(args + ["-"] if stdin else args + [path], stdin_path=path if stdin else None)
        if p.returncode:
            self.bad("sluice failed (%d): %s" % (p.returncode, p.stderr.decode(errors="replace").strip()[:400]))
            return
        self.compare(expected_docs(exp_recs, o), self.decode(out))

    # -- BED --
    def bed_case(self):
        r = self.rng
        used = set()
        recs = []
        for _ in range(r.randint(1, 4)):
            recs.append((rand_name(r, used, simple=True), "", rand_seq(r, rand_len(r) if r.random() < 0.7 else r.randint(1, 300000))))
        kind = r.choices(["fa", "fai", "bgzf", "gz", "2bit", "ragged"], weights=[2, 2, 2, 1, 1, 1])[0]
        if kind == "2bit":
            fa = os.path.join(self.dir, "src.fa")
            open(fa, "wb").write(write_fasta(r, recs, clean=True))
            path = os.path.join(self.dir, "g.2bit")
            subprocess.run([sys.executable, os.path.join(HERE, "fa2twobit.py"), fa, path], check=True)
            genome = {n: "".join(c if c in "ACGTacgt" else ("n" if c.islower() else "N") for c in s) for n, _, s in recs}
        else:
            data = write_fasta(r, recs, clean=(kind != "ragged"))
            path = os.path.join(self.dir, "g.fa")
            if kind in ("bgzf", "gz"):
                path += ".gz"
            compress(r, data, {"bgzf": "bgzf", "gz": "gzip"}.get(kind, "none"), path)
            genome = {n: s for n, _, s in parse_fasta_doc(data.decode())}
            if kind in ("fai", "bgzf"):
                try:
                    pysam.faidx(path)  # .fai (and .gzi for BGZF), as samtools faidx
                except pysam.utils.SamtoolsError as e:
                    # samtools refuses a file whose last record is empty ("File truncated")
                    self.note("samtools faidx: %s; no index" % str(e).strip())
                    kind = "fa" if kind == "fai" else "gz"
            if kind in ("fai", "bgzf"):
                with pysam.FastaFile(path) as f:
                    for n in genome:
                        if len(genome[n]) and f.fetch(n, 0, len(genome[n])) != genome[n]:
                            self.bad("pysam.FastaFile vs script model on %s" % n)
                if kind == "fai":
                    fx = pyfaidx.Fasta(path, sequence_always_upper=False, as_raw=True, rebuild=False)
                    for n in genome:
                        if len(genome[n]) and fx[n][:] != genome[n]:
                            self.bad("pyfaidx vs script model on %s" % n)
        names = list(genome)
        lines, ivs = [], []
        sep = "\t" if r.random() < 0.8 else " "
        if r.random() < 0.3:
            lines += ["track name=x", "browser position chr1:1-10", "# comment", ""]
        ncol = r.choice([3, 4, 6, 6])
        for i in range(r.randint(1, 12)):
            # samtools faidx leaves empty records out of the .fai (pyfaidx keeps them):
            # sluice then reports them missing (docs/dna.md), so none are asked for here
            cand = [c for c in names if genome[c] or kind not in ("fai", "bgzf")]
            if not cand:
                break
            c = r.choice(cand)
            n = len(genome[c])
            a = r.choice([0, n, r.randint(0, n)])
            b = r.choice([a, n, r.randint(a, n)])
            strand = r.choice(["+", "-", "."]) if ncol == 6 else "+"
            cols = [c, str(a), str(b), "iv%d" % i, "0", strand][:ncol]
            lines.append(sep.join(cols))
            ivs.append((c, a, b, strand, "iv%d" % i if ncol >= 4 else None, len(lines)))
            if r.random() < 0.1:
                lines.append("")
        bed = os.path.join(self.dir, "i.bed")
        open(bed, "w").write("\n".join(lines) + "\n")
        o = self.options(allow_window=False)
        o["revcomp"] = False
        W = r.choice([0, 0, 1, 10, 100, 1000])
        args = self.opt_args(o) + ["--bed", bed]
        if W:
            args += ["--window", str(W)]
        self.note("bed on %s, %d intervals, window %d, opts %s" % (kind, len(ivs), W, o))
        exp = []
        if not ivs:
            return
        for c, a, b, strand, name, ln in ivs:
            clen = len(genome[c])
            s, e = a, b
            if W:
                if e - s < W:
                    extra = W - (e - s)
                    s, e = s - extra // 2, e + extra - extra // 2
                else:
                    e = s + W
                s, e = max(0, s), min(clen, e)
            seq = genome[c][s:e]
            if kind in ("fai", "bgzf") and e > s:
                with pysam.FastaFile(path) as f:
                    if f.fetch(c, s, e) != seq:
                        self.bad("pysam fetch disagrees with model %s:%d-%d" % (c, s, e))
            if strand == "-":
                assert revcomp(seq).upper() == bio_rc(seq.upper()) or any(ch not in "ACGTNacgtn" for ch in seq)
                seq = revcomp(seq)
            meta = {"chrom": c, "start": s, "end": e}
            if ncol == 6 and strand != ".":
                meta["strand"] = strand
            exp.append(make_doc("%s:%d-%d" % (c, s, e), seq, o, meta))
        p, out = self.run_sluice(args + [path])
        if p.returncode:
            self.bad("sluice failed (%d): %s" % (p.returncode, p.stderr.decode(errors="replace").strip()[:400]))
            return
        self.compare(exp, self.decode(out))

    # -- errors --
    def error_case(self):
        r = self.rng
        what = r.choice(["noheader", "ctrl", "high", "fq_trunc", "fq_short", "fq_long", "gz_trunc",
                         "bed_order", "bed_past", "bed_chrom", "stale_fai"])
        used = set()
        recs = [(rand_name(r, used, simple=True), "", rand_seq(r, r.randint(5, 3000))) for _ in range(r.randint(1, 3))]
        args = []
        if what in ("noheader", "ctrl", "high", "gz_trunc"):
            data = write_fasta(r, recs, clean=True)
            if what == "noheader":
                data = b"ACGT\n" + data
            elif what in ("ctrl", "high"):
                lines = data.split(b"\n")
                cand = [i for i, ln in enumerate(lines) if ln and not ln.startswith(b">")]
                i = r.choice(cand)
                k = r.randint(0, len(lines[i]))
                lines[i] = lines[i][:k] + (bytes([r.choice([1, 7, 0x1b, 0x7f])]) if what == "ctrl"
                                           else bytes([r.randint(0x80, 0xff)])) + lines[i][k:]
                data = b"\n".join(lines)
            path = os.path.join(self.dir, "bad.fa")
            if what == "gz_trunc":
                path += ".gz"
                z = gzip.compress(data)
                data = z[:r.randint(10, len(z) - 1)]
            open(path, "wb").write(data)
        elif what.startswith("fq"):
            data = write_fastq(r, recs).decode()
            lines = data.split("\n")
            if what == "fq_trunc":
                # cut inside a record (single-line records: not after a quality line)
                lines = []
                for n, _, s in recs:
                    lines += ["@" + n, s, "+", "I" * len(s)]
                lines = lines[:r.choice([k for k in range(1, len(lines)) if k % 4])]
            else:
                qi = 3  # single-line records: fix width so that line 3 is the quality
                lines = []
                for n, _, s in recs:
                    q = "I" * len(s)
                    lines += ["@" + n, s, "+", q]
                j = r.randrange(len(recs))
                lines[4 * j + qi] = lines[4 * j + qi][:-1] if what == "fq_short" else lines[4 * j + qi] + "I"
                if what == "fq_short" and j + 1 == len(recs) and r.random() < 0.5:
                    pass
            path = os.path.join(self.dir, "bad.fq")
            open(path, "w").write("\n".join(lines) + "\n")
        else:
            data = write_fasta(r, recs, clean=True)
            path = os.path.join(self.dir, "g.fa")
            open(path, "wb").write(data)
            c, _, s = r.choice(recs)
            if what == "bed_order":
                bl = "%s\t%d\t%d" % (c, len(s) - 1, r.randint(0, len(s) - 2))
            elif what == "bed_past":
                bl = "%s\t%d\t%d" % (c, r.randint(0, len(s)), len(s) + r.randint(1, 10))
            elif what == "bed_chrom":
                bl = "nochrom_%d\t0\t1" % r.randint(0, 9)
            else:
                pysam.faidx(path)
                # rewrite the file with another line width: the .fai is now stale
                w = r.choice([7, 13])
                data2 = "".join(">%s\n%s" % (n, "".join(q[i:i + w] + "\n" for i in range(0, len(q), w))) for n, _, q in recs)
                if data2.encode() == data:
                    return self.error_case()
                open(path, "w").write(data2)
                n0 = max(recs, key=lambda x: len(x[2]))
                bl = "%s\t%d\t%d" % (n0[0], 0, len(n0[2]))
            bed = os.path.join(self.dir, "i.bed")
            open(bed, "w").write("track x\n" + bl + "\n")
            args = ["--bed", bed]
        self.note("error case %s" % what)
        p, out = self.run_sluice(args + ["-@", str(r.choice([1, 2])), path])
        err = p.stderr.decode(errors="replace").strip()
        if p.returncode != 1:
            self.bad("%s: exit %d, expected 1 (stderr %r)" % (what, p.returncode, err[:300]))
        lines = err.splitlines()
        if len(lines) != 1:
            self.bad("%s: %d stderr lines: %r" % (what, len(lines), err[:300]))
        elif p.returncode:
            ln = lines[0]
            named = os.path.basename(path) if not what.startswith("bed") and what != "stale_fai" else None
            if not ln.startswith("sluice: tokenize dna: "):
                self.bad("%s: message %r" % (what, ln))
            elif named and named not in ln and "bad." not in ln:
                self.bad("%s: message does not name the file: %r" % (what, ln))
            else:
                import re
                if not re.search(r":\d+:|offset \d+", ln):
                    self.bad("%s: message has no line or offset: %r" % (what, ln))
        if os.path.exists(out):
            self.bad("%s: output file left behind" % what)

    def run(self):
        r = self.rng.random()
        try:
            if r < 0.125:
                self.error_case()
            elif r < 0.35:
                self.bed_case()
            else:
                self.seq_case()
        except subprocess.TimeoutExpired:
            self.bad("timeout")
        return not self.problems


def main():
    a, _, sluice, work, cases = diffcli.case_args(__doc__, "dna-diff-", minimize=False)
    fails = 0
    for num in cases:
        c = Case(a.seed, num, work, sluice, a.verbose)
        ok = c.run()
        if a.verbose or not ok:
            print("case %d: %s" % (num, "ok" if ok else "FAIL"))
            for d in c.desc:
                print("   ", d)
            for p in c.problems:
                print("  !", p)
            sys.stdout.flush()
        if ok or not a.keep:
            shutil.rmtree(c.dir, ignore_errors=True)
        if not ok:
            fails += 1
    print("%d cases, %d failed%s" % (len(cases), fails, (", kept under " + work) if a.keep and fails else ""))
    if not a.work and not (a.keep and fails):
        shutil.rmtree(work, ignore_errors=True)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

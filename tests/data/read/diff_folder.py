#!/usr/bin/env python3
"""Randomized differential test of `sluice read FOLDER` against pyarrow (a
developer tool; not run by `make test`; needs pyarrow):

    python3 tests/data/read/diff_folder.py --seed 1 --n 100 --sluice build/sluice

Each case builds a random tree of small Parquet files (names from letters,
digits, '-', '.', '_', ' ', '+', '~' and non-ASCII, leading '.' and '_' too,
folders nested up to four deep, empty folders), each file's one row holding
its own path. pyarrow.dataset.dataset(FOLDER, format="parquet").files gives
the files pyarrow finds and their order; sluice must read exactly those
files' rows in that order. Some cases also run with --part R/N (the parts
must add up to the whole).
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

CHARS = "abcAB01-._ +~é漢"


def name(rng):
    n = rng.randint(1, 6)
    s = "".join(rng.choice(CHARS) for _ in range(n))
    if rng.random() < 0.15:
        s = rng.choice("._") + s
    return s.strip() or "x"


def build(rng, root, depth, files):
    for _ in range(rng.randint(0, 4)):
        nm = name(rng)
        p = os.path.join(root, nm)
        if os.path.exists(p) or os.path.exists(p + ".parquet"):
            continue
        if depth < 4 and rng.random() < 0.35:
            os.mkdir(p)
            build(rng, p, depth + 1, files)
        else:
            p += ".parquet"
            pq.write_table(pa.table({"text": [os.path.relpath(p, files["base"])]}), p)
            files["all"].append(p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--sluice", default="build/sluice")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="sluice-folder-")
    bad = ok = empty = 0
    for case in range(a.n):
        rng = random.Random(a.seed * 7919 + case)
        root = os.path.join(work, "c%d" % case)
        os.mkdir(root)
        files = {"base": root, "all": []}
        while not files["all"]:
            build(rng, root, 0, files)
        want = [os.path.relpath(f, root) for f in ds.dataset(root, format="parquet").files]
        r = subprocess.run([a.sluice, "read", "-q", root], capture_output=True)
        if not want:
            empty += 1
            if r.returncode != 1 or b"a folder without files to read" not in r.stderr:
                bad += 1
                print("case %d: pyarrow finds no file; sluice: rc %d %r" % (case, r.returncode, r.stderr[:200]))
            continue
        import json
        got = [json.loads(line)["text"] for line in r.stdout.decode().splitlines()]
        if r.returncode != 0 or got != want:
            bad += 1
            print("case %d: differs\n  pyarrow %r\n  sluice  %r %s" % (case, want, got, r.stderr.decode()[:200]))
            continue
        if rng.random() < 0.3:
            k = rng.randint(2, 4)
            parts = b"".join(subprocess.run([a.sluice, "read", "-q", "--part", "%d/%d" % (i, k), root],
                                            capture_output=True).stdout for i in range(k))
            if parts != r.stdout:
                bad += 1
                print("case %d: --part R/%d does not add up" % (case, k))
                continue
        ok += 1
    print("%d cases: %d agree with pyarrow, %d where pyarrow finds no file (sluice refuses them), %d differ"
          % (a.n, ok, empty, bad))
    shutil.rmtree(work)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Builds the BPE benchmark corpus (JSON Lines) from text already on the
machine, so nothing downloads: the Python standard library sources (code,
docstrings), /usr/share/doc and man-page text, and the multilingual test
corpus (tests/data/bpe/corpus.jsonl), mixed in a fixed order until the
target size is reached. Documents are 1-16 KB pieces.
usage: bpe_corpus.py OUT.jsonl [MEGABYTES]"""
import gzip
import json
import os
import random
import sys
import sysconfig

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def sources():
    std = sysconfig.get_paths()["stdlib"]
    for base in (std, "/usr/share/doc", "/usr/share/common-licenses"):
        for d, dirs, files in sorted(os.walk(base)):
            dirs.sort()
            for f in sorted(files):
                p = os.path.join(d, f)
                if f.endswith((".py", ".txt", ".md", ".rst", ".html")) or f in ("copyright", "README", "NEWS"):
                    try:
                        yield open(p, encoding="utf-8").read()
                    except (UnicodeDecodeError, OSError):
                        pass
                elif f.endswith(".gz") and not f.endswith(".tar.gz"):
                    try:
                        yield gzip.open(p).read().decode("utf-8")
                    except (UnicodeDecodeError, OSError, EOFError):
                        pass


def main():
    out, mb = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 64
    target = int(mb * 1e6)
    rng = random.Random(7)
    multi = [json.loads(l)["text"] for l in open(os.path.join(ROOT, "tests/data/bpe/corpus.jsonl"), encoding="utf-8")]
    n = size = 0
    with open(out, "w", encoding="utf-8") as f:
        while size < target:
            for text in sources():
                for i in range(0, len(text), 8000):
                    piece = text[i:i + rng.randint(1000, 16000)]
                    if rng.random() < 0.1:
                        piece += "\n" + " ".join(rng.choice(multi) for _ in range(8))
                    f.write(json.dumps({"id": "b%d" % n, "text": piece}, ensure_ascii=False) + "\n")
                    n += 1
                    size += len(piece.encode("utf-8"))
                    if size >= target:
                        break
                if size >= target:
                    break
    print("%s: %d documents, %.1f MB of text" % (out, n, size / 1e6), file=sys.stderr)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes examples/data/web/sample.parquet: a small FineWeb-shaped crawl for the
web-text pipeline of the README and `make demo` (read Parquet -> rules ->
language ID -> dedup -> tokens -> score -> shards).

Its documents are the repository's own test corpora, nothing downloaded:
tests/data/rules/corpus.jsonl (web-like prose, lists, boilerplate, code,
multilingual and adversarial texts chosen around the Gopher/C4/FineWeb
thresholds) and tests/data/dedup/corpus.jsonl (multilingual texts with planted
near-duplicates), with FineWeb's columns (text, id, dump, url, date,
file_path, language, language_score, token_count) filled deterministically.
Written by pyarrow with ZSTD compression, 2 row groups.

usage: python3 make_sample.py   (needs pyarrow; run from anywhere)
"""
import json
import os
import random

import pyarrow as pa
import pyarrow.parquet as pq

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.normpath(os.path.join(here, "..", "..", ".."))
docs = []
for name in ("tests/data/rules/corpus.jsonl", "tests/data/dedup/corpus.jsonl"):
    for line in open(os.path.join(root, name), encoding="utf-8"):
        d = json.loads(line)
        if d.get("text"):
            docs.append(d["text"])
r = random.Random(7)
r.shuffle(docs)
n = len(docs)
table = pa.table({
    "text": docs,
    "id": [f"<urn:uuid:{r.getrandbits(128):032x}>" for _ in range(n)],
    "dump": [r.choice(["CC-MAIN-2024-10", "CC-MAIN-2023-50"]) for _ in range(n)],
    "url": [f"https://example.org/{i}" for i in range(n)],
    "date": [f"2024-0{1 + i % 9}-1{i % 10}T00:00:00Z" for i in range(n)],
    "file_path": [f"s3://commoncrawl/crawl-data/{i % 7:05d}.warc.gz" for i in range(n)],
    "language": ["en"] * n,
    "language_score": [round(r.random(), 6) for _ in range(n)],
    "token_count": pa.array([len(t.split()) for t in docs], pa.int64()),
})
pq.write_table(table, os.path.join(here, "sample.parquet"), compression="zstd", row_group_size=(n + 1) // 2)
print(f"sample.parquet: {n} documents")

#!/usr/bin/env python3
"""A MinHash fixture from datatrove 0.10.1 itself: band records whose first
value is 2^32-1 with a 32-bit hash.

MinhashDedupBuckets reads each band's sorted records only up to the first
whose first value reaches `max_hash`, which is HashConfig.max (2^32-1) for a
32-bit hash (read_sigs' `if sigdata[0] >= max_hash: break`); so documents
whose band starts with 2^32-1 are never paired in that band, even when equal.

With --ngram 1 --buckets 1 --rows 1 --seed 1 --hash xxhash32, the one
permutation is a = 775169054918279404, b = 1758426461858698312 (numpy
RandomState(1)), and each of the words below has
((xxh32(w) * a + b) mod 2^64 mod (2^61-1)) & (2^32-1) == 2^32-1: found by
trying every 7-letter lowercase word in C (about 2^32 of them for each hit);
"gzmdgqg" and "fbzdpcs" even have the same xxh32. A document of such words
alone (one distinct shingle) has the signature 2^32-1.

minhash-max32.jsonl     the corpus: copies of such documents (also after
                        simplify_text: case, punctuation), and ordinary
                        duplicates next to them
minhash-max32.removed   the ids MinhashDedupFilter drops, in input order

  /tmp/dt-venv/bin/python tests/data/dedup/make_minhash_max32_fixtures.py
(venv: datatrove[processing]==0.10.1, spacy, xxhash<4)."""
import os
import sys
import tempfile

import numpy as np
import xxhash
from datatrove.pipeline.dedup.minhash import MinhashConfig, MinhashDedupSignature
from datatrove.utils.hashing import HashConfig
from make_minhash_fixtures import run_datatrove_on, write_jsonl, write_removed  # (the four stages as the committed fixtures ran them)

here = os.path.dirname(os.path.abspath(__file__))
MAXWORDS = ["gwvskmd", "gzmdgqg", "fbzdpcs"]
TEXTS = [
    ("m00", "gwvskmd"),
    ("m01", "hello world"),
    ("m02", "gwvskmd"),              # equal to m00: not paired by datatrove
    ("m03", "Hello, World!"),        # m01 after simplify_text: paired, removed
    ("m04", "gzmdgqg"),
    ("m05", "fbzdpcs"),              # the same xxh32 as m04: not paired
    ("m06", "GWVSKMD."),             # m00 after simplify_text: not paired
    ("m07", ""),                     # empty: kept, not numbered by datatrove
    ("m08", "gwvskmd gwvskmd"),      # one distinct shingle: not paired
    ("m09", "gwvskmd hello"),        # its minimum is hello's: an ordinary signature
    ("m10", "hello gwvskmd"),        # the same shingle set as m09: paired, removed
    ("m11", "gwvskmd"),
]
CFG = MinhashConfig(n_grams=1, num_buckets=1, hashes_per_bucket=1, seed=1,
                    hash_config=HashConfig(precision=32, hash_fc="xxhash"))


def main():
    sig = MinhashDedupSignature("/nonexistent", config=CFG)
    for w in MAXWORDS:  # the property, as datatrove computes it
        v = sig.get_signature(np.array([[xxhash.xxh32_intdigest(w)]], dtype=np.uint64))
        assert v == [[(1 << 32) - 1]], (w, v)
    docs = [{"id": i, "text": t} for i, t in TEXTS]
    write_jsonl(os.path.join(here, "minhash-max32.jsonl"), docs)
    with tempfile.TemporaryDirectory() as work:
        _, rem = run_datatrove_on(docs, work, CFG)
        removed = write_removed(rem, docs, os.path.join(here, "minhash-max32.removed"))
    print("max32:", len(removed), "removed:", removed, file=sys.stderr)


main()

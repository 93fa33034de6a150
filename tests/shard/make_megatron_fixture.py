"""Writes tests/data/shard/ Megatron fixtures with megatron-core's own
IndexedDatasetBuilder (the writer behind tools/preprocess_data.py), and the
same documents as JSON Lines for `sluice tokenize ids`.

Run once (developer machine, venv with megatron-core installed, see
tests/data/shard/SOURCES.md):
    /work/venv-shard/bin/python tests/shard/make_megatron_fixture.py
"""
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
from megatron_import import load_indexed_dataset  # noqa: E402

ID = load_indexed_dataset()
OUT = os.path.join(os.path.dirname(__file__), "..", "data", "shard")
EOD = 0


def docs(vocab, n, seed):
    rng = np.random.RandomState(seed)
    lens = [5, 0, 1, 300, 17] + list(rng.randint(0, 200, size=n - 5))
    return [rng.randint(1, vocab, size=k).tolist() for k in lens]


def write(prefix, vocab, ds):
    """As preprocess_data.py --append-eod: empty documents are skipped, the EOD
    is appended and counted, one sequence per document."""
    dtype = ID.DType.optimal_dtype(vocab)
    b = ID.IndexedDatasetBuilder(prefix + ".bin", dtype=dtype)
    for d in ds:
        if not d:
            continue
        b.add_item(torch.tensor(d + [EOD]))
        b.end_document()
    b.finalize(prefix + ".idx")
    return dtype


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, vocab, seed in (("mega_u16", 50277, 1), ("mega_i32", 100000, 2)):
        ds = docs(vocab, 40, seed)
        dtype = write(os.path.join(OUT, name), vocab, ds)
        with open(os.path.join(OUT, name + ".jsonl"), "w") as f:
            for i, d in enumerate(ds):
                f.write(json.dumps({"id": "%s-%d" % (name, i), "ids": d}) + "\n")
        print(name, dtype.__name__, len(ds), "documents")
    # Sentence-level dataset: a document of several sequences (add_document
    # with lengths, as --split-sentences writes), to check that import joins them.
    b = ID.IndexedDatasetBuilder(os.path.join(OUT, "mega_sent.bin"), dtype=np.uint16)
    b.add_document(torch.tensor([11, 12, 13, 14, 15]), [2, 3])
    b.add_document(torch.tensor([21, 22, 0]), [3])
    b.add_document(torch.tensor([31, 32, 33, 34]), [1, 1, 2])
    b.finalize(os.path.join(OUT, "mega_sent.idx"))
    # add_index, as tools/merge_datasets.py: the uint16 dataset twice.
    b = ID.IndexedDatasetBuilder(os.path.join(OUT, "mega_u16x2.bin"), dtype=np.uint16)
    b.add_index(os.path.join(OUT, "mega_u16"))
    b.add_index(os.path.join(OUT, "mega_u16"))
    b.finalize(os.path.join(OUT, "mega_u16x2.idx"))
    # Megatron's own reader on every fixture, as a check of the writer use.
    for name in ("mega_u16", "mega_i32", "mega_sent", "mega_u16x2"):
        r = ID.IndexedDataset(os.path.join(OUT, name))
        print(name, "reader:", len(r), "sequences,", len(r.document_indices) - 1, "documents")


if __name__ == "__main__":
    main()

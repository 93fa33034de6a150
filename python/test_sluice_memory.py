"""Memory-token slots (docs/shards.md section 2.2, docs/longctx.md) read back
through the Python reader, against independent evidence: the input documents
(docs.jsonl, the ids sluice tokenized), and the same documents sharded without
memory slots. Run by tests/cli/shard_memory.sh with:
  SLUICE_TEST_DOCS  the JSONL input ({"id","ids"}); packing appends the stream's EOS 1
  SLUICE_TEST_PLAIN a recurrent shard directory without memory
  SLUICE_TEST_MEM   "DIR:K:ID:WRITE ..." shard directories with memory slots
  SLUICE_TEST_CAT   "DIR=FILE ...": `sluice cat DIR` output of each directory
"""
import json
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sluice_data import ShardDataset, ShardDir, ShardIterable, memory_mask  # noqa: E402

EOS = 1


def input_docs():
    out = []
    with open(os.environ["SLUICE_TEST_DOCS"]) as f:
        for line in f:
            o = json.loads(line)
            out.append(np.asarray(o["ids"] + [EOS], dtype=np.int64))
    return out


def mem_dirs():
    for spec in os.environ["SLUICE_TEST_MEM"].split():
        d, k, i, w = spec.split(":")
        yield d, int(k), int(i), w == "1"


class MemorySlots(unittest.TestCase):
    def test_manifest(self):
        plain = ShardDir(os.environ["SLUICE_TEST_PLAIN"])
        self.assertIsNone(plain.memory)
        self.assertEqual(plain.memory_slots, (0, 0))
        self.assertNotIn("memory", plain.manifest)
        self.assertNotIn("memory_tokens", plain.manifest["splits"]["train"])
        for d, k, i, w in mem_dirs():
            sd = ShardDir(d, verify=True)
            self.assertEqual(sd.memory, {"tokens": k, "id": i, "write": w})
            self.assertEqual(sd.memory_slots, (k, k if w else 0))
            sp = sd.manifest["splits"]["train"]
            per_row = k * (2 if w else 1)
            self.assertEqual(sp["memory_tokens"], sp["rows"] * per_row)
            used = sum(int(n) for _, b in sd.rows() for n in b.lengths)
            self.assertEqual(sp["pad_tokens"], sp["tokens"] - used - sp["memory_tokens"])

    def test_every_row_has_its_memory(self):
        for d, k, i, w in mem_dirs():
            sd = ShardDir(d)
            L = sd.seq_len
            kw = k if w else 0
            it = ShardIterable(d, steps=None)
            n = 0
            for item in it:
                toks, mask = item["tokens"], item["memory_mask"]
                self.assertEqual(mask.shape, toks.shape)
                self.assertEqual(mask.dtype, np.bool_)
                for r in range(toks.shape[0]):
                    m = mask[r]
                    # exactly K memory positions at the start, K at the end with write
                    self.assertEqual(int(m.sum()), k + kw)
                    self.assertTrue(m[:k].all())
                    self.assertEqual(bool(m[L - kw:].all()) if kw else True, True)
                    self.assertFalse(m[k:L - kw].any())
                    self.assertTrue((toks[r][m] == i).all())
                    b = item["bounds"][r]
                    for o, ln in zip(b.offsets.tolist(), b.lengths.tolist()):
                        self.assertFalse(m[o:o + ln].any(), "a piece covers memory")
                    # memory blocks are their own segments, positions 0..K-1
                    si, pos = item["seq_idx"][r], item["position_ids"][r]
                    self.assertEqual(len(set(si[:k].tolist())), 1)
                    self.assertNotIn(si[0], set(si[k:].tolist()))
                    self.assertEqual(pos[:k].tolist(), list(range(k)))
                    if kw:
                        self.assertEqual(len(set(si[L - kw:].tolist())), 1)
                        self.assertNotIn(si[L - 1], set(si[:L - kw].tolist()))
                        self.assertEqual(pos[L - kw:].tolist(), list(range(kw)))
                    n += 1
            self.assertEqual(n, sd.splits["train"].rows)
            # the map-style dataset gives the same masks, row by row
            ds = ShardDataset(d, unit="row")
            self.assertTrue((ds[0]["memory_mask"] == memory_mask(L, (k, kw))).all())

    def test_recurrent_continuation_after_memory(self):
        for d, k, _, _ in mem_dirs():
            sd = ShardDir(d)
            B = int(sd.manifest["batch"])
            rows = list(sd.rows())
            for t in range(B, len(rows)):
                prev, cur = rows[t - B][1], rows[t][1]
                if len(prev) and len(cur) and cur.docs[0] == prev.docs[-1] and cur.doc_offsets[0]:
                    self.assertEqual(int(cur.offsets[0]), k)
                    self.assertTrue(cur.continues)
                    self.assertEqual(int(cur.doc_offsets[0]), int(prev.doc_offsets[-1] + prev.lengths[-1]))

    def test_tokens_unchanged(self):
        want = input_docs()
        plain = ShardDir(os.environ["SLUICE_TEST_PLAIN"]).documents()
        self.assertEqual(sorted(plain), list(range(len(want))))
        for k in plain:
            self.assertTrue(np.array_equal(plain[k], want[k]))
        for d, _, _, _ in mem_dirs():
            got = ShardDir(d).documents()
            self.assertEqual(sorted(got), sorted(plain))
            for k in got:
                self.assertTrue(np.array_equal(got[k], want[k]), "document %d" % k)

    def test_cat_round_trip(self):
        # `sluice cat DIR`: the ids of each document's pieces, in doc_offset
        # order, are the input document, with or without memory slots
        want = input_docs()
        for spec in os.environ["SLUICE_TEST_CAT"].split():
            d, path = spec.split("=")
            parts = {}
            with open(path) as f:
                for line in f:
                    o = json.loads(line)
                    parts.setdefault(o["doc"], []).append((o["doc_offset"], o["ids"]))
            self.assertEqual(sorted(parts), list(range(len(want))), d)
            for doc, ps in parts.items():
                ps.sort()
                ids = [t for _, p in ps for t in p]
                self.assertEqual(ids, want[doc].tolist(), "%s document %d" % (d, doc))


if __name__ == "__main__":
    unittest.main(verbosity=1)

"""Tests of python/sluice_data.py against shards written by the sluice binary
(tests/cli/shard_python.sh prepares them and sets the environment):

  SLUICE_TEST_DOCS  the source documents (JSON Lines {"id","ids"}), EOS = 1
  SLUICE_TEST_W     shard with --warmup double:16..64,epochs=1,batch=2,
                    --val-fraction 0.2, --shuffle, 2 KiB files
  SLUICE_TEST_R     shard with --layout recurrent --batch 3 --seq-len 32
  SLUICE_TEST_M     Megatron prefix from `sluice export megatron`

The expected values come from the source documents themselves (round trip),
from Megatron's documented build_packed_seq_idx example, and from the .idx
layout documented by megatron-core (re-read here with numpy)."""
import json
import os
import shutil
import struct
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sluice_data as sd  # noqa: E402

EOS = 1


def env(name):
    v = os.environ.get(name)
    if not v:
        raise SystemExit("%s is not set: run tests/cli/shard_python.sh" % name)
    return v


def source_docs():
    out = []
    with open(env("SLUICE_TEST_DOCS")) as f:
        for line in f:
            d = json.loads(line)
            out.append((d["id"], d["ids"]))
    return out


class Helpers(unittest.TestCase):
    def test_megatron_seq_idx_example(self):
        # megatron/core/ssm/packed_seq_helpers.py build_packed_seq_idx: cu_seqlens
        # [0,5,7,11] with 16 tokens -> trailing tokens form one more sequence
        b = sd.Boundaries([0, 5, 7], [5, 2, 4], [0, 1, 2], [0, 0, 0])
        self.assertEqual(sd.seq_idx(b, 16).tolist(), [0, 0, 0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3])
        self.assertEqual(sd.cu_seqlens(b, 16).tolist(), [0, 5, 7, 11, 16])
        self.assertEqual(sd.seq_idx(b, 16).dtype, np.int32)

    def test_positions(self):
        b = sd.Boundaries([0, 3, 5], [3, 2, 2], [7, 8, 9], [4, 0, 0])
        self.assertEqual(sd.position_ids(b, 10).tolist(), [0, 1, 2, 0, 1, 0, 1, 0, 1, 2])
        self.assertEqual(sd.position_ids(b, 10, continue_positions=True).tolist(), [4, 5, 6, 0, 1, 0, 1, 0, 1, 2])
        self.assertTrue(b.continues)
        self.assertEqual(b.starts.tolist(), [3, 5])
        # a gap between pieces is its own segment
        g = sd.Boundaries([2], [3], [0], [0])
        self.assertEqual(sd.cu_seqlens(g, 8).tolist(), [0, 2, 5, 8])

    def test_xxh64_vectors(self):
        # published XXH64 values (seed 0)
        self.assertEqual(sd.xxh64(b""), 0xEF46DB3751D8E999)
        self.assertEqual(sd.xxh64(b"a"), 0xD24EC4F1A98C6E5B)


class Warmup(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ds = sd.ShardDir(env("SLUICE_TEST_W"), verify=True)  # checksums agree with sluice's
        cls.docs = source_docs()

    def test_round_trip(self):
        ids = {}
        for split in ("train", "val"):
            got = self.ds.documents(split)
            for ordinal, toks in got.items():
                doc_id, want = self.docs[ordinal]
                self.assertEqual(self.ds.doc_id(ordinal), doc_id)
                self.assertEqual(toks.tolist(), want + [EOS], doc_id)
                ids[doc_id] = split
        self.assertEqual(len(ids), len(self.docs))
        self.assertTrue(0 < sum(v == "val" for v in ids.values()) < len(self.docs))

    def test_boundaries_point_at_starts(self):
        for toks, b in self.ds.rows("train"):
            for o, d, do in zip(b.offsets.tolist(), b.docs.tolist(), b.doc_offsets.tolist()):
                want = self.docs[d][1] + [EOS]
                self.assertEqual(int(toks[o]), want[do])

    def test_stages(self):
        st = self.ds.stages
        self.assertEqual([s["seq_len"] for s in st], [16, 32, 64])
        self.assertEqual({s["tokens_per_step"] for s in st}, {128})
        stored = np.concatenate([t for t, _ in self.ds.rows("train")])
        for i, s in enumerate(st):
            view = list(self.ds.stage_rows(i))
            self.assertTrue(all(len(t) == s["seq_len"] for t, _ in view))
            # same tokens in the same order at every stage
            self.assertEqual(np.concatenate([t for t, _ in view]).tolist(), stored.tolist())
            # and every piece of the view is a piece of a document
            for t, b in view[:50]:
                for o, n, d, do in zip(b.offsets.tolist(), b.lengths.tolist(), b.docs.tolist(),
                                       b.doc_offsets.tolist()):
                    self.assertEqual(t[o:o + n].tolist(), (self.docs[d][1] + [EOS])[do:do + n])

    def test_batches(self):
        n = 0
        seen = []
        for stage, toks, bounds in self.ds.batches():
            s = self.ds.stages[stage]
            self.assertEqual(toks.shape, (s["batch"], s["seq_len"]))
            self.assertEqual(toks.size, 128)
            self.assertEqual(len(bounds), s["batch"])
            for row, b in zip(toks, bounds):
                self.assertEqual(len(sd.seq_idx(b, len(row))), len(row))
            if stage == 0:
                seen.append(toks.reshape(-1))
            n += 1
        self.assertEqual(n, sum(s["steps"] for s in self.ds.stages))
        # one epoch at stage 0 covers every stored token (the last step wraps around)
        stored = np.concatenate([t for t, _ in self.ds.rows("train")])
        flat = np.concatenate(seen)
        self.assertEqual(flat[:len(stored)].tolist(), stored.tolist())
        self.assertEqual(flat[len(stored):].tolist(), stored[:len(flat) - len(stored)].tolist())

    def test_corruption_detected(self):
        tmp = tempfile.mkdtemp()
        try:
            d = os.path.join(tmp, "c")
            shutil.copytree(self.ds.path, d)
            p = os.path.join(d, "train-00001.tokens")
            with open(p, "r+b") as f:
                f.seek(10)
                c = f.read(1)
                f.seek(10)
                f.write(bytes([c[0] ^ 1]))
            with self.assertRaisesRegex(sd.ShardError, "train-00001.tokens: checksum mismatch"):
                sd.ShardDir(d, verify=True)
        finally:
            shutil.rmtree(tmp)


class Recurrent(unittest.TestCase):
    def test_rows_continue(self):
        ds = sd.ShardDir(env("SLUICE_TEST_R"))
        docs = source_docs()
        B = ds.manifest["batch"]
        self.assertEqual(B, 3)
        rows = list(ds.rows())
        self.assertEqual(len(rows) % B, 0)
        cont = 0
        for r in range(B, len(rows)):
            prev = rows[r - B][1]
            b = rows[r][1]
            if len(prev) and prev.doc_offsets[-1] + prev.lengths[-1] < len(docs[prev.docs[-1]][1]) + 1:
                self.assertTrue(b.continues)  # same batch row, next step
                self.assertEqual(int(b.docs[0]), int(prev.docs[-1]))
                self.assertEqual(int(b.doc_offsets[0]), int(prev.doc_offsets[-1] + prev.lengths[-1]))
                cont += 1
            else:
                self.assertFalse(b.continues)
        self.assertGreater(cont, 10)
        got = ds.documents()
        for ordinal, toks in got.items():
            self.assertEqual(toks.tolist(), docs[ordinal][1] + [EOS])


class Megatron(unittest.TestCase):
    def test_export_layout(self):
        """Re-reads the export following megatron-core's documented layout."""
        prefix = env("SLUICE_TEST_M")
        with open(prefix + ".idx", "rb") as f:
            idx = f.read()
        self.assertEqual(idx[:9], b"MMIDIDX\x00\x00")
        version, code, S, D = struct.unpack("<QBQQ", idx[9:34])
        self.assertEqual((version, code), (1, 8))
        sizes = np.frombuffer(idx, "<i4", S, 34)
        ptrs = np.frombuffer(idx, "<i8", S, 34 + 4 * S)
        doc_idx = np.frombuffer(idx, "<i8", D, 34 + 12 * S)
        self.assertEqual(len(idx), 34 + 12 * S + 8 * D)
        self.assertEqual(doc_idx.tolist(), list(range(S + 1)))
        self.assertEqual(ptrs.tolist(), (np.concatenate([[0], np.cumsum(sizes)[:-1]]) * 2).tolist())
        tokens = np.fromfile(prefix + ".bin", "<u2")
        want = [d + [EOS] for _, d in source_docs() if d]  # empty documents dropped
        self.assertEqual(S, len(want))
        for i, w in enumerate(want):
            p = ptrs[i] // 2
            self.assertEqual(tokens[p:p + sizes[i]].tolist(), w)


if __name__ == "__main__":
    unittest.main(verbosity=1)

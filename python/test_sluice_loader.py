"""Tests of the training-loop side of python/sluice_data.py (ShardIterable,
ShardDataset, state_dict, epoch order, val, documents.idx) against shards
written by the sluice binary; tests/cli/pyreader_loop.sh prepares them:

  SLUICE_TEST_DOCS  the source documents ({"id","label","source","ids"}), EOS = 1
  SLUICE_TEST_W     --warmup double:16..64,epochs=1,batch=24, --val-fraction 0.2,
                    --shuffle, 3 KiB files
  SLUICE_TEST_LIN   --warmup linear:24..64,steps=40,tps=256 (open-ended last stage)
  SLUICE_TEST_R     --layout recurrent --batch 6 --seq-len 32
  SLUICE_TEST_TINY  200000 one-token documents at --seq-len 64
  SLUICE_TEST_TMP   scratch directory

Expected values are re-derived independently of the reader: token files are
read here with plain numpy, the epoch permutation is re-implemented from the
text of docs/shards.md ("Epoch order"), stage positions from section 3, and
documents.idx is re-derived here from documents.jsonl following the spec."""
import json
import os
import pickle
import shutil
import subprocess
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sluice_data as sd  # noqa: E402

EOS = 1
M64 = (1 << 64) - 1


def env(name):
    v = os.environ.get(name)
    if not v:
        raise SystemExit("%s is not set: run tests/cli/pyreader_loop.sh" % name)
    return v


def source_docs():
    with open(env("SLUICE_TEST_DOCS")) as f:
        return [json.loads(line) for line in f]


# --- independent re-derivations ---------------------------------------------------
def spec_permutation(n, seed, epoch):
    """docs/shards.md "Epoch order", vectorised over all of [0, n)."""
    def mix(z):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))

    with np.errstate(over="ignore"):
        bits = max(2, int(n - 1).bit_length())
        bits += bits % 2
        h = bits // 2
        mask = np.uint64((1 << h) - 1)
        state = np.uint64(seed & M64) ^ mix(np.array([epoch + 1], dtype=np.uint64))[0]
        keys = []
        for _ in range(6):
            state = np.uint64((int(state) + 0x9E3779B97F4A7C15) & M64)
            keys.append(mix(np.array([state], dtype=np.uint64))[0])
        x = np.arange(n, dtype=np.uint64)
        todo = np.ones(n, dtype=bool)
        while todo.any():
            v = x[todo]
            left, right = v >> np.uint64(h), v & mask
            for k in keys:
                left, right = right, left ^ (mix(right ^ k) & mask)
            v = (left << np.uint64(h)) | right
            x[todo] = v
            todo[todo] = v >= np.uint64(n)
    return x.astype(np.int64)


def slurp(path):
    with open(path, "rb") as f:
        return f.read()


def spit(path, data):
    with open(path, "wb") as f:
        f.write(data)


def read_json(path):
    with open(path) as f:
        return json.load(f)


def stored_rows(path, split):
    """The split's stored rows read with plain numpy (rows, seq_len)."""
    m = read_json(os.path.join(path, "manifest.json"))
    dt = {"uint16": "<u2", "uint32": "<u4"}[m["dtype"]]
    parts = [np.fromfile(os.path.join(path, f["tokens"]), dt) for f in m["splits"][split]["files"]]
    return np.concatenate(parts).reshape(-1, m["seq_len"]), m


def sequence(rows, seed, epochs):
    """The train sequence over `epochs` data epochs: epoch e = the stored rows
    in the order of its permutation (identity without a seed)."""
    out = []
    for e in range(epochs):
        order = np.arange(len(rows)) if seed is None else spec_permutation(len(rows), seed, e)
        out.append(rows[order].reshape(-1))
    return np.concatenate(out)


def spec_steps(m, total):
    """(stage, seq_len, batch, start token) of steps 0..total-1 per section 3
    (after the listed stages the last stage goes on)."""
    out = []
    for st in m["stages"]:
        n = st["steps"] if st["steps"] is not None else total
        for k in range(n):
            out.append((len(out), st["seq_len"], st["batch"], st["start_token"] + k * st["batch"] * st["seq_len"]))
            if len(out) == total:
                return out
    while len(out) < total:
        s = out[-1]
        out.append((len(out), s[1], s[2], s[3] + s[1] * s[2]))
    return out


def collect(it):
    return [(x["step"], x["rows"].tolist(), x["tokens"], x["bounds"]) for x in it]


def strip_index(path):
    """Makes a directory look as written before documents.idx existed."""
    mp = os.path.join(path, "manifest.json")
    m = read_json(mp)
    if m["documents"].pop("index", None) is not None:
        os.remove(os.path.join(path, "documents.idx"))
    m["documents"].pop("index_xxh64", None)
    with open(mp, "w") as f:
        json.dump(m, f)


def spec_index(data):
    """documents.idx from documents.jsonl by the spec: uint64 LE, count+1
    entries, entry k = offset of line k, the last = the file size."""
    offs = [0]
    for line in data.splitlines(keepends=True):
        offs.append(offs[-1] + len(line))
    return np.asarray(offs, dtype="<u8").tobytes()


class Permutation(unittest.TestCase):
    def test_bijection_and_spec(self):
        for n in (1, 2, 3, 4, 5, 17, 64, 1000, 4099):
            for seed, epoch in ((0, 0), (7, 3), (M64, 1)):
                p = sd.EpochPermutation(n, seed, epoch).array()
                self.assertEqual(sorted(p.tolist()), list(range(n)))
                self.assertEqual(p.tolist(), spec_permutation(n, seed, epoch).tolist())
        a = sd.EpochPermutation(1000, 5, 0).array()
        self.assertNotEqual(a.tolist(), sd.EpochPermutation(1000, 5, 1).array().tolist())
        self.assertNotEqual(a.tolist(), sd.EpochPermutation(1000, 6, 0).array().tolist())
        # not close to the identity: few fixed points
        self.assertLess(int(np.sum(a == np.arange(1000))), 20)


class Warmup(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.path = env("SLUICE_TEST_W")
        cls.shards = sd.ShardDir(cls.path)
        cls.rows, cls.m = stored_rows(cls.path, "train")
        cls.docs = source_docs()
        cls.total = sum(s["steps"] for s in cls.m["stages"])
        cls.ref = {}
        for seed in (None, 11):
            cls.ref[seed] = collect(sd.ShardIterable(cls.shards, seed=seed))

    def test_steps_match_spec(self):
        """Every row of every step equals the spec's tokens of the sequence,
        which every data epoch takes in its own order under a seed."""
        self.assertEqual([s["batch"] for s in self.m["stages"]], [96, 48, 24])
        for seed, ref in self.ref.items():
            self.assertEqual(len(ref), self.total)
            end = max(t + b * l for _, l, b, t in spec_steps(self.m, self.total))
            G = sequence(self.rows, seed, end // self.rows.size + 1)
            for (k, js, toks, _), (k2, l, b, t) in zip(ref, spec_steps(self.m, self.total)):
                self.assertEqual((k, js, toks.shape), (k2, list(range(b)), (b, l)))
                self.assertEqual(toks.tolist(), G[t:t + b * l].reshape(b, l).tolist(), (seed, k))

    def test_boundaries_are_document_pieces(self):
        pad = self.m["special"]["pad"]
        for k, _, toks, bounds in self.ref[11][::5]:
            x = sd.ShardDataset(self.path, seed=11)[k]
            self.assertEqual(x["seq_idx"].dtype, np.int32)
            self.assertEqual(x["seq_idx"].tolist(), [sd.seq_idx(b, toks.shape[1]).tolist() for b in bounds])
            self.assertEqual(x["position_ids"].tolist(), [sd.position_ids(b, toks.shape[1]).tolist() for b in bounds])
            for row, b in zip(toks, bounds):
                covered = np.zeros(len(row), bool)
                for o, n, d, do in zip(b.offsets.tolist(), b.lengths.tolist(), b.docs.tolist(),
                                       b.doc_offsets.tolist()):
                    self.assertEqual(row[o:o + n].tolist(), (self.docs[d]["ids"] + [EOS])[do:do + n])
                    covered[o:o + n] = True
                self.assertTrue(np.all(row[~covered] == pad))

    def test_epochs(self):
        """Under a seed each data epoch reads every stored row exactly once,
        in an order that differs between epochs; without one, stored order."""
        D = self.rows.size
        L = self.m["seq_len"]
        for seed, ref in self.ref.items():
            flat = np.concatenate([toks.reshape(-1) for _, _, toks, _ in ref])  # steps tile the sequence
            epochs = len(flat) // D
            self.assertGreaterEqual(epochs, 2)
            key = sorted(r.tobytes() for r in self.rows)
            orders = []
            for e in range(epochs):
                blk = flat[e * D:(e + 1) * D].reshape(-1, L).astype(self.rows.dtype)
                self.assertEqual(sorted(r.tobytes() for r in blk), key)
                orders.append(blk.tobytes())
            if seed is None:
                self.assertTrue(all(o == self.rows.tobytes() for o in orders))
            else:
                self.assertEqual(len(set(orders)), epochs)
                self.assertNotEqual(orders[0], self.rows.tobytes())

    def test_consumers_exactly_once(self):
        """World sizes 1, 2, 3, 8 x workers 0 and 2: every row of every step
        goes to exactly one consumer, with the tokens of the single-process
        run (the order does not depend on the world size), and DataLoader's
        round-robin over workers gives each rank its steps in order."""
        ref = {(k, j): toks[i] for k, js, toks, _ in self.ref[11] for i, j in enumerate(js)}
        for world in (1, 2, 3, 8):
            for workers in (0, 2):
                seen = {}
                for rank in range(world):
                    streams = []
                    for w in range(max(workers, 1)):
                        kw = {"worker_id": w, "num_workers": workers} if workers else {}
                        streams.append(collect(sd.ShardIterable(self.path, rank=rank, world_size=world, seed=11,
                                                                segments=False, **kw)))
                    merged = []  # DataLoader: items taken from the workers round-robin
                    for i in range(max(len(s) for s in streams)):
                        merged += [s[i] for s in streams if i < len(s)]
                    self.assertEqual([x[0] for x in merged], list(range(self.total)))
                    for k, js, toks, _ in merged:
                        self.assertEqual(js, list(range(rank, len(js) * world, world)))
                        for i, j in enumerate(js):
                            self.assertNotIn((k, j), seen)
                            seen[(k, j)] = rank
                            self.assertEqual(toks[i].tolist(), ref[(k, j)].tolist())
                self.assertEqual(set(seen), set(ref), (world, workers))

    def test_resume(self):
        """Resuming at step k (state saved by another reader, other world
        sizes and workers) gives exactly the uninterrupted run's steps from k,
        reading only the rows it returns (no iteration to get there)."""
        st = self.m["stages"]
        b1, b2 = st[0]["steps"], st[0]["steps"] + st[1]["steps"]
        ref = self.ref[11]
        reads = []
        orig = sd._Split.read

        def counting(self_, chunks):
            reads.append(len(chunks))
            return orig(self_, chunks)

        for k in (0, 1, b1 - 1, b1, b1 + 1, b2 - 1, b2, self.total - 1, self.total):
            state = sd.ShardIterable(self.path, seed=11).state_dict(k)
            for world, workers in ((1, 0), (2, 2), (3, 0)):
                got = {}
                for rank in range(world):
                    for w in range(max(workers, 1)):
                        kw = {"worker_id": w, "num_workers": workers} if workers else {}
                        it = sd.ShardIterable(self.path, rank=rank, world_size=world, seed=11, **kw)
                        it.load_state_dict(state)
                        stream = iter(it)
                        sd._Split.read = counting
                        try:
                            del reads[:]
                            first = next(stream, None)
                        finally:
                            sd._Split.read = orig
                        if first is not None:
                            self.assertEqual(first["step"], k + w)
                            self.assertEqual(len(reads), len(first["rows"]))
                        for x in ([first] + list(stream)) if first is not None else []:
                            for i, j in enumerate(x["rows"].tolist()):
                                got[(x["step"], j)] = x["tokens"][i].tolist()
                want = {(s, j): toks[j].tolist() for s, js, toks, _ in ref[k:] for j in js}
                self.assertEqual(got, want, (k, world, workers))

    def test_state_dict(self):
        it = sd.ShardIterable(self.path, seed=11, segments=False)
        for i, x in enumerate(it):
            if i == 4:
                break
        self.assertEqual(it.state_dict()["step"], 5)
        with self.assertRaisesRegex(ValueError, "seed"):
            sd.ShardIterable(self.path, seed=12).load_state_dict(it.state_dict())
        with self.assertRaisesRegex(ValueError, "split"):
            sd.ShardIterable(self.path, split="val").load_state_dict(it.state_dict())
        with self.assertRaisesRegex(ValueError, "out of range"):
            sd.ShardIterable(self.path, seed=11).load_state_dict(it.state_dict(self.total + 1))

    def test_map_style(self):
        ds = sd.ShardDataset(self.path, seed=11)
        self.assertEqual(len(ds), self.total)
        for k in (0, 7, len(ds) - 1):
            self.assertEqual(ds[k]["tokens"].tolist(), self.ref[11][k][2].tolist())
            self.assertEqual(ds[k]["bounds"], self.ref[11][k][3])
        self.assertEqual(ds[-1]["step"], self.total - 1)
        with self.assertRaises(IndexError):
            ds[len(ds)]
        rows = sd.ShardDataset(self.path, seed=11, unit="row")
        self.assertEqual(len(rows), sum(s["steps"] * s["batch"] for s in self.m["stages"]))
        flat = [(k, j) for k, js, _, _ in self.ref[11] for j in js]
        for g in (0, 95, 96, 1000, len(rows) - 1):
            x = rows[g]
            k, j = flat[g]
            self.assertEqual((x["step"], x["index"]), (k, j))
            self.assertEqual(x["tokens"].tolist(), self.ref[11][k][2][j].tolist())
            self.assertEqual(x["seq_idx"].tolist(), sd.seq_idx(x["bounds"], len(x["tokens"])).tolist())
        r = sd.ShardDataset(self.path, seed=11, rank=1, world_size=3)
        self.assertEqual(r[2]["tokens"].tolist(), self.ref[11][2][2][1::3].tolist())

    def test_uneven_world(self):
        with self.assertRaisesRegex(ValueError, "multiple of world_size 5"):
            sd.ShardIterable(self.path, world_size=5)
        parts = [sd.ShardDataset(self.path, rank=r, world_size=5, allow_uneven=True)[self.total - 1]
                 for r in range(5)]
        self.assertEqual([len(p["rows"]) for p in parts], [5, 5, 5, 5, 4])

    def test_val_without_warmup(self):
        """val: one pass over its own rows at seq_len, each row once, no stages."""
        vrows, _ = stored_rows(self.path, "val")
        for b in (None, 5):
            items = collect(sd.ShardIterable(self.path, split="val", batch=b))
            bsz = b or self.m["stages"][-1]["batch"]
            self.assertEqual(len(items), -(-len(vrows) // bsz))
            toks = np.concatenate([t for _, _, t, _ in items])
            self.assertEqual(toks.tolist(), vrows.tolist())
        with self.assertRaisesRegex(ValueError, "no seed"):
            sd.ShardIterable(self.path, split="val", seed=1)
        old = list(self.shards.batches("val"))
        self.assertEqual(np.concatenate([t for _, t, _ in old]).tolist(), vrows.tolist())
        self.assertTrue(all(s is None for s, _, _ in old))
        # two ranks share the rows, each exactly once
        a = collect(sd.ShardIterable(self.path, split="val", rank=0, world_size=2, batch=5))
        c = collect(sd.ShardIterable(self.path, split="val", rank=1, world_size=2, batch=5))
        self.assertEqual(sum(len(x[1]) for x in a + c), len(vrows))

    def test_pickle_is_small(self):
        it = sd.ShardIterable(self.path, seed=11, rank=1, world_size=2)
        it.load_state_dict(it.state_dict(9))
        blob = pickle.dumps(it)
        self.assertLess(len(blob), 20000)  # reopened by path, no token or index data
        back = pickle.loads(blob)
        self.assertEqual(next(iter(back))["tokens"].tolist(), it.step(9)["tokens"].tolist())


class Linear(unittest.TestCase):
    """Stage lengths that do not divide seq_len (rows cross stored rows and,
    with a seed, join rows that are not neighbours), an open-ended last stage."""

    def test_open_ended_and_resume(self):
        path = env("SLUICE_TEST_LIN")
        rows, m = stored_rows(path, "train")
        self.assertIsNone(m["stages"][-1]["steps"])
        with self.assertRaisesRegex(TypeError, "open-ended"):
            len(sd.ShardDataset(path))
        total = sum(s["steps"] for s in m["stages"][:-1]) + 30
        ref = collect(sd.ShardIterable(path, seed=3, steps=total, allow_uneven=True))
        self.assertEqual(len(ref), total)
        end = max(t + b * l for _, l, b, t in spec_steps(m, total))
        G = sequence(rows, 3, end // rows.size + 1)
        docs = source_docs()
        for (k, js, toks, bounds), (_, l, b, t) in zip(ref, spec_steps(m, total)):
            self.assertEqual(toks.tolist(), G[t:t + b * l].reshape(b, l).tolist())
            for row, bd in zip(toks, bounds):
                for o, n, d, do in zip(bd.offsets.tolist(), bd.lengths.tolist(), bd.docs.tolist(),
                                       bd.doc_offsets.tolist()):
                    self.assertEqual(row[o:o + n].tolist(), (docs[d]["ids"] + [EOS])[do:do + n])
        firsts = np.cumsum([0] + [s["steps"] for s in m["stages"][:-1]]).tolist()
        for k in sorted({f + d for f in firsts for d in (-1, 0, 1) if 0 <= f + d < total}):
            it = sd.ShardIterable(path, seed=3, steps=total, rank=1, world_size=3, allow_uneven=True)
            it.load_state_dict({**it.state_dict(k)})
            got = [(x["step"], x["tokens"].tolist()) for x in it]
            want = [(s, toks[1::3].tolist()) for s, _, toks, _ in ref[k:]]
            self.assertEqual(got, want, k)
        # an endless iterable goes on past the listed stages
        it = iter(sd.ShardIterable(path, seed=3, allow_uneven=True, segments=False))
        for _ in range(total):
            x = next(it)
        self.assertEqual(x["tokens"].tolist(), ref[-1][2].tolist())


class Recurrent(unittest.TestCase):
    def test_slots_per_rank(self):
        path = env("SLUICE_TEST_R")
        with self.assertRaisesRegex(ValueError, "recurrent"):
            sd.ShardIterable(path, seed=1)
        docs = source_docs()
        for world in (1, 2, 3):
            for rank in range(world):
                items = collect(sd.ShardIterable(path, rank=rank, world_size=world))
                cont = 0
                for (_, js, _, prev), (_, _, _, cur) in zip(items, items[1:]):
                    for p, c in zip(prev, cur):  # batch row j of step t+1 continues row j of step t
                        if not len(p):
                            continue
                        d, end = int(p.docs[-1]), int(p.doc_offsets[-1] + p.lengths[-1])
                        if end < len(docs[d]["ids"]) + 1:
                            self.assertTrue(c.continues)
                            self.assertEqual((int(c.docs[0]), int(c.doc_offsets[0])), (d, end))
                            cont += 1
                self.assertGreater(cont, 10)


class Documents(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = os.path.join(env("SLUICE_TEST_TMP"), "docs-tests")
        os.makedirs(cls.tmp, exist_ok=True)
        cls.docs = source_docs()

    def copy(self, name):
        d = os.path.join(self.tmp, name)
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(env("SLUICE_TEST_W"), d)
        return d

    def test_index_and_meta(self):
        d = self.copy("meta")
        # the writer's index is the spec's index of its documents.jsonl
        jsonl = slurp(os.path.join(d, "documents.jsonl"))
        self.assertEqual(slurp(os.path.join(d, "documents.idx")), spec_index(jsonl))
        self.assertEqual(read_json(os.path.join(d, "manifest.json"))["documents"]["index"], "documents.idx")
        ds = sd.ShardDir(d, verify=True)
        self.assertIsNotNone(ds.documents_index.index_path)
        self.assertEqual(ds.num_documents, len(self.docs))
        for k in list(range(len(self.docs))) + [0, 399, 5]:
            self.assertEqual(ds.doc_id(k), self.docs[k]["id"])
            meta = ds.doc_meta(k)
            self.assertEqual((meta["label"], meta["source"]), (self.docs[k]["label"], self.docs[k]["source"]))
        with self.assertRaises(KeyError):
            ds.doc_id(len(self.docs))
        # a wrong-size index and a wrong entry are errors
        ip = os.path.join(d, "documents.idx")
        good = slurp(ip)
        spit(ip, good[:-8])
        with self.assertRaisesRegex(sd.ShardError, "documents.idx: .*count\\+1"):
            sd.ShardDir(d)
        bad = bytearray(good)
        bad[8 * 3:8 * 5] = good[8 * 4:8 * 6]  # line 3 -> the bytes of line 4
        spit(ip, bytes(bad))
        with self.assertRaisesRegex(sd.ShardError, "entry 3 points at the line of document 4"):
            sd.ShardDir(d).doc_id(3)

    def test_without_index(self):
        """Older directories: offsets from one pass; lines missing for some
        ordinals (documents without pieces) are found by ordinal."""
        d = self.copy("old")
        strip_index(d)
        ds = sd.ShardDir(d)
        self.assertIsNone(ds.documents_index.index_path)
        jp = os.path.join(d, "documents.jsonl")
        lines = slurp(jp).splitlines(keepends=True)
        meta = {json.loads(ln)["doc"]: json.loads(ln).get("meta", {}) for ln in lines}
        for k in range(len(self.docs)):
            self.assertEqual(ds.doc_id(k), self.docs[k]["id"])
            self.assertEqual(ds.doc_meta(k), meta[k])
        keep = [ln for ln in lines if json.loads(ln)["doc"] % 3 != 1]
        spit(jp, b"".join(keep)[:-1])  # and no final newline
        ds = sd.ShardDir(d)
        for k in range(len(self.docs) + 2):
            if k % 3 == 1 or k >= len(self.docs):
                with self.assertRaises(KeyError):
                    ds.doc_id(k)
            else:
                self.assertEqual(ds.doc_id(k), self.docs[k]["id"])


RSS_PROBE = r"""
import json, os, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import sluice_data as sd
mode, path = sys.argv[2], sys.argv[3]


def status_kib(key):
    # VmRSS: resident now; VmHWM: its peak in this process (resource.getrusage's
    # ru_maxrss would also count the parent's peak, which Linux carries over
    # exec); RssAnon: the private part (VmRSS also counts pages of the mapped
    # files that were touched, page cache the kernel reads around each access).
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])


with open("/proc/self/clear_refs", "w") as f:  # resets VmHWM to VmRSS (Linux >= 4.0)
    f.write("5")
base, anon = status_kib("VmRSS"), status_kib("RssAnon")
if mode == "dict":  # what the previous reader kept: a dict of every id
    held = {}
    with open(os.path.join(path, "documents.jsonl"), "rb") as f:
        for line in f:
            d = json.loads(line)
            held[int(d["doc"])] = d["id"]
else:
    ds = sd.ShardDir(path)
    n = ds.num_documents
    got = [ds.doc_id(k) for k in (0, 1, n // 2, n - 1)]
    step = sd.ShardIterable(ds).step(0)
print(json.dumps({"now": status_kib("VmRSS") - base, "peak": status_kib("VmHWM") - base,
                  "anon": status_kib("RssAnon") - anon}))
"""


class Memory(unittest.TestCase):
    def test_rss_does_not_grow_like_a_dict(self):
        src = env("SLUICE_TEST_TINY")
        n = read_json(os.path.join(src, "manifest.json"))["documents"]["count"]
        self.assertEqual(n, 200000)
        self.assertTrue(os.path.exists("/proc/self/status"), "the probe reads /proc/self/status (Linux)")
        idx = src
        self.assertTrue(os.path.exists(os.path.join(idx, "documents.idx")))
        old = os.path.join(env("SLUICE_TEST_TMP"), "tiny-old")
        if not os.path.exists(old):
            shutil.copytree(src, old)
            strip_index(old)
        src = old

        def probe(mode, path):
            out = subprocess.run([sys.executable, "-c", RSS_PROBE, os.path.dirname(os.path.abspath(__file__)),
                                  mode, path], check=True, capture_output=True, text=True).stdout
            r = json.loads(out)
            return max(r["now"], r["peak"]), r["anon"]

        (dict_kib, dict_anon), (scan_kib, scan_anon), (idx_kib, idx_anon) = \
            probe("dict", src), probe("open", src), probe("open", idx)
        print("\nopening 200000 documents, RSS growth (peak; private after): dict of ids %d; %d KiB, "
              "without documents.idx %d; %d KiB, with it %d; %d KiB"
              % (dict_kib, dict_anon, scan_kib, scan_anon, idx_kib, idx_anon), file=sys.stderr)
        self.assertGreater(dict_anon, 20000)  # the probe sees what a dict costs (> 100 B per document)
        self.assertLess(idx_anon, 1024)  # index path: nothing per document
        self.assertLess(scan_anon, 1024 + 10 * n // 1024)  # only the 8-byte offsets
        # The peak VmRSS also counts pages of the mapped files the kernel read
        # around each of the O(log n) places touched (page cache, shared and
        # reclaimable; its size depends on the device's read-ahead), so the
        # bounds above are on private memory; the peak is printed for the record.


if __name__ == "__main__":
    unittest.main(verbosity=1)

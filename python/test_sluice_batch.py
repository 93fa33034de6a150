"""The batch is a load-time choice: python/sluice_data.py
takes batch_size / rank / world_size and forms the global steps itself;
tests/cli/pyreader_batch.sh prepares the shards:

  SLUICE_TEST_S  --seq-len 64, no --warmup (the README form: 1 row per step)
  SLUICE_TEST_W  --warmup double:16..64,epochs=1,batch=24
  SLUICE_TEST_R  --layout recurrent --batch 6 --seq-len 32

Expected rows are read here with plain numpy from the token files (the data
is one sequence of stored rows, docs/shards.md section 3), not through the
reader."""
import json
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sluice_data as sd  # noqa: E402


def env(name):
    v = os.environ.get(name)
    if not v:
        raise SystemExit("%s is not set: run tests/cli/pyreader_batch.sh" % name)
    return v


def sequence(path):
    """The train split's stored tokens as one array, from the files alone."""
    m = json.load(open(os.path.join(path, "manifest.json")))
    dt = np.uint16 if m["dtype"] == "uint16" else np.uint32
    files = m["splits"]["train"]["files"]
    return np.concatenate([np.fromfile(os.path.join(path, f["tokens"]), dtype=dt) for f in files]).astype(np.int64)


def collect(path, world, **kw):
    """{step: rows of the step in order} over all ranks."""
    steps = {}
    for rank in range(world):
        for it in sd.ShardIterable(path, rank=rank, world_size=world, segments=False, **kw):
            for j, row in zip(it["rows"].tolist(), it["tokens"]):
                steps.setdefault(it["step"], {})[j] = row
    return {k: np.stack([v[j] for j in sorted(v)]) for k, v in steps.items()}


class NoWarmup(unittest.TestCase):
    """Sharded without --warmup: any world size that divides batch_size."""

    def setUp(self):
        self.path = env("SLUICE_TEST_S")
        self.seq = sequence(self.path)
        self.L = 64

    def test_world_without_batch_size_says_what_to_do(self):
        with self.assertRaisesRegex(ValueError, r"1 rows per step.*world_size 2.*batch_size=2"):
            sd.ShardIterable(self.path, rank=0, world_size=2)

    def test_any_world_dividing_the_batch(self):
        D = len(self.seq)
        for bs, world in ((4, 2), (6, 3), (8, 8), (5, 1), (12, 4)):
            got = collect(self.path, world, batch_size=bs)
            rows = D // self.L
            self.assertEqual(len(got), -(-rows // bs), (bs, world))
            for k, toks in got.items():
                self.assertEqual(toks.shape, (bs, self.L))
                for j in range(bs):
                    t = ((k * bs + j) * self.L) % D  # the last step wraps to the start
                    want = np.concatenate([self.seq, self.seq])[t:t + self.L]
                    self.assertTrue(np.array_equal(toks[j], want), (bs, world, k, j))

    def test_not_dividing(self):
        with self.assertRaisesRegex(ValueError, r"6 rows per step.*world_size 4"):
            sd.ShardIterable(self.path, rank=0, world_size=4, batch_size=6)
        uneven = [sd.ShardIterable(self.path, rank=r, world_size=4, batch_size=6, allow_uneven=True).step(0)
                  for r in range(4)]
        self.assertEqual([len(u["rows"]) for u in uneven], [2, 2, 1, 1])

    def test_resume_across_batch_sizes(self):
        a = sd.ShardIterable(self.path, batch_size=4)
        state = a.state_dict(6)  # token 6*4*64
        b = sd.ShardIterable(self.path, batch_size=8, rank=1, world_size=2)
        b.load_state_dict(state)
        self.assertEqual(next(iter(b))["step"], 3)
        c = sd.ShardIterable(self.path, batch_size=16)
        with self.assertRaisesRegex(ValueError, "no step of batch_size 16"):
            c.load_state_dict(state)


class Warmup(unittest.TestCase):
    """A doubling warmup keeps its tokens per step for any batch_size; each
    stage covers the tokens the manifest gives it."""

    def setUp(self):
        self.path = env("SLUICE_TEST_W")
        self.seq = sequence(self.path)
        self.stages = json.load(open(os.path.join(self.path, "manifest.json")))["stages"]

    def test_budget_and_positions(self):
        D = len(self.seq)
        seq3 = np.concatenate([self.seq] * 4)
        for bs, world in ((8, 2), (24, 3), (40, 4)):
            r = sd.ShardIterable(self.path, batch_size=bs, world_size=world, rank=0)
            got = collect(self.path, world, batch_size=bs)
            start, k0 = 0, 0
            for st in self.stages:
                l = st["seq_len"]
                b = bs * 64 // l  # the manifest's tokens per step, scaled: bs rows of 64
                n = -(-st["steps"] * st["tokens_per_step"] // (b * l))
                for k in range(k0, k0 + n):
                    toks = got[k]
                    self.assertEqual(toks.shape, (b, l), (bs, k))
                    for j in range(b):
                        t = start + ((k - k0) * b + j) * l
                        self.assertTrue(np.array_equal(toks[j], seq3[t % D:t % D + l]), (bs, k, j))
                start += n * b * l
                k0 += n
            self.assertEqual(r.total_steps, k0)
            self.assertEqual(len(got), k0)

    def test_default_is_the_manifest(self):
        a = sd.ShardIterable(self.path, segments=False)
        b = sd.ShardIterable(self.path, segments=False, batch_size=self.stages[-1]["batch"])
        self.assertEqual(a.total_steps, b.total_steps)
        for x, y in zip(a, b):
            self.assertTrue(np.array_equal(x["tokens"], y["tokens"]))


class Recurrent(unittest.TestCase):
    def test_batch_fixed_when_sharding(self):
        path = env("SLUICE_TEST_R")
        sd.ShardIterable(path, batch_size=6, rank=1, world_size=3)
        with self.assertRaisesRegex(ValueError, "recurrent layout has its batch fixed when sharding"):
            sd.ShardIterable(path, batch_size=12)


if __name__ == "__main__":
    unittest.main(verbosity=1)

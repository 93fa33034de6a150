"""python/sluice_data.py under a real torch.utils.data.DataLoader (Debian's
python3-torch, scripts/install-deps); tests/cli/pyreader_torch.sh prepares the
shards (the same SLUICE_TEST_W as tests/cli/pyreader_loop.sh).

The reference is the reader's own single-process order, which
python/test_sluice_loader.py checks against the spec; here the questions are
what DataLoader does with it: worker processes (fork and spawn), the order
in which it hands over their items, resuming, and the training loop of
docs/shards.md section 6.2 running as written."""
import os
import subprocess
import sys
import unittest

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sluice_data as sd  # noqa: E402

PATH = os.environ.get("SLUICE_TEST_W")
if not PATH:
    raise SystemExit("SLUICE_TEST_W is not set: run tests/cli/pyreader_torch.sh")


def reference(seed=11):
    ds = sd.ShardDataset(PATH, seed=seed, segments=False)
    return [ds[k]["tokens"] for k in range(len(ds))]


class Loader(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ref = reference()
        cls.total = len(cls.ref)

    def run_loader(self, world, workers, start=0, context=None):
        got = {}
        for rank in range(world):
            data = sd.ShardIterable(PATH, rank=rank, world_size=world, seed=11)
            data.load_state_dict(data.state_dict(start))
            kw = {"multiprocessing_context": context} if context and workers else {}
            steps = []
            for b in DataLoader(data, batch_size=None, num_workers=workers, **kw):
                self.assertIsInstance(b["tokens"], torch.Tensor)
                self.assertEqual(b["tokens"].dtype, torch.int64)
                self.assertEqual(b["seq_idx"].dtype, torch.int32)
                steps.append(b["step"])
                for i, j in enumerate(b["rows"].tolist()):
                    self.assertNotIn((b["step"], j), got)
                    got[(b["step"], j)] = b["tokens"][i].numpy()
            self.assertEqual(steps, list(range(start, self.total)), (world, workers, rank))
        want = {(k, j) for k in range(start, self.total) for j in range(len(self.ref[k]))}
        self.assertEqual(set(got), want)
        for (k, j), row in got.items():
            self.assertTrue(np.array_equal(row, self.ref[k][j]))

    def test_workers_and_ranks(self):
        for world, workers in ((1, 0), (1, 2), (3, 2), (8, 2)):
            self.run_loader(world, workers)

    def test_resume_across_stages(self):
        st = sd.ShardDir(PATH).stages
        for k in (st[0]["steps"] - 1, st[0]["steps"], st[0]["steps"] + st[1]["steps"] + 1):
            self.run_loader(2, 2, start=k)

    def test_spawn(self):
        """Workers started with spawn get the reader pickled: it reopens the
        directory by path instead of copying mapped files."""
        self.run_loader(1, 2, start=5, context="spawn")

    def test_map_style_sampler(self):
        ds = sd.ShardDataset(PATH, seed=11, rank=1, world_size=2)
        k0 = 7
        out = list(DataLoader(ds, batch_size=None, sampler=range(k0, len(ds)), num_workers=2))
        self.assertEqual([b["step"] for b in out], list(range(k0, len(ds))))
        for b in out:
            self.assertTrue(np.array_equal(b["tokens"].numpy(), self.ref[b["step"]][1::2]))

    def test_state_after_iterating(self):
        """state_dict() without a step says where training stands:
        iterated directly, through DataLoader without workers, and
        through loader() with workers (fork and spawn); a plain DataLoader
        with workers, whose progress this process cannot see, raises instead
        of restarting at step 0."""
        for how in ("direct", "plain0", "loader2", "loader2spawn", "loader0"):
            data = sd.ShardIterable(PATH, rank=1, world_size=2, seed=11)
            data.load_state_dict(data.state_dict(3))
            if how == "direct":
                it = iter(data)
            elif how == "plain0":
                it = iter(DataLoader(data, batch_size=None, num_workers=0))
            elif how == "loader0":
                it = iter(data.loader())
            else:
                kw = {"multiprocessing_context": "spawn"} if how.endswith("spawn") else {}
                loader = data.loader(num_workers=2, **kw)
                it = iter(loader)
            steps = [next(it)["step"] for _ in range(5)]
            self.assertEqual(steps, [3, 4, 5, 6, 7], how)
            self.assertEqual(data.state_dict()["step"], 8, how)
            if how.startswith("loader2"):
                self.assertEqual(loader.state_dict()["step"], 8)
                self.assertEqual(loader.state_dict(20)["step"], 20)
            self.assertEqual(data.state_dict(5)["step"], 5, how)  # an explicit step still counts
            again = sd.ShardIterable(PATH, rank=1, world_size=2, seed=11)
            again.load_state_dict(data.state_dict())
            self.assertEqual(next(iter(again))["step"], 8, how)
            del it
        data = sd.ShardIterable(PATH, rank=0, world_size=1, seed=11)
        it = iter(DataLoader(data, batch_size=None, num_workers=2))
        for _ in range(5):
            next(it)
        with self.assertRaisesRegex(RuntimeError, r"loader\(num_workers=...\)|state_dict\(step \+ 1\)"):
            data.state_dict()
        self.assertEqual(data.state_dict(5)["step"], 5)
        del it

    def test_torch_stays_optional(self):
        """sluice_data never imports torch; a ShardIterable made before torch
        is imported is a plain iterable, one made after is a torch dataset."""
        code = ("import sys; sys.path.insert(0, %r); import sluice_data as sd; assert 'torch' not in sys.modules; "
                "a = sd.ShardIterable(%r); import torch.utils.data as tud; b = sd.ShardIterable(%r); "
                "print(isinstance(a, tud.IterableDataset), isinstance(b, tud.IterableDataset), "
                "isinstance(b, sd.ShardIterable))") % (os.path.dirname(os.path.abspath(__file__)), PATH, PATH)
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
        self.assertEqual(out.split(), ["False", "True", "True"])

    def test_docs_training_loop(self):
        """docs/shards.md 6.2 with a tiny model: loss decreases, the checkpoint
        resumes at the next step."""
        torch.manual_seed(0)
        torch.set_num_threads(1)

        class Tiny(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = torch.nn.Embedding(9100, 8)
                self.pos = torch.nn.Embedding(64, 8)
                self.out = torch.nn.Linear(8, 128)  # predicts token % 128: small and still learnable

            def forward(self, x, position_ids, seq_idx):
                return self.out(self.emb(x) + self.pos(position_ids) + 0 * seq_idx[..., None])

        model = Tiny()
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        train = sd.ShardIterable(PATH, rank=0, world_size=1, seed=1)
        loader = train.loader(num_workers=2)
        losses, ckpt = [], None
        for batch in loader:
            step = batch["step"]
            x, seq_idx, pos = batch["tokens"], batch["seq_idx"], batch["position_ids"]
            logits = model(x[:, :-1], position_ids=pos[:, :-1], seq_idx=seq_idx[:, :-1])
            y = (x[:, 1:] % 128).masked_fill(seq_idx[:, 1:] != seq_idx[:, :-1], -100)
            loss = F.cross_entropy(logits.flatten(0, 1), y.flatten(), ignore_index=-100)
            loss.backward()
            opt.step()
            opt.zero_grad()
            losses.append(float(loss))
            if step == 9:
                ckpt = {"data": train.state_dict()}
                self.assertEqual(ckpt["data"]["step"], step + 1)
            if step == 30:
                break
        self.assertLess(np.mean(losses[-5:]), np.mean(losses[:5]))
        again = sd.ShardIterable(PATH, rank=0, world_size=1, seed=1)
        again.load_state_dict(ckpt["data"])
        first = next(iter(DataLoader(again, batch_size=None, num_workers=2)))
        self.assertEqual(first["step"], 10)
        self.assertTrue(torch.equal(first["tokens"], torch.from_numpy(reference(1)[10])))


if __name__ == "__main__":
    unittest.main(verbosity=1)

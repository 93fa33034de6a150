"""`sluice mix` re-derived from its specification (docs/longctx.md section
1.1) and checked against the properties mixing promises (docs/shards.md). Run by
tests/cli/mix.sh with:
  SLUICE_TEST_MIX  a directory holding, per source NAME, NAME.jsonl (the ids
                   the source was tokenized from: {"id","ids",...}) and, per
                   run RUN, RUN.cat (`sluice cat` of the mixed stream),
                   RUN.json (its --report) and RUN.args (the mix options as
                   JSON: sources [[name, weight]], tokens, seed, max_epochs,
                   policy ["none"] | ["upsample", L, F] | ["target", bins])
  SLUICE_TEST_RUNS the run names
"""
import json
import math
import os
import unittest

M64 = (1 << 64) - 1
D = os.environ.get("SLUICE_TEST_MIX", "")


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return state, z ^ (z >> 31)


def unit_at(seed, k):
    """docs/formats.md "Random draws": draw k of seed s."""
    s = seed ^ ((k * 0xD1B54A32D192ED03) & M64)
    s, _ = splitmix64(s)
    s, z = splitmix64(s)
    return (z >> 11) * 2.0 ** -53


def load_source(name):
    docs = []
    with open(os.path.join(D, name + ".jsonl")) as f:
        for line in f:
            o = json.loads(line)
            docs.append((o["id"], o["ids"]))
    return docs


def derive(args, sources):
    """The output of `sluice mix` from the spec: [(source, id, ids)] in order,
    and per source (copies, rate, target)."""
    names = [n for n, _ in args["sources"]]
    weights = [float(w) for _, w in args["sources"]]
    W = 0.0
    for w in weights:
        W += w
    pol = args["policy"]
    out_seq, plan = [], {}
    for i, name in enumerate(names):
        docs = sources[name]
        n = [len(ids) for _, ids in docs]
        if pol[0] == "target":
            bins = pol[1]
            tot = 0.0
            for b in bins:
                tot += b["share"]
            shares = [b["share"] / tot for b in bins]
            mass = [0.0] * len(bins)

            def bin_of(x):
                for k, b in enumerate(bins):
                    if b["lo"] <= x < (b["hi"] if b["hi"] is not None else float("inf")):
                        return k
                return -1
            for x in n:
                k = bin_of(x)
                if k >= 0:
                    mass[k] += float(x)

            def f(x):
                if x == 0:
                    return 0.0
                k = bin_of(x)
                return 0.0 if k < 0 or shares[k] == 0 else shares[k] / mass[k]
        elif pol[0] == "upsample":
            L, F = pol[1], float(pol[2])

            def f(x):
                return 0.0 if x == 0 else (F if x >= L else 1.0)
        else:
            def f(x):
                return 0.0 if x == 0 else 1.0
        M = 0.0
        for x in n:
            M += f(x) * float(x)
        T = float(args["tokens"]) * (weights[i] / W)
        r = T / M
        order = sorted((j for j in range(len(n)) if f(n[j]) > 0), key=lambda j: (n[j], j))
        C = unit_at(args["seed"], i)
        copies = [0] * len(n)
        for j in order:
            e = r * f(n[j])
            copies[j] = int(math.floor(C + e) - math.floor(C))
            C = C + e
        plan[name] = (copies, r, T, [f(x) for x in n])
    # per-source output sequences (epochs), then the interleaving
    seqs = {}
    for name in names:
        copies = plan[name][0]
        seq = []
        for k in range(max(copies) if copies else 0):
            for j, (id_, ids) in enumerate(sources[name]):
                if copies[j] > k:
                    seq.append((name, id_ if k == 0 else "%s#%d" % (id_, k), ids))
        seqs[name] = seq
    pos = {nm: 0 for nm in names}
    emitted = {nm: 0 for nm in names}
    while True:
        best, bq = None, None
        for name in names:
            if pos[name] < len(seqs[name]):
                q = emitted[name] / plan[name][2]
                if best is None or q < bq:
                    best, bq = name, q
        if best is None:
            break
        item = seqs[best][pos[best]]
        pos[best] += 1
        emitted[best] += len(item[2])
        out_seq.append(item)
    return out_seq, plan


def read_run(run):
    with open(os.path.join(D, run + ".args")) as f:
        args = json.load(f)
    got = []
    with open(os.path.join(D, run + ".cat")) as f:
        for line in f:
            o = json.loads(line)  # `sluice cat`: id, ids, then the metadata fields
            got.append({"id": o["id"], "ids": o["ids"],
                        "meta": {k: v for k, v in o.items() if k not in ("id", "ids")}})
    with open(os.path.join(D, run + ".json")) as f:
        rep = json.load(f)
    return args, got, rep


@unittest.skipUnless(D, "run by tests/cli/mix.sh")
class Mix(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.runs = os.environ["SLUICE_TEST_RUNS"].split()
        cls.sources = {}
        for run in cls.runs:
            args, _, _ = read_run(run)
            for name, _ in args["sources"]:
                if name not in cls.sources:
                    cls.sources[name] = load_source(name)

    def test_rederived_output(self):
        """The same documents, in the same order, with the same ids and tokens
        and their source in the metadata."""
        for run in self.runs:
            args, got, _ = read_run(run)
            want, _ = derive(args, self.sources)
            self.assertEqual(len(got), len(want), run)
            for k, (o, (src, id_, ids)) in enumerate(zip(got, want)):
                self.assertEqual((o["id"], o["meta"]["source"]), (id_, src), "%s output %d" % (run, k))
                self.assertEqual(o["ids"], ids, "%s output %d" % (run, k))
                self.assertEqual(list(o["meta"])[0], "source")
                self.assertIn("lang", o["meta"])  # the input's other fields travel along

    def test_shares(self):
        """Achieved shares within 0.5% of the weights (budgets >= 10^6), and
        each source within its longest document of its target."""
        for run in self.runs:
            args, got, rep = read_run(run)
            if args["tokens"] < 10 ** 6:
                continue
            tok = {}
            for o in got:
                tok[o["meta"]["source"]] = tok.get(o["meta"]["source"], 0) + len(o["ids"])
            total = sum(tok.values())
            W = sum(w for _, w in args["sources"])
            for name, w in args["sources"]:
                share = tok.get(name, 0) / total
                self.assertLess(abs(share - w / W), 0.005, "%s %s: share %.5f vs %.5f" % (run, name, share, w / W))
                T = args["tokens"] * w / W
                longest = max(len(ids) for _, ids in self.sources[name])
                self.assertLess(abs(tok[name] - T), longest, "%s %s" % (run, name))
            # the report says the same
            self.assertEqual(rep["achieved_tokens"], total)
            for s in rep["sources"]:
                self.assertEqual(s["tokens"], tok[s["name"]])
                n_in = sum(len(ids) for _, ids in self.sources[s["name"]])
                self.assertEqual(s["tokens_in"], n_in)
                self.assertAlmostEqual(s["effective_epochs"], tok[s["name"]] / n_in, places=12)

    def test_upsampling_factor(self):
        """Documents >= L are taken FACTOR times as often as shorter ones of
        their source: copies counted in the output, per document."""
        checked = set()
        for run in self.runs:
            args, got, _ = read_run(run)
            if args["policy"][0] != "upsample":
                continue
            L, F = args["policy"][1], float(args["policy"][2])
            copies = {}
            for o in got:
                base = o["id"].split("#")[0]
                copies[base] = copies.get(base, 0) + 1
            for name, _ in args["sources"]:
                docs = self.sources[name]
                long_ = [id_ for id_, ids in docs if len(ids) >= L]
                short = [id_ for id_, ids in docs if 0 < len(ids) < L]
                cl = sum(copies.get(i, 0) for i in long_)
                cs = sum(copies.get(i, 0) for i in short)
                # independent of the code: the expected copies at the rate the
                # budget implies (tokens T = r * (short tokens + F * long tokens))
                W = sum(w for _, w in args["sources"])
                T = args["tokens"] * dict(args["sources"])[name] / W
                mass = sum(len(ids) for _, ids in docs if 0 < len(ids) < L) + F * sum(
                    len(ids) for _, ids in docs if len(ids) >= L)
                r = T / mass
                self.assertLess(abs(cl - r * F * len(long_)), 1.0 + 1e-9, "%s %s long" % (run, name))
                self.assertLess(abs(cs - r * len(short)), 1.0 + 1e-9, "%s %s short" % (run, name))
                # the achieved factor: inside the interval those bounds allow, and
                # within 5% of F where both classes get >= 50 copies
                factor = (cl / len(long_)) / (cs / len(short))
                lo = ((r * F * len(long_) - 1) / len(long_)) / ((r * len(short) + 1) / len(short))
                hi = ((r * F * len(long_) + 1) / len(long_)) / ((r * len(short) - 1) / len(short))
                self.assertTrue(lo <= factor <= hi, "%s %s: factor %.4f" % (run, name, factor))
                if r * len(short) >= 50 and r * F * len(long_) >= 50:
                    self.assertLess(abs(factor / F - 1), 0.05, "%s %s: factor %.4f" % (run, name, factor))
                    checked.add((run, name))
        self.assertGreaterEqual(len(checked), 3)  # web in up1, up2, up3

    def test_length_target(self):
        """With a length target each source's tokens fall into the bins by
        their shares (within one longest document per bin)."""
        for run in self.runs:
            args, got, _ = read_run(run)
            if args["policy"][0] != "target":
                continue
            bins = args["policy"][1]
            tot = sum(b["share"] for b in bins)
            for name, w in args["sources"]:
                per = [0] * len(bins)
                for o in got:
                    if o["meta"]["source"] != name:
                        continue
                    n = len(o["ids"])
                    for k, b in enumerate(bins):
                        if b["lo"] <= n < (b["hi"] if b["hi"] is not None else float("inf")):
                            per[k] += n
                W = sum(x for _, x in args["sources"])
                T = args["tokens"] * w / W
                longest = max(len(ids) for _, ids in self.sources[name])
                for k, b in enumerate(bins):
                    self.assertLess(abs(per[k] - T * b["share"] / tot), 2 * longest, "%s %s bin %d" % (run, name, k))

    def test_histograms(self):
        """The report's before/after histograms count the input and the output."""
        for run in self.runs:
            args, got, rep = read_run(run)
            for s in rep["sources"]:
                def hist(lengths):
                    h = {}
                    for n in lengths:
                        lo = 0 if n == 0 else 1 << (n.bit_length() - 1)
                        d, t = h.get(lo, (0, 0))
                        h[lo] = (d + 1, t + n)
                    return h
                before = hist(len(ids) for _, ids in self.sources[s["name"]])
                after = hist(len(o["ids"]) for o in got if o["meta"]["source"] == s["name"])
                self.assertEqual({b["lo"]: (b["documents"], b["tokens"]) for b in s["length_histogram_before"]}, before)
                self.assertEqual({b["lo"]: (b["documents"], b["tokens"]) for b in s["length_histogram_after"]}, after)
                for b in s["length_histogram_before"]:
                    self.assertEqual(b["hi"], 1 if b["lo"] == 0 else 2 * b["lo"])


if __name__ == "__main__":
    unittest.main(verbosity=1)

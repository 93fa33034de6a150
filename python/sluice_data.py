"""Read sluice shard directories (docs/shards.md) for training.

numpy only; torch is optional (``as_torch=True`` returns tensors).

    from sluice_data import ShardDir, cu_seqlens, seq_idx, position_ids
    ds = ShardDir("shards/")
    for step, (stage, tokens, bounds) in enumerate(ds.batches()):
        # tokens: (batch, seq_len) array of the stage; bounds: one Boundaries per row
        idx = np.stack([seq_idx(b, tokens.shape[1]) for b in bounds])   # Mamba-2 seq_idx
        ...

A stage is a *view* of the data stored at the longest length: the split's
tokens are one sequence, cut into rows of the stage length; stage i starts at
token ``start_token`` of the endlessly repeated sequence (a row that crosses
its end wraps to the start). The warmup therefore never changes which tokens
are seen or in what order.
"""

import json
import os

import numpy as np

FORMAT = "sluice-shards"
VERSION = 1

#: One piece of a document inside a row (the .bounds record layout).
BOUNDS_DTYPE = np.dtype(
    [("row", "<u8"), ("doc", "<u8"), ("doc_offset", "<u8"), ("offset", "<u4"), ("length", "<u4")]
)


class ShardError(Exception):
    """A shard directory that does not match docs/shards.md."""


class Boundaries:
    """The document pieces of one row: parallel arrays, sorted by offset.

    offsets/lengths: position and length of each piece in the row;
    docs: document ordinals (``ShardDir.doc_id`` gives the id);
    doc_offsets: offset of the piece within its document sequence, so
    ``doc_offsets == 0`` marks a document start and a first piece with a
    non-zero doc_offset continues a document from an earlier row."""

    __slots__ = ("offsets", "lengths", "docs", "doc_offsets")

    def __init__(self, offsets, lengths, docs, doc_offsets):
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.lengths = np.asarray(lengths, dtype=np.int64)
        self.docs = np.asarray(docs, dtype=np.uint64)
        self.doc_offsets = np.asarray(doc_offsets, dtype=np.uint64)

    @property
    def starts(self):
        """Row offsets where a document starts."""
        return self.offsets[self.doc_offsets == 0]

    @property
    def continues(self):
        """True when the row begins inside a document carried over from an
        earlier row (recurrent layout: reset no state at offset 0)."""
        return bool(len(self.offsets) and self.offsets[0] == 0 and self.doc_offsets[0] != 0)

    def __len__(self):
        return len(self.offsets)

    def __repr__(self):
        return "Boundaries(offsets=%s, lengths=%s, docs=%s, doc_offsets=%s)" % (
            self.offsets.tolist(), self.lengths.tolist(), self.docs.tolist(), self.doc_offsets.tolist())


def _segments(b, seq_len):
    """Segment edges of a row: every piece is a segment, and so is each run of
    padding between or after pieces."""
    edges = [0]
    for o, n in zip(b.offsets.tolist(), b.lengths.tolist()):
        if o > edges[-1]:
            edges.append(o)
        edges.append(o + n)
    if edges[-1] < seq_len:
        edges.append(seq_len)
    return np.asarray(edges, dtype=np.int32)


def cu_seqlens(b, seq_len):
    """FlashAttention-varlen cumulative lengths (int32, starts with 0, ends with
    seq_len): one sequence per piece, padding runs count as sequences."""
    return _segments(b, seq_len)


def seq_idx(b, seq_len):
    """Mamba-2 / causal-conv1d seq_idx (int32, one entry per token): the segment
    number of each token, so state is reset where it changes."""
    e = _segments(b, seq_len)
    return np.repeat(np.arange(len(e) - 1, dtype=np.int32), np.diff(e))


def position_ids(b, seq_len, continue_positions=False):
    """Positions restarting at 0 at each segment (int64). With
    continue_positions, a piece that continues a document counts on from its
    offset in the document instead."""
    e = _segments(b, seq_len)
    pos = np.arange(seq_len, dtype=np.int64) - np.repeat(e[:-1].astype(np.int64), np.diff(e))
    if continue_positions:
        for o, n, d in zip(b.offsets.tolist(), b.lengths.tolist(), b.doc_offsets.tolist()):
            pos[o:o + n] += d
    return pos


class _Split:
    def __init__(self, root, info, seq_len, dtype):
        self.rows = int(info["rows"])
        self.tokens = self.rows * seq_len
        self.pad_tokens = int(info["pad_tokens"])
        self.files = info["files"]
        self.mm = []
        bounds = []
        first = 0
        for f in self.files:
            for key in ("tokens", "bounds"):
                if os.sep in f[key] or f[key] in (".", ".."):
                    raise ShardError("%s: bad file name %r" % (root, f[key]))
            tp = os.path.join(root, f["tokens"])
            bp = os.path.join(root, f["bounds"])
            rows, pieces = int(f["rows"]), int(f["pieces"])
            if os.path.getsize(tp) != rows * seq_len * dtype.itemsize:
                raise ShardError("%s: size does not match %d rows" % (tp, rows))
            if os.path.getsize(bp) != pieces * BOUNDS_DTYPE.itemsize:
                raise ShardError("%s: size does not match %d pieces" % (bp, pieces))
            mm = np.memmap(tp, dtype=dtype, mode="r") if rows else np.zeros(0, dtype)
            self.mm.append(mm.reshape(rows, seq_len))
            b = np.fromfile(bp, dtype=BOUNDS_DTYPE)
            b = b.copy()
            b["row"] += first
            bounds.append(b)
            first += rows
        if first != self.rows:
            raise ShardError("%s: files hold %d rows, the manifest says %d" % (root, first, self.rows))
        self.bounds = np.concatenate(bounds) if bounds else np.zeros(0, BOUNDS_DTYPE)
        # global token position of each piece in the split's sequence
        self.gstart = self.bounds["row"].astype(np.int64) * seq_len + self.bounds["offset"].astype(np.int64)
        self.gend = self.gstart + self.bounds["length"].astype(np.int64)
        if len(self.gstart) > 1 and np.any(self.gstart[1:] < self.gend[:-1]):
            raise ShardError("%s: boundary records are not sorted" % root)
        self.file_first = np.cumsum([0] + [int(f["rows"]) for f in self.files])
        self.seq_len = seq_len

    def flat(self, g, n):
        """Tokens [g, g+n) of the split's sequence (no wrap)."""
        L = self.seq_len
        out = []
        while n > 0:
            row = g // L
            fi = int(np.searchsorted(self.file_first, row, side="right")) - 1
            frow = row - int(self.file_first[fi])
            arr = self.mm[fi]
            off = g - row * L
            take_rows_end = arr.shape[0]
            chunk = np.asarray(arr[frow:take_rows_end]).reshape(-1)[off:off + n]
            out.append(chunk)
            g += len(chunk)
            n -= len(chunk)
        return np.concatenate(out) if out else np.zeros(0, self.mm[0].dtype if self.mm else np.uint16)

    def pieces(self, g, n):
        """Pieces cut to [g, g+n) (no wrap), offsets relative to g."""
        gs, ge = self.gstart, self.gend
        lo = int(np.searchsorted(ge, g, side="right"))
        hi = int(np.searchsorted(gs, g + n, side="left"))
        a = np.maximum(gs[lo:hi], g)
        e = np.minimum(ge[lo:hi], g + n)
        return (a - g, e - a, self.bounds["doc"][lo:hi],
                self.bounds["doc_offset"][lo:hi] + (a - gs[lo:hi]).astype(np.uint64))

    def view_row(self, g, n):
        """Row of n tokens at position g of the endlessly repeated sequence."""
        D = self.tokens
        if D == 0:
            raise ShardError("the split is empty")
        g %= D
        parts = [(g, min(n, D - g))]
        rest = n - parts[0][1]
        while rest > 0:
            parts.append((0, min(rest, D)))
            rest -= parts[-1][1]
        toks = np.concatenate([self.flat(a, m) for a, m in parts])
        offs, lens, docs, dofs = [], [], [], []
        shift = 0
        for a, m in parts:
            o, l_, d, do = self.pieces(a, m)
            offs.append(o + shift)
            lens.append(l_)
            docs.append(d)
            dofs.append(do)
            shift += m
        return toks, Boundaries(np.concatenate(offs), np.concatenate(lens), np.concatenate(docs),
                                np.concatenate(dofs))


class ShardDir:
    """A shard directory. ``verify=True`` checks every file's XXH64 against the
    manifest (pure Python: slow, meant for tests and small data)."""

    def __init__(self, path, verify=False):
        self.path = path
        mp = os.path.join(path, "manifest.json")
        with open(mp, "rb") as f:
            m = json.loads(f.read().decode("utf-8"))
        if m.get("format") != FORMAT:
            raise ShardError("%s: not a sluice shard manifest" % mp)
        if m.get("version") != VERSION:
            raise ShardError("%s: unsupported version %r" % (mp, m.get("version")))
        self.manifest = m
        self.seq_len = int(m["seq_len"])
        self.dtype = np.dtype({"uint16": "<u2", "uint32": "<u4"}[m["dtype"]])
        self.special = m["special"]
        self.stages = m["stages"]
        self.layout = m["layout"]
        if verify:
            self.verify()
        self.splits = {name: _Split(path, info, self.seq_len, self.dtype) for name, info in m["splits"].items()}
        self._ids = {}
        with open(os.path.join(path, m["documents"]["file"]), "rb") as f:
            for line in f:
                d = json.loads(line)
                self._ids[int(d["doc"])] = d["id"]

    def verify(self):
        """Raises ShardError naming the first file whose checksum differs."""
        m = self.manifest
        checks = [(m["documents"]["file"], m["documents"]["xxh64"])]
        for info in m["splits"].values():
            for f in info["files"]:
                checks += [(f["tokens"], f["tokens_xxh64"]), (f["bounds"], f["bounds_xxh64"])]
        for name, want in checks:
            p = os.path.join(self.path, name)
            with open(p, "rb") as f:
                got = "%016x" % xxh64(f.read())
            if got != want:
                raise ShardError("%s: checksum mismatch (xxh64 %s, manifest says %s)" % (p, got, want))

    def doc_id(self, ordinal):
        return self._ids[int(ordinal)]

    def rows(self, split="train"):
        """Stored rows in order: (tokens (seq_len,), Boundaries)."""
        s = self.splits[split]
        L = self.seq_len
        for r in range(s.rows):
            yield s.view_row(r * L, L)

    def stage_rows(self, stage, split="train"):
        """One epoch of a stage's view, from the start of the data (the last
        row may wrap when the stage length does not divide the data)."""
        s = self.splits[split]
        n = int(self.stages[stage]["seq_len"])
        for k in range((s.tokens + n - 1) // n):
            yield s.view_row(k * n, n)

    def batches(self, split="train", extra_steps=0, as_torch=False):
        """Follows the warmup stages step by step: yields (stage, tokens
        (batch, seq_len), [Boundaries per row]). An open-ended last stage (steps
        null) runs for extra_steps steps."""
        s = self.splits[split]
        for i, st in enumerate(self.stages):
            n, bsz = int(st["seq_len"]), int(st["batch"])
            steps = st["steps"]
            steps = extra_steps if steps is None else int(steps)
            start = int(st["start_token"])
            for k in range(steps):
                rows = [s.view_row(start + (k * bsz + r) * n, n) for r in range(bsz)]
                toks = np.stack([t for t, _ in rows])
                if as_torch:
                    import torch  # optional dependency
                    toks = torch.from_numpy(toks.astype(np.int64))
                yield i, toks, [b for _, b in rows]

    def documents(self, split="train"):
        """Reassembles every document: {ordinal: token array of its sequence
        ([BOS] tokens [EOS]) as far as stored}."""
        parts = {}
        for toks, b in self.rows(split):
            for o, n, d, do in zip(b.offsets.tolist(), b.lengths.tolist(), b.docs.tolist(),
                                   b.doc_offsets.tolist()):
                parts.setdefault(d, []).append((do, toks[o:o + n]))
        out = {}
        for d, ps in parts.items():
            ps.sort(key=lambda x: x[0])
            pos = 0
            for do, _ in ps:
                if do != pos:
                    raise ShardError("document %d: pieces are not contiguous at %d" % (d, pos))
                pos += len(_)
            out[d] = np.concatenate([p for _, p in ps])
        return out


# --- XXH64 (pure Python, for verify()) ------------------------------------
_P1 = 11400714785074694791
_P2 = 14029467366897019727
_P3 = 1609587929392839161
_P4 = 9650029242287828579
_P5 = 2870177450012600261
_M = (1 << 64) - 1


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & _M


def _round(acc, lane):
    acc = (acc + lane * _P2) & _M
    return (_rotl(acc, 31) * _P1) & _M


def _merge(acc, v):
    acc ^= _round(0, v)
    return (acc * _P1 + _P4) & _M


def xxh64(data, seed=0):
    """XXH64 of bytes, written from the published algorithm."""
    n = len(data)
    p = 0
    if n >= 32:
        v = [(seed + _P1 + _P2) & _M, (seed + _P2) & _M, seed & _M, (seed - _P1) & _M]
        lanes = np.frombuffer(data, dtype="<u8", count=(n // 32) * 4).tolist()
        for i in range(0, len(lanes), 4):
            v[0] = _round(v[0], lanes[i])
            v[1] = _round(v[1], lanes[i + 1])
            v[2] = _round(v[2], lanes[i + 2])
            v[3] = _round(v[3], lanes[i + 3])
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M
        for x in v:
            h = _merge(h, x)
        p = (n // 32) * 32
    else:
        h = (seed + _P5) & _M
    h = (h + n) & _M
    while p + 8 <= n:
        k = int.from_bytes(data[p:p + 8], "little")
        h ^= _round(0, k)
        h = (_rotl(h, 27) * _P1 + _P4) & _M
        p += 8
    if p + 4 <= n:
        h ^= (int.from_bytes(data[p:p + 4], "little") * _P1) & _M
        h = (_rotl(h, 23) * _P2 + _P3) & _M
        p += 4
    while p < n:
        h ^= (data[p] * _P5) & _M
        h = (_rotl(h, 11) * _P1) & _M
        p += 1
    h ^= h >> 33
    h = (h * _P2) & _M
    h ^= h >> 29
    h = (h * _P3) & _M
    h ^= h >> 32
    return h

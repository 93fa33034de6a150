"""Read sluice shard directories (docs/shards.md) for training.

numpy only; torch is optional and never imported here: a ShardIterable made
after the caller imported torch is a torch IterableDataset (so import torch
first), and ``as_torch=True`` returns tensors.

Training loop (docs/shards.md, "Training loop"):

    from sluice_data import ShardIterable
    data = ShardIterable("shards/", rank=rank, world_size=world, seed=1, batch_size=64)
    data.load_state_dict(ckpt["data"])                  # O(1) resume at a step
    loader = data.loader(num_workers=2)                 # a torch DataLoader that follows the step
    for batch in loader:        # one item per global step: this rank's rows
        step, tokens = batch["step"], batch["tokens"]   # (rows, seq_len of the stage)
        ...
        ckpt["data"] = data.state_dict()                # where it stands: step + 1

batch_size (global rows per step of the last stage), rank and world_size are
chosen here, not when sharding (docs/shards.md 6.1).

Lower level, as before:

    from sluice_data import ShardDir, cu_seqlens, seq_idx, position_ids
    ds = ShardDir("shards/")
    for step, (stage, tokens, bounds) in enumerate(ds.batches()):
        idx = np.stack([seq_idx(b, tokens.shape[1]) for b in bounds])   # Mamba-2 seq_idx

A stage is a *view* of the data stored at the longest length: the split's
tokens are one sequence, cut into rows of the stage length; stage i starts at
token ``start_token`` of the endlessly repeated sequence (a row that crosses
its end wraps to the start). The warmup therefore never changes which tokens
are seen or in what order. With a ``seed``, each repetition (data epoch) of
the sequence takes the stored rows in its own order (a keyed permutation,
docs/shards.md "Epoch order"); the order is defined globally and only then
split among ranks and workers, so it does not depend on the world size.
"""

import bisect
import json
import mmap
import os
import re
import sys

import numpy as np


FORMAT = "sluice-shards"
VERSION = 1
STATE_FORMAT = "sluice-data-state"

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
        earlier row (recurrent layout: reset no state at the row's first data
        position, 0 or K after memory slots). A piece with a non-zero
        doc_offset is always the first piece of its row."""
        return bool(len(self.offsets) and self.doc_offsets[0] != 0)

    def __len__(self):
        return len(self.offsets)

    def __eq__(self, other):
        if not isinstance(other, Boundaries):
            return NotImplemented
        return all(np.array_equal(getattr(self, k), getattr(other, k)) for k in self.__slots__)

    __hash__ = None

    def __getstate__(self):
        return tuple(getattr(self, k) for k in self.__slots__)

    def __setstate__(self, state):
        for k, v in zip(self.__slots__, state):
            setattr(self, k, v)

    def __repr__(self):
        return "Boundaries(offsets=%s, lengths=%s, docs=%s, doc_offsets=%s)" % (
            self.offsets.tolist(), self.lengths.tolist(), self.docs.tolist(), self.doc_offsets.tolist())


def _memory_edges(memory, seq_len):
    """(read, write) memory positions of a row (docs/shards.md section 2.2)."""
    if not memory:
        return 0, 0
    r, w = int(memory[0]), int(memory[1])
    if r < 0 or w < 0 or r + w >= seq_len:
        raise ValueError("memory slots (%d, %d) leave no room in rows of %d" % (r, w, seq_len))
    return r, w


def _segments(b, seq_len, memory=None):
    """Segment edges of a row: every piece is a segment, and so is each run of
    padding between or after pieces, and each block of memory positions."""
    mr, mw = _memory_edges(memory, seq_len)
    edges = [0]
    if mr:
        edges.append(mr)
    for o, n in zip(b.offsets.tolist(), b.lengths.tolist()):
        if o > edges[-1]:
            edges.append(o)
        edges.append(o + n)
    if mw and edges[-1] < seq_len - mw:
        edges.append(seq_len - mw)
    if edges[-1] < seq_len:
        edges.append(seq_len)
    return np.asarray(edges, dtype=np.int32)


def cu_seqlens(b, seq_len, memory=None):
    """FlashAttention-varlen cumulative lengths (int32, starts with 0, ends with
    seq_len): one sequence per piece, padding runs count as sequences, and so
    does each block of memory positions (memory = (read, write), as
    ShardDir.memory_slots gives it)."""
    return _segments(b, seq_len, memory)


def seq_idx(b, seq_len, memory=None):
    """Mamba-2 / causal-conv1d seq_idx (int32, one entry per token): the segment
    number of each token, so state is reset where it changes."""
    e = _segments(b, seq_len, memory)
    return np.repeat(np.arange(len(e) - 1, dtype=np.int32), np.diff(e))


def position_ids(b, seq_len, continue_positions=False, memory=None):
    """Positions restarting at 0 at each segment (int64). With
    continue_positions, a piece that continues a document counts on from its
    offset in the document instead."""
    e = _segments(b, seq_len, memory)
    pos = np.arange(seq_len, dtype=np.int64) - np.repeat(e[:-1].astype(np.int64), np.diff(e))
    if continue_positions:
        for o, n, d in zip(b.offsets.tolist(), b.lengths.tolist(), b.doc_offsets.tolist()):
            pos[o:o + n] += d
    return pos


def memory_mask(seq_len, memory=None):
    """bool (seq_len,): True at the memory positions of a row, the first
    `read` and (memory-write) the last `write` ones (memory = (read, write),
    as ShardDir.memory_slots gives it; all False without memory slots)."""
    mr, mw = _memory_edges(memory, seq_len)
    m = np.zeros(seq_len, dtype=bool)
    m[:mr] = True
    m[seq_len - mw:] = mw > 0
    return m


def _batch_segments(bounds, seq_len, memory=None):
    """seq_idx (int32) and position_ids (int64) of a batch of rows at once, as
    seq_idx() and position_ids() give them row by row."""
    mr, mw = _memory_edges(memory, seq_len)
    R = len(bounds)
    mark = np.zeros((R, seq_len + 1), dtype=np.int32)
    if R:
        counts = [len(b) for b in bounds]
        if sum(counts):
            rows = np.repeat(np.arange(R), counts)
            o = np.concatenate([b.offsets for b in bounds])
            mark[rows, o] = 1
            mark[rows, o + np.concatenate([b.lengths for b in bounds])] = 1
        mark[:, mr] = 1
        mark[:, seq_len - mw] = 1
    mark = mark[:, :seq_len]
    mark[:, 0] = 0
    idx = np.cumsum(mark, axis=1, dtype=np.int32)
    ar = np.arange(seq_len, dtype=np.int64)
    start = np.maximum.accumulate(np.where(mark != 0, ar, 0), axis=1) if seq_len else mark.astype(np.int64)
    return idx, ar - start


def _check_name(root, name):
    if not isinstance(name, str) or not name or os.sep in name or name in (".", ".."):
        raise ShardError("%s: bad file name %r" % (root, name))
    return os.path.join(root, name)


# --- documents ----------------------------------------------------------------
_DOC_RE = re.compile(rb'\{\s*"doc"\s*:\s*([0-9]+)\s*[,}]')
_CHUNK = 1 << 20


def _line_offsets(path, expect):
    """Start offsets of the lines of a file plus its size (uint64, one pass in
    chunks: 8 bytes per line, the file itself is not kept in memory)."""
    out = np.empty(max(int(expect), 0) + 1, dtype=np.uint64)
    out[0] = 0
    n = 1
    pos = 0
    buf = bytearray(_CHUNK)
    with open(path, "rb", buffering=0) as f:
        while True:
            got = f.readinto(buf)
            if not got:
                break
            nl = np.flatnonzero(np.frombuffer(buf, dtype=np.uint8, count=got) == 10)
            if n + len(nl) + 1 > len(out):
                grown = np.empty(max(n + len(nl) + 1, len(out) * 3 // 2), dtype=np.uint64)
                grown[:n] = out[:n]
                out = grown
            out[n:n + len(nl)] = nl.astype(np.uint64) + np.uint64(pos + 1)
            n += len(nl)
            pos += got
    if int(out[n - 1]) != pos:  # a last line without a newline
        if n == len(out):
            out = np.concatenate([out, np.zeros(1, np.uint64)])
        out[n] = pos
        n += 1
    return out[:n] if n == len(out) else out[:n].copy()


class Documents:
    """documents.jsonl by ordinal, through memory maps: the line offsets come
    from documents.idx (np.memmap, manifest "documents.index") or, for
    directories written before it existed, from one pass that keeps only a
    uint64 array (8 bytes per line). Nothing else is held in memory."""

    def __init__(self, root, info):
        self.path = _check_name(root, info["file"])
        self.count = int(info["count"])
        self.size = os.path.getsize(self.path)
        self._mm = b""
        if self.size:
            with open(self.path, "rb") as f:
                self._mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        index = info.get("index")
        self.index_path = None
        if index is not None:
            ip = self.index_path = _check_name(root, index)
            got = os.path.getsize(ip)
            if got != (self.count + 1) * 8:
                raise ShardError("%s: %d bytes, %d documents need %d (count+1 uint64 offsets)"
                                 % (ip, got, self.count, (self.count + 1) * 8))
            self.offsets = np.memmap(ip, dtype="<u8", mode="r").view(np.ndarray)
            if int(self.offsets[-1]) != self.size or (self.count and int(self.offsets[0]) != 0):
                raise ShardError("%s: offsets do not span %s (%d bytes)" % (ip, self.path, self.size))
        else:
            self.offsets = _line_offsets(self.path, self.count)
        self.lines = len(self.offsets) - 1

    def __len__(self):
        return self.count

    def _line(self, i):
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        if not 0 <= a <= b <= self.size:
            raise ShardError("%s: bad line offsets %d..%d for line %d" % (self.index_path or self.path, a, b, i))
        return self._mm[a:b]

    def _ordinal(self, i):
        line = self._line(i)
        m = _DOC_RE.match(line)
        if m:
            return int(m.group(1))
        try:
            return int(json.loads(line)["doc"])
        except (ValueError, KeyError, TypeError):
            raise ShardError("%s: line %d has no \"doc\" ordinal" % (self.path, i + 1)) from None

    def line_of(self, k):
        """The line index of document ordinal k (KeyError when it has none)."""
        k = int(k)
        if k < 0:
            raise KeyError(k)
        if k < self.lines and self._ordinal(k) == k:
            return k
        if self.index_path is not None:
            if k >= self.count:
                raise KeyError(k)
            raise ShardError("%s: entry %d points at the line of document %d"
                             % (self.index_path, k, self._ordinal(k)))
        # older files hold a line only per document that has pieces: the lines
        # are in ordinal order and ordinal >= line index, so search [0, k]
        lo, hi = 0, min(k, self.lines)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._ordinal(mid) < k:
                lo = mid + 1
            else:
                hi = mid
        if lo < self.lines and self._ordinal(lo) == k:
            return lo
        raise KeyError(k)

    def record(self, k):
        """The whole line of document k as a dict ({"doc","id","split",...})."""
        return json.loads(self._line(self.line_of(k)))


# --- splits ---------------------------------------------------------------------
def _bisect(a, x, lo, hi, right):
    """bisect_left (bisect_right with right) on a 1-d array, even a strided
    memmap view (np.searchsorted would copy it whole), reading Python ints."""
    item = a.item
    while lo < hi:
        mid = (lo + hi) // 2
        v = item(mid)
        if v < x or (right and v == x):
            lo = mid + 1
        else:
            hi = mid
    return lo


class _Split:
    """One split's files, memory-mapped: tokens as (rows, seq_len) and the
    boundary records; nothing proportional to rows or pieces is loaded."""

    def __init__(self, root, info, seq_len, dtype):
        self.rows = int(info["rows"])
        self.seq_len = seq_len
        self.tokens = self.rows * seq_len
        self.pad_tokens = int(info["pad_tokens"])
        self.files = info["files"]
        self.dtype = dtype
        self.tok, self.bnd, self.brow = [], [], []
        self.file_first = [0]
        self._perm = None  # the last epoch's permutation (keys computed once)
        for f in self.files:
            tp = _check_name(root, f["tokens"])
            bp = _check_name(root, f["bounds"])
            rows, pieces = int(f["rows"]), int(f["pieces"])
            if os.path.getsize(tp) != rows * seq_len * dtype.itemsize:
                raise ShardError("%s: size does not match %d rows" % (tp, rows))
            if os.path.getsize(bp) != pieces * BOUNDS_DTYPE.itemsize:
                raise ShardError("%s: size does not match %d pieces" % (bp, pieces))
            t = np.memmap(tp, dtype=dtype, mode="r").view(np.ndarray) if rows else np.zeros(0, dtype)
            b = np.memmap(bp, dtype=BOUNDS_DTYPE, mode="r").view(np.ndarray) if pieces \
                else np.zeros(0, BOUNDS_DTYPE)
            self.tok.append(t.reshape(rows, seq_len))
            self.bnd.append(b)
            self.brow.append(b["row"])
            self.file_first.append(self.file_first[-1] + rows)
        if self.file_first[-1] != self.rows:
            raise ShardError("%s: files hold %d rows, the manifest says %d" % (root, self.file_first[-1], self.rows))

    def _locate(self, r):
        fi = bisect.bisect_right(self.file_first, r) - 1
        return fi, r - self.file_first[fi]

    def read(self, chunks):
        """Tokens and Boundaries of the concatenation of chunks
        (stored row, offset, length), each within one stored row."""
        L = self.seq_len
        toks, offs, lens, docs, dofs = [], [], [], [], []
        shift = 0
        for r, a, m in chunks:
            fi, lr = self._locate(r)
            toks.append(self.tok[fi][lr, a:a + m])
            rows = self.brow[fi]
            lo = _bisect(rows, lr, 0, len(rows), False)
            hi = _bisect(rows, lr, lo, len(rows), True)
            prev = 0
            for _, d, do, o, n in self.bnd[fi][lo:hi].tolist():  # few pieces: plain ints
                e = o + n
                if o < prev or e > L:
                    raise ShardError("%s: boundary records of row %d are not sorted or overlap"
                                     % (self.files[fi]["bounds"], lr))
                prev = e
                if e > a and o < a + m:
                    s0 = o if o > a else a
                    offs.append(s0 - a + shift)
                    lens.append((e if e < a + m else a + m) - s0)
                    docs.append(d)
                    dofs.append(do + s0 - o)
            shift += m
        t = np.concatenate(toks) if len(toks) != 1 else np.array(toks[0])
        return t, Boundaries(np.array(offs, dtype=np.int64), np.array(lens, dtype=np.int64),
                             np.array(docs, dtype=np.uint64), np.array(dofs, dtype=np.uint64))

    def view(self, t, n, seed=None):
        """n tokens at position t of the endlessly repeated sequence; with a
        seed, data epoch e (tokens [e*D, (e+1)*D)) takes the stored rows in
        the order of EpochPermutation(rows, seed, e)."""
        D, L = self.tokens, self.seq_len
        if D == 0:
            raise ShardError("the split is empty")
        chunks = []
        perm = self._perm
        while n > 0:
            e, o = divmod(t, D)
            slot, a = divmod(o, L)
            m = min(n, L - a)
            if seed is None:
                r = slot
            else:
                if perm is None or perm.epoch != e or perm.seed != seed & _M:
                    perm = self._perm = EpochPermutation(self.rows, seed, e)
                r = perm[slot]
            chunks.append((r, a, m))
            t += m
            n -= m
        return self.read(chunks)

    def view_row(self, g, n):
        """Row of n tokens at position g of the endlessly repeated sequence."""
        return self.view(g, n)

    def check(self, where):
        """Every boundary record in range and sorted (used by verify())."""
        L = self.seq_len
        for fi, b in enumerate(self.bnd):
            if not len(b):
                continue
            rows = b["row"]
            o = b["offset"].astype(np.int64)
            e = o + b["length"]
            same = rows[1:] == rows[:-1]
            bad = np.any(rows[1:] < rows[:-1]) or np.any(same & (o[1:] < e[:-1])) or np.any(e > L) \
                or int(rows[-1]) >= self.tok[fi].shape[0]
            if bad:
                raise ShardError("%s/%s: boundary records are not sorted or out of range"
                                 % (where, self.files[fi]["bounds"]))


# --- epoch order ----------------------------------------------------------------
_M = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15


def _mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M
    return z ^ (z >> 31)


class EpochPermutation:
    """The order of the stored rows in data epoch ``epoch`` under ``seed``: a
    bijection of [0, n) computed per index in O(1) time and memory (a keyed
    6-round Feistel network on the smallest even number of bits >= 2 that
    holds n-1, with cycle walking; docs/shards.md, "Epoch order")."""

    ROUNDS = 6

    def __init__(self, n, seed, epoch):
        self.n, self.seed, self.epoch = int(n), int(seed) & _M, int(epoch)
        bits = max(2, (self.n - 1).bit_length())
        bits += bits & 1
        self.half = bits // 2
        self.mask = (1 << self.half) - 1
        state = (self.seed ^ _mix64((self.epoch + 1) & _M)) & _M
        self.keys = []
        for _ in range(self.ROUNDS):
            state = (state + _GAMMA) & _M
            self.keys.append(_mix64(state))

    def __len__(self):
        return self.n

    def __getitem__(self, x):
        x = int(x)
        if not 0 <= x < self.n:
            raise IndexError(x)
        h, mask, keys = self.half, self.mask, self.keys
        while True:
            left, right = x >> h, x & mask
            for k in keys:
                left, right = right, left ^ (_mix64(right ^ k) & mask)
            x = (left << h) | right
            if x < self.n:
                return x

    def array(self):
        """The whole permutation (O(n) memory; for inspection and tests)."""
        return np.fromiter((self[i] for i in range(self.n)), dtype=np.int64, count=self.n)


# --- shard directory --------------------------------------------------------------
class ShardDir:
    """A shard directory. ``verify=True`` checks every file's XXH64 against the
    manifest (pure Python: slow, meant for tests and small data).

    Memory: token and boundary files and documents.idx/documents.jsonl are
    memory-mapped; opening a directory loads only the manifest (and, for a
    directory without documents.idx, an 8-byte offset per document)."""

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
        #: memory-token slots (recurrent layout): {"tokens": K, "id": ID,
        #: "write": bool}, or None; memory_slots = (read, write) positions
        self.memory = m.get("memory")
        mem = self.memory
        if mem is not None:
            k = int(mem["tokens"])
            if self.layout != "recurrent" or k <= 0 or (2 if mem["write"] else 1) * k >= self.seq_len:
                raise ShardError("%s: malformed \"memory\" %r" % (mp, mem))
            self.memory_slots = (k, k if mem["write"] else 0)
        else:
            self.memory_slots = (0, 0)
        if verify:
            self.verify(structure=False)
        self.splits = {name: _Split(path, info, self.seq_len, self.dtype) for name, info in m["splits"].items()}
        self.documents_index = Documents(path, m["documents"])
        if verify:
            for s in self.splits.values():
                s.check(path)

    # pickled (DataLoader workers started with spawn/forkserver): reopen by path
    def __getstate__(self):
        return {"path": self.path}

    def __setstate__(self, state):
        self.__init__(state["path"])

    def verify(self, structure=True):
        """Raises ShardError naming the first file whose checksum differs (and,
        with structure, the first split whose boundary records are unsorted)."""
        m = self.manifest
        d = m["documents"]
        checks = [(d["file"], d["xxh64"])]
        if d.get("index") is not None:
            checks.append((d["index"], d["index_xxh64"]))
        for info in m["splits"].values():
            for f in info["files"]:
                checks += [(f["tokens"], f["tokens_xxh64"]), (f["bounds"], f["bounds_xxh64"])]
        for name, want in checks:
            p = _check_name(self.path, name)
            with open(p, "rb") as f:
                got = "%016x" % xxh64(f.read())
            if got != want:
                raise ShardError("%s: checksum mismatch (xxh64 %s, manifest says %s)" % (p, got, want))
        if structure:
            for s in self.splits.values():
                s.check(self.path)

    @property
    def num_documents(self):
        """The manifest's document count (ordinals 0..count-1)."""
        return self.documents_index.count

    def doc_record(self, ordinal):
        """The documents.jsonl line of a document as a dict (KeyError if none)."""
        return self.documents_index.record(ordinal)

    def doc_id(self, ordinal):
        return self.doc_record(ordinal)["id"]

    def doc_meta(self, ordinal):
        """The document's metadata object ({} when it has none)."""
        return self.doc_record(ordinal).get("meta", {})

    def rows(self, split="train"):
        """Stored rows in order: (tokens (seq_len,), Boundaries)."""
        s = self.splits[split]
        L = self.seq_len
        for r in range(s.rows):
            yield s.read([(r, 0, L)])

    def stage_rows(self, stage, split="train"):
        """One epoch of a stage's view, from the start of the data (the last
        row may wrap when the stage length does not divide the data)."""
        s = self.splits[split]
        n = int(self.stages[stage]["seq_len"])
        for k in range((s.tokens + n - 1) // n):
            yield s.view(k * n, n)

    def batches(self, split="train", extra_steps=0, as_torch=False):
        """The train split follows the warmup stages step by step: yields
        (stage, tokens (batch, seq_len), [Boundaries per row]); an open-ended
        last stage (steps null) runs for extra_steps steps. Any other split
        (val) is read once at seq_len with its own rows, in batches of the
        last stage's batch (the last one may be smaller), stage None."""
        if split == "train":
            plan = _Plan(self, split, extra_steps=extra_steps)
        else:
            plan = _Plan(self, split)
        for k in range(plan.total_steps):
            stage, n, rows = plan.step_rows(k)
            got = [plan.read(k, j) for j in rows]
            toks = np.stack([t for t, _ in got]) if got else np.zeros((0, n), self.dtype)
            if as_torch:
                import torch  # optional dependency
                toks = torch.from_numpy(toks.astype(np.int64))
            yield stage, toks, [b for _, b in got]

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


# --- the global order: steps, rows, stages ----------------------------------------
class _Plan:
    """Step k of a split and the token position of each of its rows.

    train: the manifest's stages over the endlessly repeated (and, with a
    seed, per-epoch reshuffled) sequence; after the listed stages the last
    stage goes on. `batch` (rows per step of the last stage, chosen at load
    time) scales every stage's batch by batch / (the last stage's batch in
    the manifest), rounded down, at least 1: a doubling warmup keeps its
    constant tokens per step; each stage keeps the tokens it covers in the
    manifest (steps = ceil(tokens / tokens per step)). Other splits: one pass
    over the stored rows at seq_len in steps of `batch` rows (default: the
    last stage's batch), no wrap, no reshuffle."""

    def __init__(self, sd, split, seed=None, steps=None, batch=None, extra_steps=None):
        if split not in sd.splits:
            raise ValueError("%s: no %r split (have %s)" % (sd.path, split, ", ".join(sorted(sd.splits))))
        self.sd, self.split = sd, split
        self.train = split == "train"
        s = sd.splits[split]
        L = sd.seq_len
        if batch is not None and int(batch) <= 0:
            raise ValueError("batch_size must be positive")
        if self.train:
            if s.tokens == 0:
                raise ShardError("%s: the train split is empty" % sd.path)
            self.seed = None if seed is None else int(seed) & _M
            self.stages = []
            first_step = first_row = 0
            token = mtoken = 0
            b_last = int(sd.stages[-1]["batch"]) if sd.stages else 1
            if batch is not None and int(batch) != b_last and sd.layout == "recurrent":
                raise ValueError("%s: a recurrent layout has its batch fixed when sharding (--batch %d: row b of "
                                 "step t+1 continues row b of step t); batch_size %d needs a new shard directory"
                                 % (sd.path, b_last, int(batch)))
            for i, st in enumerate(sd.stages):
                l, b = int(st["seq_len"]), int(st["batch"])
                n = st["steps"]
                if l <= 0 or b <= 0 or l > L:
                    raise ShardError("%s: stage %d has seq_len %d, batch %d" % (sd.path, i, l, b))
                if int(st["start_token"]) != mtoken:
                    raise ShardError("%s: stage %d starts at token %s, the stages before it end at %d"
                                     % (sd.path, i, st["start_token"], mtoken))
                if n is None and i != len(sd.stages) - 1:
                    raise ShardError("%s: stage %d has no steps but is not the last" % (sd.path, i))
                span = None if n is None else int(n) * b * l  # the tokens the stage covers
                mtoken += 0 if n is None else span
                if batch is not None:
                    b = max(1, b * int(batch) // b_last)
                    if n is not None:
                        n = -(-span // (b * l))
                self.stages.append((l, b, None if n is None else int(n), token, first_step, first_row))
                if n is not None:
                    first_step += int(n)
                    first_row += int(n) * b
                    token += int(n) * b * l
            last = self.stages[-1]
            if steps is None:
                steps = first_step
                if last[2] is None:
                    steps = None if extra_steps is None else first_step + int(extra_steps)
            self.total_steps = steps
            self.first_steps = [st[4] for st in self.stages]
            self.first_rows = [st[5] for st in self.stages]
            self.rows_per_epoch = s.rows
        else:
            if seed is not None:
                raise ValueError("the %s split is read once in stored order: no seed" % split)
            self.seed = None
            b = int(batch) if batch is not None else int(sd.stages[-1]["batch"])
            if b <= 0:
                raise ValueError("batch must be positive")
            self.batch = b
            full = (s.rows + b - 1) // b
            self.total_steps = full if steps is None else min(int(steps), full)
            self.rows_per_epoch = s.rows
        self.total_rows = None if self.total_steps is None else self.row_of_step(self.total_steps)

    def _stage(self, k):
        return self.stages[bisect.bisect_right(self.first_steps, k) - 1]

    def step_at_token(self, t):
        """The step whose first row starts at token t of the sequence, or None."""
        if not self.train:
            q, r = divmod(t, self.batch * self.sd.seq_len)
            return q if r == 0 else None
        for l, b, n, start, k0, _ in reversed(self.stages):
            if t >= start:
                q, r = divmod(t - start, b * l)
                return k0 + q if r == 0 and (n is None or q <= n) else None
        return None

    def check_step(self, k):
        k = int(k)
        if k < 0 or (self.total_steps is not None and k >= self.total_steps):
            raise IndexError("step %d out of range (%s steps)" % (k, self.total_steps))
        return k

    def step_rows(self, k):
        """(stage or None, row length, row count) of step k."""
        if self.train:
            st = self._stage(k)
            return bisect.bisect_right(self.first_steps, k) - 1, st[0], range(st[1])
        R = self.sd.splits[self.split].rows
        return None, self.sd.seq_len, range(min(self.batch, R - k * self.batch))

    def row_of_step(self, k):
        """Global row index of the first row of step k."""
        if self.train:
            st = self._stage(k)
            return st[5] + (k - st[4]) * st[1]
        return min(k * self.batch, self.sd.splits[self.split].rows)

    def step_of_row(self, g):
        """(step, index in the step) of global row g."""
        if self.train:
            st = self.stages[bisect.bisect_right(self.first_rows, g) - 1]
            d, j = divmod(g - st[5], st[1])
            return st[4] + d, j
        return divmod(g, self.batch)

    def token(self, k, j):
        """Token position of row j of step k in the split's sequence."""
        if self.train:
            st = self._stage(k)
            return st[3] + ((k - st[4]) * st[1] + j) * st[0]
        return (k * self.batch + j) * self.sd.seq_len

    def read(self, k, j):
        _, n, _ = self.step_rows(k)
        return self.sd.splits[self.split].view(self.token(k, j), n, self.seed)

    def epoch_of(self, k):
        """Data epoch (repetition of the split) where step k starts."""
        return self.token(k, 0) // self.sd.splits[self.split].tokens


def _to_torch(a):
    import torch  # optional dependency

    return torch.from_numpy(np.ascontiguousarray(a))


class _Reader:
    """Shared by ShardDataset and ShardIterable (see their docstrings)."""

    def __init__(self, source, split="train", rank=0, world_size=1, seed=None, steps=None, batch=None,
                 allow_uneven=False, segments=True, dtype=np.int64, as_torch=False, batch_size=None):
        self.shards = source if isinstance(source, ShardDir) else ShardDir(source)
        self.split = split
        self.rank, self.world_size = int(rank), int(world_size)
        if self.world_size < 1 or not 0 <= self.rank < self.world_size:
            raise ValueError("rank %d of world_size %d" % (self.rank, self.world_size))
        if batch is not None and batch_size is not None and int(batch) != int(batch_size):
            raise ValueError("batch %s and batch_size %s: give one (they are the same)" % (batch, batch_size))
        if batch_size is None:
            batch_size = batch
        self.seed = seed
        self.plan = _Plan(self.shards, split, seed=seed, steps=steps, batch=batch_size)
        if split == "train" and self.shards.layout == "recurrent" and seed is not None:
            raise ValueError("a recurrent layout is read in stored order (row b of step t+1 continues "
                             "row b of step t): no seed")
        if not allow_uneven and split == "train":
            for i, st in enumerate(self.plan.stages):
                if st[1] % self.world_size:
                    last = self.plan.stages[-1][1]
                    hint = ("the shard directory's layout fixes it (recurrent --batch)"
                            if self.shards.layout == "recurrent" else
                            "give batch_size=N, the global rows per step of the last stage, with every stage's "
                            "rows a multiple of world_size (e.g. batch_size=%d), or allow_uneven=True for ranks "
                            "whose batches differ by one" % (self.world_size * -(-last // self.world_size)))
                    raise ValueError("%s: stage %d has %d rows per step (batch_size %d), not a multiple of "
                                     "world_size %d: %s" % (self.shards.path, i, st[1], last, self.world_size,
                                                            hint))
        self.segments = bool(segments)
        self.out_dtype = np.dtype(dtype)
        self.as_torch = bool(as_torch)
        self._next = 0
        self._tracked = False  # iterated through loader(): the main process follows every step
        self._seen = _shared_flag()  # set by a DataLoader worker that iterates this reader

    def __getstate__(self):
        st = self.__dict__.copy()
        # the shared flag travels to DataLoader workers started with spawn
        # (multiprocessing pickles their arguments then); anywhere else it is
        # dropped, so a reader can be pickled like any object
        import multiprocessing.context as mpc

        if mpc.get_spawning_popen() is None:
            st["_seen"] = None
        return st

    @property
    def batch_size(self):
        """Global rows per step of the last stage (val: rows per step)."""
        return self.plan.stages[-1][1] if self.plan.train else self.plan.batch

    @property
    def total_steps(self):
        """Steps in the run (None: endless, an open-ended last stage)."""
        return self.plan.total_steps

    def _rows_of(self, k):
        """This rank's rows of step k: indices j = rank, rank+world, ..."""
        _, _, rows = self.plan.step_rows(k)
        return range(self.rank, len(rows), self.world_size)

    def step(self, k, rank=None):
        """This rank's part of global step k (or rank `rank`'s), as a dict:
        step, stage (None for val), epoch, rows (indices within the step),
        tokens (rows, seq_len of the stage), bounds (a Boundaries per row),
        and with segments seq_idx (int32) and position_ids (int64)."""
        k = self.plan.check_step(k)
        stage, n, rows = self.plan.step_rows(k)
        r0 = self.rank if rank is None else int(rank)
        js = list(range(r0, len(rows), self.world_size))
        got = [self.plan.read(k, j) for j in js]
        return self._item({"step": k, "stage": stage, "epoch": self.plan.epoch_of(k),
                           "rows": np.asarray(js, dtype=np.int64)}, got, n, batched=True)

    def row(self, g):
        """Global row g of the run (rows counted over all steps, all ranks)."""
        g = int(g)
        if g < 0 or (self.plan.total_rows is not None and g >= self.plan.total_rows):
            raise IndexError("row %d out of range (%s rows)" % (g, self.plan.total_rows))
        k, j = self.plan.step_of_row(g)
        stage, n, _ = self.plan.step_rows(k)
        return self._item({"row": g, "step": k, "stage": stage, "index": j}, [self.plan.read(k, j)], n,
                          batched=False)

    def _item(self, item, got, n, batched):
        if got:
            toks = np.stack([t for t, _ in got]).astype(self.out_dtype)
        else:
            toks = np.zeros((0, n), self.out_dtype)
        bounds = [b for _, b in got]
        extra = {}
        if self.segments:
            extra["seq_idx"], extra["position_ids"] = _batch_segments(bounds, n, self.shards.memory_slots)
        if self.shards.memory is not None:
            extra["memory_mask"] = np.broadcast_to(memory_mask(n, self.shards.memory_slots), toks.shape).copy()
        if not batched:
            toks = toks[0]
            extra = {key: v[0] for key, v in extra.items()}
            bounds = bounds[0]
        item["tokens"] = toks
        item["bounds"] = bounds
        item.update(extra)
        if self.as_torch:
            for key in ("tokens", "seq_idx", "position_ids", "memory_mask", "rows"):
                if key in item:
                    item[key] = _to_torch(item[key])
        return item

    # --- resume -------------------------------------------------------------
    def _fingerprint(self):
        m = self.shards.manifest
        return "%s:%d:%d" % (m["documents"]["xxh64"], self.shards.splits[self.split].rows, self.shards.seq_len)

    def state_dict(self, step=None):
        """The position to resume at: `step` (the next step to train on) or,
        without it, where this reader stands: the step after the last one it
        handed over, whether iterated directly or through ``loader()``
        (DataLoader workers included). After a plain DataLoader with workers,
        whose progress this process cannot see, it raises instead of
        guessing. The order does not depend on world_size, so a run may
        resume with a different number of ranks or workers; with another
        batch_size it resumes at the same token when a step starts there."""
        if step is None:
            if self._seen is not None and self._seen.value and not self._tracked:
                raise RuntimeError("this reader was iterated by DataLoader worker processes, whose progress this "
                                   "process cannot see: iterate reader.loader(num_workers=...) instead (it tracks "
                                   "the step), or give the next step: state_dict(step + 1)")
            step = self._next
        step = int(step)
        return {"format": STATE_FORMAT, "version": 1, "split": self.split, "seed": self.seed,
                "data": self._fingerprint(), "step": step, "batch_size": self.batch_size,
                "token": self.plan.token(step, 0)}

    def load_state_dict(self, state):
        """Resume at state["step"] in O(1): no data is read to get there. A
        state saved with another batch_size resumes at the step that starts
        at the same token (an error when no step starts there)."""
        if state.get("format") != STATE_FORMAT or state.get("version") != 1:
            raise ValueError("not a sluice-data state: %r" % (state,))
        for key, want in (("split", self.split), ("seed", self.seed), ("data", self._fingerprint())):
            if state.get(key) != want:
                raise ValueError("state %s is %r, this reader has %r" % (key, state.get(key), want))
        step = int(state["step"])
        if state.get("batch_size") not in (None, self.batch_size):
            k = self.plan.step_at_token(int(state["token"]))
            if k is None:
                raise ValueError("state step %d of batch_size %s starts at token %s, where no step of batch_size "
                                 "%d starts" % (step, state["batch_size"], state["token"], self.batch_size))
            step = k
        if step < 0 or (self.total_steps is not None and step > self.total_steps):
            raise ValueError("state step %d out of range (%s steps)" % (step, self.total_steps))
        self._next = step


class ShardDataset(_Reader):
    """Map-style dataset over a split's global order.

    unit="step" (default): ``len`` = number of steps, ``ds[k]`` = this rank's
    rows of global step k (see ``step``); use
    ``DataLoader(ds, batch_size=None, sampler=range(start, len(ds)))``.
    unit="row": ``len`` = number of rows over all steps, ``ds[g]`` = global row
    g ({"row","step","stage","index","tokens","bounds",...}); rows of
    different stages differ in length, so batch them by step.

    split="train": the manifest's warmup stages (``steps`` = how many steps in
    all; required when the last stage is open-ended); with ``seed`` every data
    epoch takes the stored rows in its own order. split="val": one pass over
    the stored rows at seq_len, ``batch`` rows per step (default the last
    stage's batch), no warmup, no wrap.
    Rows of a step go to ranks round-robin (row j to rank j % world_size).
    Items hold ``dtype`` tokens (default int64) and, with ``segments``,
    seq_idx / position_ids; ``as_torch`` turns the arrays into tensors."""

    def __init__(self, source, split="train", rank=0, world_size=1, seed=None, steps=None, batch=None,
                 unit="step", allow_uneven=False, segments=True, dtype=np.int64, as_torch=False, batch_size=None):
        if unit not in ("step", "row"):
            raise ValueError("unit is 'step' or 'row', not %r" % (unit,))
        _Reader.__init__(self, source, split=split, rank=rank, world_size=world_size, seed=seed, steps=steps,
                         batch=batch, allow_uneven=allow_uneven, segments=segments, dtype=dtype,
                         as_torch=as_torch, batch_size=batch_size)
        self.unit = unit

    def __len__(self):
        n = self.plan.total_steps if self.unit == "step" else self.plan.total_rows
        if n is None:
            raise TypeError("the last stage is open-ended: give steps=N for a length")
        return n

    def __getitem__(self, i):
        i = int(i)
        if i < 0:
            i += len(self)
        return self.step(i) if self.unit == "step" else self.row(i)


class ShardIterable(_Reader):
    """Iterable over the steps of a split for one consumer: a rank
    (``rank``/``world_size``: row j of each step goes to rank j % world_size)
    and, within it, a DataLoader worker (``worker_id``/``num_workers``, by
    default from torch.utils.data.get_worker_info(), else 0 of 1): from the
    start step s0, worker w yields steps s0+w, s0+w+W, ... so that DataLoader,
    which takes items from its workers round-robin, hands them over in step
    order. Every row of every step goes to exactly one consumer.

    Made after ``import torch`` it is also a torch IterableDataset (this
    module never imports torch itself). Same arguments as ShardDataset
    (minus unit); ``batch_size`` is chosen here, not when sharding. Resume
    with ``load_state_dict(state)`` before creating the DataLoader iterator;
    save with ``state_dict()`` (where the reader stands: iterate
    ``loader(...)`` when DataLoader workers are used) or ``state_dict(step)``
    where step is the next step to train on."""

    def __new__(cls, *args, **kwargs):
        # a torch IterableDataset when the caller has imported torch (never imported here)
        if cls is ShardIterable and "torch" in sys.modules:
            cls = _torch_iterable()
        return super().__new__(cls)

    def __init__(self, source, split="train", rank=0, world_size=1, worker_id=None, num_workers=None, seed=None,
                 steps=None, batch=None, allow_uneven=False, segments=True, dtype=np.int64, as_torch=False,
                 batch_size=None):
        _Reader.__init__(self, source, split=split, rank=rank, world_size=world_size, seed=seed, steps=steps,
                         batch=batch, allow_uneven=allow_uneven, segments=segments, dtype=dtype,
                         as_torch=as_torch, batch_size=batch_size)
        if (worker_id is None) != (num_workers is None):
            raise ValueError("give both worker_id and num_workers, or neither")
        if num_workers is not None and not 0 <= int(worker_id) < int(num_workers):
            raise ValueError("worker_id %s of num_workers %s" % (worker_id, num_workers))
        self.worker_id = None if worker_id is None else int(worker_id)
        self.num_workers = None if num_workers is None else int(num_workers)

    def _worker(self):
        if self.worker_id is not None:
            return self.worker_id, self.num_workers
        torch = sys.modules.get("torch")
        if torch is not None:
            info = torch.utils.data.get_worker_info()
            if info is not None:
                if self._seen is not None:
                    self._seen.value = 1
                return info.id, info.num_workers
        return 0, 1

    def loader(self, **kwargs):
        """A torch DataLoader over this reader (batch_size=None: one item per
        step) that follows the steps it hands over, so ``state_dict()``
        (of the reader or of the loader) says where training stands, with
        worker processes too."""
        kwargs.setdefault("batch_size", None)
        return _tracking_loader()(self, **kwargs)

    def __iter__(self):
        w, nw = self._worker()
        k = self._next + w
        end = self.plan.total_steps
        while end is None or k < end:
            item = self.step(k)
            self._next = k + 1
            yield item
            k += nw


_TORCH_ITERABLE = None
_TRACKING_LOADER = None


def _shared_flag():
    """One byte shared with worker processes (fork, and spawn through
    __getstate__), or None where shared memory is not available."""
    try:
        import multiprocessing

        return multiprocessing.RawValue("b", 0)
    except (ImportError, OSError):
        return None


def _tracking_loader():
    """torch's DataLoader, following in this process the step of every item
    it hands over (the reader's workers run elsewhere)."""
    global _TRACKING_LOADER
    if _TRACKING_LOADER is None:
        from torch.utils.data import DataLoader

        class ShardLoader(DataLoader):
            __doc__ = ShardIterable.loader.__doc__

            def __iter__(self):
                self.dataset._tracked = True
                for item in DataLoader.__iter__(self):
                    self.dataset._next = int(item["step"]) + 1
                    yield item

            def state_dict(self, step=None):
                return self.dataset.state_dict(step)

            def load_state_dict(self, state):
                self.dataset.load_state_dict(state)

        _TRACKING_LOADER = ShardLoader
    return _TRACKING_LOADER


def _torch_iterable():
    """ShardIterable with torch's IterableDataset as a second base (DataLoader
    tells iterable datasets by isinstance)."""
    global _TORCH_ITERABLE
    if _TORCH_ITERABLE is None:
        from torch.utils.data import IterableDataset

        _TORCH_ITERABLE = type("TorchShardIterable", (ShardIterable, IterableDataset),
                               {"__module__": __name__, "__qualname__": "TorchShardIterable",
                                "__doc__": ShardIterable.__doc__})
    return _TORCH_ITERABLE


def __getattr__(name):
    # pickle (DataLoader workers started with spawn) finds TorchShardIterable here
    if name == "TorchShardIterable":
        return _torch_iterable()
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


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

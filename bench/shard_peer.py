"""Peer for bench/shard.sh: the usual numpy way to pack a Megatron-style
token file into rows (as nanoGPT / datatrove readers view it): load all
documents, append the EOS to each, concatenate, pad and reshape into rows of
seq_len, and derive the document-start index with searchsorted. Writes the
rows and the (row, offset) starts so the work matches `sluice shard`.

usage: shard_peer.py gen PREFIX GB | shard_peer.py pack PREFIX SEQ_LEN OUTDIR
"""
import os
import struct
import sys

import numpy as np


def gen(prefix, gb):
    """A Megatron uint16 dataset of ~gb GB of tokens, lengths 1..4095."""
    rng = np.random.default_rng(0)
    total = int(gb * (1 << 30)) // 2
    lens = rng.integers(1, 4096, size=total // 2048 + 16, dtype=np.int64)
    c = np.cumsum(lens)
    n = int(np.searchsorted(c, total)) + 1
    lens = lens[:n]
    S = len(lens)
    with open(prefix + ".bin", "wb") as f:
        left = int(lens.sum())
        while left:
            k = min(left, 1 << 26)
            rng.integers(1, 50277, size=k, dtype=np.uint16).tofile(f)
            left -= k
    with open(prefix + ".idx", "wb") as f:
        f.write(b"MMIDIDX\x00\x00" + struct.pack("<QBQQ", 1, 8, S, S + 1))
        lens.astype("<i4").tofile(f)
        (np.concatenate([[0], np.cumsum(lens)[:-1]]) * 2).astype("<i8").tofile(f)
        np.arange(S + 1, dtype="<i8").tofile(f)


def pack(prefix, seq_len, out):
    seq_len = int(seq_len)
    idx = open(prefix + ".idx", "rb").read()
    S = struct.unpack("<Q", idx[18:26])[0]
    sizes = np.frombuffer(idx, "<i4", S, 34).astype(np.int64)
    toks = np.fromfile(prefix + ".bin", "<u2")
    ends = np.cumsum(sizes)
    data = np.insert(toks, ends, 0)  # EOS after each document
    starts = np.concatenate([[0], ends[:-1]]) + np.arange(S)  # starts after inserting EOS
    rows = -(-len(data) // seq_len)
    padded = np.zeros(rows * seq_len, np.uint16)
    padded[:len(data)] = data
    os.makedirs(out, exist_ok=True)
    padded.reshape(rows, seq_len).tofile(os.path.join(out, "rows.u16"))
    bounds = np.stack([starts // seq_len, starts % seq_len], axis=1).astype("<u8")
    bounds.tofile(os.path.join(out, "starts.u64"))


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2], float(sys.argv[3]))
    else:
        pack(sys.argv[2], sys.argv[3], sys.argv[4])

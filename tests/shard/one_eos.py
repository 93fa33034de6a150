"""Checks that every document ends in exactly one EOS, in
shard directories and Megatron datasets, reading the files as docs/shards.md
specifies them (plain numpy and struct, not sluice's reader).

  python3 tests/shard/one_eos.py EOS PATH...    PATH: a shard directory, or a
                                                Megatron prefix (PATH.idx)

Prints one line per PATH ("PATH: N documents, each ends in one EOS E") and
exits 1 when a document ends in two EOS or in none (a shard's truncated or
dropped documents excepted)."""
import json
import os
import struct
import sys

import numpy as np


def megatron(prefix):
    raw = open(prefix + ".idx", "rb").read()
    assert raw[:9] == b"MMIDIDX\x00\x00", "not a Megatron index"
    code = raw[17]
    dtype = {8: np.uint16, 4: np.int32}[code]
    s, d = struct.unpack_from("<QQ", raw, 18)
    sizes = np.frombuffer(raw, np.int32, s, 34)
    ptrs = np.frombuffer(raw, np.int64, s, 34 + 4 * s)
    docidx = np.frombuffer(raw, np.int64, d, 34 + 12 * s)
    data = np.fromfile(prefix + ".bin", dtype)
    item = np.dtype(dtype).itemsize
    for k in range(d - 1):
        seqs = [data[ptrs[i] // item:ptrs[i] // item + sizes[i]] for i in range(docidx[k], docidx[k + 1])]
        yield "%s doc %d" % (prefix, k), np.concatenate(seqs)


def shard(path):
    m = json.load(open(os.path.join(path, "manifest.json")))
    L = m["seq_len"]
    dt = np.uint16 if m["dtype"] == "uint16" else np.uint32
    bdt = np.dtype([("row", "<u8"), ("doc", "<u8"), ("doc_offset", "<u8"), ("offset", "<u4"), ("length", "<u4")])
    long_docs = set()
    for line in open(os.path.join(path, "documents.jsonl"), encoding="utf-8"):
        o = json.loads(line)
        if o.get("long"):
            long_docs.add(o["doc"])
    pieces = {}
    for split in m["splits"].values():
        for f in split["files"]:
            toks = np.fromfile(os.path.join(path, f["tokens"]), dt)
            for b in np.fromfile(os.path.join(path, f["bounds"]), bdt):
                start = int(b["row"]) * L + int(b["offset"])  # the row within this file
                if start < 0 or start + int(b["length"]) > len(toks):
                    raise SystemExit("%s: bounds outside %s" % (path, f["tokens"]))
                pieces.setdefault(int(b["doc"]), []).append((int(b["doc_offset"]),
                                                             toks[start:start + int(b["length"])]))
    for k in sorted(pieces):
        if k in long_docs:
            continue
        ps = sorted(pieces[k], key=lambda p: p[0])
        yield "%s doc %d" % (path, k), np.concatenate([p for _, p in ps])


def main():
    eos = int(sys.argv[1])
    bad = 0
    for path in sys.argv[2:]:
        docs = megatron(path) if os.path.exists(path + ".idx") else shard(path)
        n = 0
        for name, seq in docs:
            n += 1
            ends = len(seq) >= 1 and seq[-1] == eos
            twice = len(seq) >= 2 and seq[-2] == eos
            if not ends or twice:
                bad += 1
                if bad <= 5:
                    print("%s ends %s: %s" % (name, seq[-3:].tolist(), "two EOS" if twice else "no EOS"))
        if n == 0:
            bad += 1
            print("%s: no documents" % path)
        print("%s: %d documents, each ends in one EOS %d" % (path, n, eos) if not bad else "%s: FAILED" % path)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

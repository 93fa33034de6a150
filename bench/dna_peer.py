#!/usr/bin/env python3
"""Peer for bench/dna.sh: HyenaDNA-style character tokenization of a FASTA in Python.

mode "translate": the fastest plain-Python way, per record: join the lines, map every byte to its
HyenaDNA id with bytes.translate (C speed), write the ids as uint8 (what sluice writes for a
12-token vocabulary). mode "hyena": HyenaDNA's own CharacterTokenizer path, one dict lookup per
character ([vocab.get(c, UNK) for c in seq]), on the first MAXMB megabytes only (it is slow).
Prints "<bytes read> <seconds>".
"""
import sys, time

VOCAB = {'A': 7, 'C': 8, 'G': 9, 'T': 10, 'N': 11}
mode, path = sys.argv[1], sys.argv[2]
limit = int(sys.argv[3]) << 20 if len(sys.argv) > 3 else 1 << 62
table = bytes(VOCAB.get(chr(c).upper(), 6) for c in range(256))
t0 = time.perf_counter()
nbytes = 0
out = open('/dev/null', 'wb')


def emit(parts):
    seq = b''.join(parts)
    if mode == 'translate':
        out.write(seq.translate(table))
    else:
        s = seq.decode('ascii').upper()
        ids = [VOCAB.get(c, 6) for c in s]
        out.write(bytes(ids))


with open(path, 'rb') as f:
    parts = []
    for line in f:
        nbytes += len(line)
        if line.startswith(b'>'):
            if parts:
                emit(parts)
            parts = []
        else:
            parts.append(line.rstrip(b'\r\n'))
        if nbytes >= limit:
            break
    if parts:
        emit(parts)
print(nbytes, time.perf_counter() - t0)

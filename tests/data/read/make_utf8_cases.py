#!/usr/bin/env python3
"""Generates utf8_cases.tsv: byte strings and what CPython's UTF-8 decoder makes of them.

Columns (hex, '-' for empty): input, bytes.decode('utf-8', 'replace') re-encoded,
bytes.decode('utf-8', 'ignore') re-encoded, and the number of invalid sequences
(calls of the error handler: CPython calls it once per maximal invalid subpart),
and the offset of the first invalid byte (the input length when valid).
The expected values come from CPython itself, not from sluice. Inputs contain
no control bytes, '"' or '\\', so each can also be embedded in a JSON string
or used as a line of text. Run: python3 make_utf8_cases.py > utf8_cases.tsv
"""
import codecs
import random
import sys

calls = 0
first = -1


def counting(e):
    global calls, first
    if calls == 0:
        first = e.start
    calls += 1
    return ("\ufffd", e.end)


codecs.register_error("sluice_count", counting)


def expect(b):
    global calls, first
    calls, first = 0, len(b)
    b.decode("utf-8", "sluice_count")
    return b.decode("utf-8", "replace").encode(), b.decode("utf-8", "ignore").encode(), calls, first


cases = [b"", b"plain ascii", "caf\u00e9 \u20ac \U0001d11e \ufffd".encode()]
# every non-ASCII byte alone and between letters
cases += [bytes([x]) for x in range(0x80, 0x100)]
cases += [b"a" + bytes([x]) + b"b" for x in range(0x80, 0x100)]
# each lead byte followed by the boundary continuation bytes and by a non-continuation
for lead in range(0xC0, 0x100):
    for c in (0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0):
        cases.append(bytes([lead, c]) + b"z")
        cases.append(bytes([lead, c, 0x80]) + b"z")
        cases.append(bytes([lead, c, 0x80, 0x80]) + b"z")
# classic edge cases: overlongs, surrogates, beyond U+10FFFF, truncations
cases += [bytes.fromhex(h) for h in [
    "c080", "c1bf", "e08080", "e09fbf", "e0a080", "eda080", "edbfbf", "ed9fbf", "ee8080",
    "f0808080", "f08fbfbf", "f0908080", "f48fbfbf", "f4908080", "f7bfbfbf", "f888808080",
    "fc8480808080", "e282", "e2", "f09f98", "f09f", "f0", "e282ac", "e282e282ac",
    # Unicode 15, table 3-8 (U+FFFD for maximal subparts)
    "61f18080e180c2628063 80bf64".replace(" ", ""),
    "eda0bdedb2a9", "efbbbf", "efbfbd", "efbfbe", "f4",
]]
rng = random.Random(20261121)
alphabet = [x for x in range(0x20, 0x7F) if x not in (0x22, 0x5C)] + list(range(0x80, 0x100))
valid = ["\u00e9", "\u20ac", "\U0001f600", "\u0800", "\uffff", "\U00010000", "\U0010ffff"]
for _ in range(400):
    out = bytearray()
    for _ in range(rng.randint(1, 24)):
        r = rng.random()
        if r < 0.25:
            out += valid[rng.randrange(len(valid))].encode()
        elif r < 0.4:
            out += valid[rng.randrange(len(valid))].encode()[: rng.randint(1, 3)]
        else:
            out.append(rng.choice(alphabet))
    cases.append(bytes(out))

for b in cases:
    assert not any(x < 0x20 or x in (0x22, 0x5C) for x in b), b
    rep, ign, n, at = expect(b)
    print("\t".join(x.hex() or "-" for x in (b, rep, ign)) + "\t%d\t%d" % (n, at))
print(f"{len(cases)} cases", file=sys.stderr)

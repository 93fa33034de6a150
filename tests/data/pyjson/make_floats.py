#!/usr/bin/env python3
"""Writes floats.txt: doubles and Python's json.dumps of each (repr(float),
with NaN/Infinity as json.dumps writes them), the reference of
stream/pyjson.c's sl_pyjson_float (tests/unit/test_stream_pyjson.c).

Each line: the double's 64 bits as 16 hex digits, a space, json.dumps(x).
The doubles: every power of two (the rounding interval is lopsided there),
powers of ten and their neighbours, the bounds of repr's fixed notation
(1e-4 and 1e16), subnormals, integers around 2^53, values near halfway
between two short decimals, float32 values widened to double (what
fastText and datatrove scores are), random.random() values, short
decimals at every exponent, and random bit patterns (seeded, so the file
regenerates byte for byte with the same Python).

    python3 tests/data/pyjson/make_floats.py > tests/data/pyjson/floats.txt
"""
import json
import math
import random
import struct


def bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def frombits(b):
    return struct.unpack("<d", struct.pack("<Q", b))[0]


def main():
    rng = random.Random(20261129)
    xs = []
    xs += [0.0, -0.0, math.inf, -math.inf, math.nan]
    xs += [math.ldexp(1.0, e) for e in range(-1074, 1024)]
    for e in range(-325, 309):
        try:
            x = float("1e%d" % e)
        except OverflowError:
            continue
        if x == 0.0 or math.isinf(x):
            continue
        xs += [x, math.nextafter(x, 0.0), math.nextafter(x, math.inf)]
    for x in (1e-4, 1e16, 9.999999999999999e15, 1e15, 0.0001, 0.00009999999999999999):
        xs += [x, math.nextafter(x, 0.0), math.nextafter(x, math.inf)]
    xs += [frombits(1), frombits(2), frombits(3), frombits(0x000FFFFFFFFFFFFF), frombits(0x0010000000000000),
           frombits(0x0010000000000001), frombits(0x7FEFFFFFFFFFFFFF)]
    xs += [frombits(rng.randrange(1, 1 << 52)) for _ in range(200)]  # subnormals
    for k in range(-40, 41):
        xs.append(float(2 ** 53 + k))
        xs.append(float(10 ** 17 + k * 8))
    # halfway-looking values: short decimals plus half a unit in the last place
    for _ in range(300):
        d = rng.randrange(1, 10 ** rng.randrange(1, 16))
        e = rng.randrange(-20, 20)
        xs.append(float("%d5e%d" % (d, e)))
    xs += [struct.unpack("<f", struct.pack("<f", rng.random()))[0] for _ in range(400)]
    xs += [rng.random() for _ in range(300)]
    xs += [rng.random() * 10.0 ** rng.randrange(-12, 22) for _ in range(300)]
    for _ in range(400):
        nd = rng.randrange(1, 18)
        xs.append(float("%s.%se%d" % (rng.randrange(1, 10), "".join(rng.choice("0123456789") for _ in range(nd - 1)),
                                      rng.randrange(-320, 309))))
    xs += [frombits(rng.getrandbits(64)) for _ in range(600)]
    out = []
    for i, x in enumerate(xs):
        if i % 5 == 3 and not math.isnan(x):
            x = -x
        out.append("%016x %s" % (bits(x), json.dumps(x)))
    print("\n".join(out))


main()

#!/usr/bin/env python3
"""Reference vectors for base/rng.h, written from the published algorithms
with Python's exact integers (no sluice code involved):

- SplitMix64: Steele, Lea, Flood, OOPSLA 2014; constants of Vigna's
  splitmix64.c (https://prng.di.unimi.it/splitmix64.c).
- range: Lemire, "Fast random integer generation in an interval", ACM TOMACS
  2019, algorithm 5 (multiply-shift, redraw while the low half of the
  product is below 2^64 mod n).
- unit: top 53 bits / 2^53; unit_at(seed, k): state = seed ^ (k * C), one
  draw discarded, then unit.

Run: python3 make_rng_vectors.py > rng_vectors.tsv (python3 3.11, no packages).
"""
M = (1 << 64) - 1


def splitmix64(st):
    st[0] = (st[0] + 0x9E3779B97F4A7C15) & M
    z = st[0]
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)


def below(st, n):
    if n <= 1:
        return 0
    m = splitmix64(st) * n
    lo = m & M
    if lo < n:
        t = (1 << 64) % n
        while lo < t:
            m = splitmix64(st) * n
            lo = m & M
    return m >> 64


def unit(st):
    return (splitmix64(st) >> 11) / float(1 << 53)


def unit_at(seed, k):
    st = [seed ^ ((k * 0xD1B54A32D192ED03) & M)]
    splitmix64(st)
    return unit(st)


print("# kind\tseed\targ\tvalues (decimal; unit values as the hex of the IEEE-754 double)")
for seed in (0, 1234567, M):
    st = [seed]
    print("next\t%d\t0\t%s" % (seed, ",".join(str(splitmix64(st)) for _ in range(8))))
for seed in (0, 42, 1234567):
    for n in (0, 1, 2, 3, 10, 199, 1000, (1 << 32) + 1, (1 << 63) + 1, 3 << 62, M):
        st = [seed]
        vals = [below(st, n) for _ in range(16)]
        print("below\t%d\t%d\t%s" % (seed, n, ",".join(map(str, vals)) + ";" + str(st[0])))
for seed in (0, 9):
    st = [seed]
    print("unit\t%d\t0\t%s" % (seed, ",".join(unit(st).hex() for _ in range(6))))
    print("unit_at\t%d\t0\t%s" % (seed, ",".join(unit_at(seed, k).hex() for k in range(6))))

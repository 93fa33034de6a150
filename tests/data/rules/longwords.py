"""A document whose word n-grams pass 64 KiB (for gopher repetition's
powers of its hash base past its table, text/rules.c pb_pow): eight words of
15,000-16,400 letters, in an order that repeats 5- to 10-grams. Pure Python,
deterministic; used by tests/cli/filter_rules.sh and
make_longwords_fixture.py."""


def words():
    out = []
    for k in range(8):
        n = 15000 + 200 * k
        # letters only (one spaCy token each), distinct from the first letter on
        out.append("".join(chr(ord("a") + (k + 3 * i + i // 7) % 26) for i in range(n)))
    return out


def doc():
    w = words()
    order = [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 2, 3, 4, 5, 6, 0, 1, 7, 6, 5, 4, 3, 2, 1, 0]
    return " ".join(w[i] for i in order) + "\n" + " ".join(w[i] for i in order[:12])

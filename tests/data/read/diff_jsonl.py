#!/usr/bin/env python3
"""Randomized differential test of `sluice read` on JSON Lines against CPython's
json module and the rules of docs/read.md (a developer tool; not run by
`make test`; the standard library only).

    python3 tests/data/read/diff_jsonl.py --seed 1 --n 500 --sluice build/sluice
    python3 tests/data/read/diff_jsonl.py --seed 1 --case 17 --keep -v       # one case again
    python3 tests/data/read/diff_jsonl.py --seed 1 --case 17 --minimize      # shrink it
    ASAN_OPTIONS=exitcode=99 UBSAN_OPTIONS=exitcode=98 \\
      python3 tests/data/read/diff_jsonl.py --n 400 --sluice build-asan/sluice  # an exit above 2: "crash"

Each case (seed, number) writes one or two random JSON Lines files: objects
with random nesting and white space (space, tab, CR; and the bytes Python
does not take as white space: VT, FF, NBSP, U+3000), strings with every
escape (the one-character ones, \\uXXXX in both cases, surrogate pairs, lone
and reversed surrogates, \\u0000, \\/), raw UTF-8 of 1 to 4 bytes, raw
invalid UTF-8 (truncated, overlong, surrogates, above U+10FFFF, stray
continuation bytes), raw control characters, long strings with escapes
and multi-byte characters at every offset across the 16/32/64-byte blocks
of the string decoder, numbers of every shape (big integers beyond 64 bits,
-0, exponents, 1E400, NaN, Infinity, -Infinity), ids of every type, the
text field missing, duplicated or not a string, keys spelled with escapes,
{"__float__": ...} objects, deep nesting; and bad lines: truncated, trailing
commas, data after the object, single quotes, comments, bad escapes and
numbers, unquoted keys, a raw newline inside a string, a root that is no
object. Files have a BOM or not, LF or CRLF line ends, blank lines, a last
line with or without its line end. Options are random too: --field (other
names, "id", with a "text" field to drop), --invalid replace|skip|error,
--on-error fail|skip, --format, --max-doc-bytes just around the lines'
lengths, --mem-budget, -@ 1|2, standard input or files.

The expected output is computed here, independently of sluice: lines split
on b"\\n" (a "\\r" before it dropped), white-space-only lines skipped, a BOM
at the start of a source dropped; each line read by json.loads (strict, on
the line decoded with each maximal invalid UTF-8 subsequence marked, so that
a mark outside a string makes the line malformed and one inside a string
becomes U+FFFD, or nothing with --invalid skip; lone surrogates become
U+FFFD); the text is the last value of --field, the id the last "id" (a
string, a number kept as written, null or absent: SOURCE:N); every other
field in input order, duplicates too, numbers as written, strings as
json.dumps(ensure_ascii=False) writes them, compact. A bad line (not JSON,
not an object, no string text, an id of another type) must stop the run
with `sluice: read: SOURCE:LINE: what` (exit 1, no -o file) or be skipped
and counted with --on-error skip; a line longer than --max-doc-bytes and
invalid UTF-8 with --invalid error stop the run in both modes. Each output
line is compared byte for byte with the expected one, and when they differ,
as values (json.loads of both, floats by repr, key order kept) to tell a
difference of value from one of spelling. The repair and skip counts of the
summary on stderr are checked. Some cases also run with the other thread
count, from standard input, and as --part R/N pieces, whose concatenation
must be the output of the whole run.

Documented differences from Python are expected, not reported: nesting
deeper than 512 (SL_JSON_MAX_DEPTH) is a bad line; big integers are kept
as written whatever their length (Python 3.11's limit of 4300 digits for
int() is lifted here).

--keep keeps each failing case's files, the command lines and the outputs
under --work; -v prints one line per case. --avoid CLASS[,CLASS] stops the
generator from producing a known discrepancy (see AVOIDABLE) so that others
can be found. Exit status: 0 when every case agrees, 1 otherwise.
"""
import codecs
import collections
import json
import os
import random
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import diffcli  # noqa: E402  (tests/data/diffcli.py: the command line)

sys.setrecursionlimit(20000)  # nesting up to 600 deep (the reference walks it recursively)
if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(0)

# Generator switches for known discrepancies (--avoid).
AVOIDABLE = {
    "float_obj": 'objects whose keys are all "__float__" (transformers\' spelling of a non-finite float)',
    "deep": "nesting deeper than 500",
    "nonfinite": "NaN, Infinity and -Infinity",
}

MARK = "\ufdd0"  # a maximal invalid UTF-8 subsequence (never generated as a character)
codecs.register_error("diffjsonl_mark", lambda e: (MARK, e.end))
LONE = re.compile("[\ud800-\udfff]")
WS = b" \t\r\n"


class Num(str):
    """A number, as its text."""


class Obj(list):
    """An object, as its (key, value) pairs in order, duplicates kept."""


def pyload(s):
    return json.loads(s, object_pairs_hook=Obj, parse_int=Num, parse_float=Num, parse_constant=Num)


# ---- generator --------------------------------------------------------------

SHORT_ESC = [b'\\"', b"\\\\", b"\\/", b"\\b", b"\\f", b"\\n", b"\\r", b"\\t"]
BAD_UTF8 = [b"\x80", b"\xbf", b"\xc0\xaf", b"\xc1\xbf", b"\xc2", b"\xdf", b"\xe0\x80\x80", b"\xe0\x9f\xbf",
            b"\xe2\x82", b"\xe2", b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xef\xbf", b"\xf0\x8f\xbf\xbf", b"\xf0\x9f\x98",
            b"\xf0\x9f", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xf8\x88\x80\x80\x80", b"\xfe", b"\xff",
            b"\xc3\x28", b"\xe2\x28\xa1", b"\x80\x80\x80"]
BAD_NUM = [b"01", b"-01", b"+1", b".5", b"1.", b"1.e5", b"1e", b"1e+", b"-", b"0x10", b"1_000", b"-NaN", b"nan",
           b"inf", b"Inf", b"infinity", b"+Infinity", b"--1", b"1.5.2", b"\xd9\xa1", b"00", b"-.5", b"1e5.5",
           b"NaNN", b"Infinit", b"- 1", b"1 2"]
BAD_WS = [b"\x0b", b"\x0c", b"\xc2\xa0", b"\xe3\x80\x80", b"\xe2\x80\xa8", b"\xef\xbb\xbf", b"\x00", b"\x1c",
          b"\xc2\x85"]
BAD_ESC = [b"\\x41", b"\\'", b"\\U0001F600", b"\\a", b"\\0", b"\\u12", b"\\u12G4", b"\\u 123", b"\\u+123",
           b"\\u-123", b"\\u1_23", b"\\", b"\\v", b"\\e", b"\\\xc3\xa9", b"\\u00", b"\\N"]
FIELDS = ["content", "body", "doc.body", "\u00e9t\u00e9", "a b", "id", "Text", 'te"xt', "t\\x", "\u6587",
          "\U0001f600", "__float__", "text "]


def hex4(cp, rng):
    h = "%04x" % cp
    if rng.random() < 0.3:
        h = h.upper()
    elif rng.random() < 0.2:
        h = "".join(c.upper() if rng.random() < 0.5 else c for c in h)
    return b"\\u" + h.encode()


def rand_char(rng):
    """One random non-ASCII character (not a surrogate, not the mark)."""
    while True:
        k = rng.random()
        if k < 0.4:
            cp = rng.randint(0x80, 0x7FF)
        elif k < 0.75:
            cp = rng.choice([rng.randint(0x800, 0xFFFF), 0x2028, 0x2029, 0xFEFF, 0xFFFD, 0xFFFF, 0x3000, 0x800])
        else:
            cp = rng.choice([rng.randint(0x10000, 0x10FFFF), 0x1F600, 0x10000, 0x10FFFF])
        if not (0xD800 <= cp <= 0xDFFF or 0xFDD0 <= cp <= 0xFDEF):
            return chr(cp)


class Gen:
    def __init__(self, rng, avoid, clean):
        self.r = rng
        self.avoid = avoid
        self.clean = clean  # every line a good one (for runs that stop at the first bad line)
        r = rng
        self.p_inv = r.choice([0, 0, 0.02, 0.1])  # raw invalid UTF-8 in strings
        self.p_ctrl = r.choice([0, 0, 0.005, 0.03])  # raw control characters in strings
        self.p_ws = r.choice([0, 0.1, 0.5])  # white space between tokens
        self.p_lone = r.choice([0, 0.02, 0.1])  # lone surrogates
        self.p_esc = r.choice([0.02, 0.1, 0.3])
        self.p_high = r.choice([0, 0.05, 0.3])  # raw multi-byte characters
        self.long = r.random() < 0.3

    # -- strings: the bytes between the quotes
    def piece(self):
        r = self.r
        k = r.random()
        if k < self.p_inv:
            return r.choice(BAD_UTF8)
        if k < self.p_inv + self.p_ctrl and not self.clean:
            return bytes([r.choice([0, 1, 9, 10, 13, 0x1f, r.randint(0, 0x1f)])]) if r.random() < 0.9 else b"\n"
        k = r.random()
        if k < self.p_lone:
            return r.choice([hex4(r.randint(0xD800, 0xDBFF), r), hex4(r.randint(0xDC00, 0xDFFF), r),
                             hex4(0xDE00, r) + hex4(0xD83D, r), hex4(0xD800, r) + hex4(0xD800, r) + hex4(0xDC00, r),
                             hex4(0xD800, r) + b"\\n", hex4(0xDBFF, r) + b"x", hex4(0xD800, r) + hex4(0x41, r)])
        if k < self.p_lone + self.p_esc:
            j = r.random()
            if j < 0.45:
                return r.choice(SHORT_ESC)
            if j < 0.6:
                return hex4(r.choice([0, 0x1f, 0x7f, 0x22, 0x5c, 0x2f, r.randint(0, 0x7f)]), r)
            if j < 0.8:
                c = rand_char(r)
                if ord(c) > 0xFFFF:
                    u = c.encode("utf-16-be")
                    return hex4(int.from_bytes(u[:2], "big"), r) + hex4(int.from_bytes(u[2:], "big"), r)
                return hex4(ord(c), r)
            return hex4(r.randint(0, 0xD7FF), r)
        if k < self.p_lone + self.p_esc + self.p_high:
            return rand_char(r).encode()
        if r.random() < 0.02:
            return b"\x7f"
        n = r.choice([1, 1, 2, 3, 5, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65])
        alpha = b"abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789.,;:!?'{}[]<>#@%&*()-+=_~`|^$"
        return bytes(r.choice(alpha) for _ in range(n))

    def string(self, long=False):
        r = self.r
        if long or (self.long and r.random() < 0.3):
            # a long run with escapes at chosen offsets (block boundaries of the decoder)
            total = r.choice([15, 16, 17, 31, 32, 33, 47, 48, 62, 63, 64, 65, 66, 79, 80, 127, 128, 129, 200, 300,
                              1000, r.randint(1, 400)])
            if r.random() < 0.003:  # longer than the reader's 1 MiB chunks
                total = r.randint(1 << 20, 3 << 20)
            out = bytearray()
            while len(out) < total:
                if r.random() < 0.15:
                    out += self.piece()
                else:
                    out += bytes(r.choice(b"abcdefgh ") for _ in range(r.randint(1, 70)))
            if r.random() < 0.5:  # something special at an exact offset
                at = r.randint(0, len(out))
                while at > 0 and at < len(out) and out[at - 1] == 0x5c:
                    at -= 1
                out[at:at] = r.choice([self.piece(), b"\\\\", b"\\n", b"\\\"", hex4(0xe9, r), b"\\\\\\\\",
                                       "\u00e9".encode(), "\U0001f600".encode()])
            return b'"' + bytes(out) + b'"'
        k = r.random()
        if k < 0.1:
            return b'""'
        return b'"' + b"".join(self.piece() for _ in range(r.randint(1, 6))) + b'"'

    def number(self):
        r = self.r
        k = r.random()
        if k < 0.3:
            return str(r.randint(-1000, 100000)).encode()
        if k < 0.4:
            return r.choice([b"0", b"-0", b"-0.0", b"0.0", b"0e0", b"-0E-0", b"0.000"])
        if k < 0.55:
            return r.choice([b"9223372036854775807", b"9223372036854775808", b"-9223372036854775808",
                             b"-9223372036854775809", b"18446744073709551615", b"18446744073709551616",
                             b"9007199254740993", b"123456789012345678", b"1234567890123456789",
                             str(r.randint(10**19, 10**40)).encode(), str(-r.randint(10**19, 10**40)).encode(),
                             b"1" * r.randint(50, 600)])
        if k < 0.85:
            m = r.choice(["1.5", "-1.5", "0.1", "3.14159", "1", "-2", "0.1000000000000000055511151231257827",
                          "2.5", "123456789.123456789", str(r.random()), str(r.uniform(-1e6, 1e6))])
            e = r.choice(["", "", "e5", "E5", "e+5", "E-5", "e400", "E400", "e-400", "e308", "e-324", "e0", "e-0",
                          "e+0", "e00017", "E999999999999999999999"])
            return (m + e).encode()
        if "nonfinite" in self.avoid:
            return b"1e400"
        return r.choice([b"NaN", b"Infinity", b"-Infinity", b"1E400", b"-1e400", b"1e-400"])

    def ws(self):
        r = self.r
        if r.random() >= self.p_ws:
            return b""
        return bytes(r.choice(b"    \t\r") for _ in range(r.randint(1, 3)))

    def value(self, depth):
        """A value as a list of tokens."""
        r = self.r
        k = r.random()
        if depth > 4:
            k = k * 0.6
        if k < 0.25:
            return [self.string()]
        if k < 0.45:
            return [self.number()]
        if k < 0.55:
            return [r.choice([b"null", b"true", b"false"])]
        if k < 0.6 and "float_obj" not in self.avoid:
            w = r.choice([b'"NaN"', b'"Infinity"', b'"-Infinity"', b'"nan"', b"1"])
            t = [b"{", b'"__float__"', b":", w, b"}"]
            if r.random() < 0.2:
                t = [b"{", b'"__float__"', b":", b'"x"', b",", b'"__float__"', b":", w, b"}"]
            return t
        if k < 0.8:
            t = [b"["]
            for i in range(r.randint(0, 4)):
                if i:
                    t.append(b",")
                t += self.value(depth + 1)
            return t + [b"]"]
        t = [b"{"]
        for i in range(r.randint(0, 4)):
            if i:
                t.append(b",")
            k = self.string() if r.random() < 0.2 else self.key(r.choice(["a", "b", "id", "text", "\u00e9", ""]))
            t += [k, b":"] + self.value(depth + 1)
        return t + [b"}"]

    def key(self, name):
        """A key token for name, sometimes spelled with escapes."""
        r = self.r
        b = name.encode()
        if name and r.random() < 0.15:
            i = r.randrange(len(name))
            c = name[i]
            esc = hex4(ord(c), r) if ord(c) <= 0xFFFF else c.encode()
            return b'"' + name[:i].encode() + esc + name[i + 1:].encode() + b'"'
        return b'"' + json.dumps(name, ensure_ascii=False)[1:-1].encode() + b'"'

    def obj_line(self, field):
        """The tokens of one object line (most of them valid)."""
        r = self.r
        pairs = []
        k = r.random()
        if k < 0.9 or self.clean:
            pairs.append((field, [self.string(long=self.long and r.random() < 0.5)]))
        elif k < 0.95:
            pairs.append((field, self.value(1)))
        if field != "text" and r.random() < 0.3:
            pairs.append(("text", [self.string()]))
        k = r.random()
        if k < 0.25:
            pairs.append(("id", [self.string()]))
        elif k < 0.45:
            pairs.append(("id", [self.number()]))
        elif k < 0.5:
            pairs.append(("id", [b"null"]))
        elif k < 0.55 and not self.clean:
            pairs.append(("id", self.value(1)))
        for _ in range(r.choice([0, 0, 1, 2, 3, 5])):
            if r.random() < 0.2:  # a key of any string (escapes, raw or invalid UTF-8)
                pairs.append((self.string(), self.value(1)))
                continue
            pairs.append((r.choice(["a", "b", "meta", "url", "n", "\u00e9", "a\"b", "", "\u0000k", "text2",
                                    "ID", "Id", "textx"]), self.value(1)))
        if r.random() < 0.15 and pairs:  # a duplicate key
            kname = r.choice([p[0] for p in pairs if isinstance(p[0], str)] + ["id", field])
            pairs.insert(r.randint(0, len(pairs)), (kname, self.value(1) if r.random() < 0.3 else [self.string()]))
        r.shuffle(pairs)
        t = [b"{"]
        for i, (kn, v) in enumerate(pairs):
            if i:
                t.append(b",")
            t += [kn if isinstance(kn, bytes) else self.key(kn), b":"] + v
        return t + [b"}"]

    def join(self, toks):
        out = bytearray(self.ws())
        for t in toks:
            out += t + self.ws()
        return bytes(out)

    def mutate(self, toks):
        """A bad line (or, by chance, a valid one) from the tokens of one."""
        r = self.r
        toks = list(toks)
        m = r.choice(["trunc", "trail_comma", "after", "before", "squote", "comment", "ctrl", "badnum", "badesc",
                      "unquote", "drop", "dup", "root", "badws", "inv_out", "newline", "empty", "pyword"])
        strs = [i for i, t in enumerate(toks) if t.startswith(b'"')]
        if m == "trunc":
            line = self.join(toks)
            return line[:r.randrange(len(line))] if line else line
        if m == "trail_comma":
            closes = [i for i, t in enumerate(toks) if t in (b"}", b"]")]
            toks.insert(r.choice(closes), b",")
        elif m == "after":
            toks.append(r.choice([b"x", b"{}", b",", b"]", b"}", b"//c", b"/*c*/", b'"s"', b"0", b"{\"text\":\"a\"}",
                                  b"null", b"\x00"]))
        elif m == "before":
            toks.insert(0, r.choice([b"x", b",", b"[", b"//", b"\xef\xbb\xbf", b"\x00", b"0"]))
        elif m == "squote" and strs:
            i = r.choice(strs)
            toks[i] = b"'" + toks[i][1:-1] + b"'"
        elif m == "comment":
            toks.insert(r.randint(1, len(toks)), r.choice([b"/* c */", b"// c", b"#c"]))
        elif m == "ctrl" and strs:
            i = r.choice(strs)
            at = r.randint(1, len(toks[i]) - 1)
            toks[i] = toks[i][:at] + bytes([r.choice([0, 1, 8, 9, 0x1b, 0x1f, 0x0d])]) + toks[i][at:]
        elif m == "badnum":
            nums = [i for i, t in enumerate(toks) if t[:1] in b"-0123456789NI"]
            bad = r.choice(BAD_NUM)
            if nums:
                toks[r.choice(nums)] = bad
            else:
                toks[-1:-1] = [b",", b'"n"', b":", bad]
        elif m == "badesc" and strs:
            i = r.choice(strs)
            at = r.randint(1, len(toks[i]) - 1)
            while at > 1 and toks[i][at - 1] == 0x5c:
                at -= 1
            toks[i] = toks[i][:at] + r.choice(BAD_ESC) + toks[i][at:]
        elif m == "unquote" and strs:
            i = r.choice(strs)
            toks[i] = toks[i][1:-1] or b"k"
        elif m == "drop":
            del toks[r.randrange(len(toks))]
        elif m == "dup":
            i = r.randrange(len(toks))
            toks.insert(i, toks[i])
        elif m == "root":
            toks = r.choice([[b"[", b'"text"', b"]"], [b'"text"'], [b"1"], [b"null"], [b"true"],
                             [b"[", b"{", b'"text"', b":", b'"a"', b"}", b"]"], [b"NaN"],
                             [b"{", b'"__float__"', b":", b'"NaN"', b"}"],
                             [b"{", b'"__float__"', b":", b'"Infinity"', b",", b'"__float__"', b":", b'"-Infinity"',
                              b"}"]])
        elif m == "badws":
            toks.insert(r.randint(0, len(toks)), r.choice(BAD_WS))
        elif m == "inv_out":
            toks.insert(r.randint(0, len(toks)), r.choice(BAD_UTF8))
        elif m == "newline" and strs:
            i = r.choice(strs)
            at = r.randint(1, len(toks[i]) - 1)
            while at > 1 and toks[i][at - 1] == 0x5c:
                at -= 1
            toks[i] = toks[i][:at] + b"\n" + toks[i][at:]
        elif m == "empty":
            toks = [b"{", b"}"]
        elif m == "pyword":
            toks = [b"{", b'"text"', b":", b'"a"', b",", b'"x"', b":", r.choice([b"True", b"None", b"undefined",
                                                                           b"nil", b"FALSE"]), b"}"]
        return self.join(toks)

    def deep(self, field):
        r = self.r
        d = r.choice([62, 63, 64, 65, 66, 130, 255, 256, 257, 500, 510, 511, 512, 513, 600])
        inner = [b"["] * d + [b"]"] * d if r.random() < 0.5 else [b'{"a":'] * d + [b"1"] + [b"}"] * d
        return self.join([b"{", self.key(field), b":", b'"deep"', b",", b'"x"', b":"] + inner + [b"}"])


def gen_case(seed, k, avoid):
    r = random.Random("%s:%d" % (seed, k))
    c = {}
    c["field"] = "text" if r.random() < 0.7 else r.choice(FIELDS)
    c["invalid"] = r.choice(["replace"] * 5 + ["skip"] * 2 + ["error"] * 2)
    c["on_error"] = r.choice(["fail", "skip"])
    clean = c["on_error"] == "fail" and r.random() < 0.6
    g = Gen(r, avoid, clean)
    c["threads"] = r.choice([1, 2])
    c["format"] = r.choice(["auto"] * 9 + ["jsonl"])
    c["mem_budget"] = r.choice([None, None, "1M", "2M"])
    c["input"] = r.choice(["file"] * 6 + ["stdin"] * 2 + ["two"] * 2)
    nlines = r.choice([1, 2, 3, 5, 10, 30, 100, 300]) if r.random() > 0.04 else r.choice([2000, 5000])
    p_bad = 0 if clean or r.random() < 0.3 else (r.choice([0.01, 0.05, 0.2]) if c["on_error"] == "skip" else 0.02)
    eol = r.choice(["lf", "lf", "crlf", "mixed"])
    nsrc = 2 if c["input"] == "two" else 1
    sources = []
    for si in range(nsrc):
        out = bytearray()
        if r.random() < 0.15:
            out += b"\xef\xbb\xbf"
        for i in range(nlines // nsrc or 1):
            if r.random() < 0.05:
                out += r.choice([b"", b" ", b"\t", b"  \t ", b"\r", b"", b" ", b"\r\r"] +
                                ([] if clean else [b"\x0c", b" \x0b "]))
            elif r.random() < 0.01 and "deep" not in avoid:
                out += g.deep(c["field"])
            else:
                toks = g.obj_line(c["field"])
                out += g.mutate(toks) if r.random() < p_bad else g.join(toks)
            e = {"lf": b"\n", "crlf": b"\r\n", "mixed": r.choice([b"\n", b"\r\n"])}[eol]
            out += e
        if r.random() < 0.3:
            out = out.rstrip(b"\n")  # last line without its end
        if r.random() < 0.03:
            out = r.choice([b"", b"\xef\xbb\xbf", b"\n\n", b" \r\n", b"\xef\xbb\xbf \n"])  # an empty source
        sources.append(bytes(out))
    c["sources"] = sources
    if r.random() < 0.1:
        lens = sorted(len(x) for s in sources for x in strip_bom(s).split(b"\n"))
        c["max_doc"] = max(1, r.choice(lens) + r.choice([-1, 0, 0, 1]))
    c["part"] = r.choice([0, 0, 0, 2, 3, 5]) if c["input"] != "stdin" else 0
    c["other_threads"] = r.random() < 0.15
    return c


def strip_bom(s):
    return s[3:] if s.startswith(b"\xef\xbb\xbf") else s


def first_byte(s):
    s = strip_bom(s)
    for b in s:
        if b not in WS:
            return b
    return None


# ---- reference ----------------------------------------------------------------


def fix_strings(v, mode, count):
    """The strings of v as sluice decodes them (marks and lone surrogates replaced)."""
    def fs(s):
        count[0] += s.count(MARK) + len(LONE.findall(s))
        return LONE.sub("\ufffd", s.replace(MARK, "" if mode == "skip" else "\ufffd"))
    if isinstance(v, Num):
        return v
    if isinstance(v, str):
        return fs(v)
    if isinstance(v, Obj):
        return Obj((fs(k), fix_strings(x, mode, count)) for k, x in v)
    if isinstance(v, list):
        return [fix_strings(x, mode, count) for x in v]
    return v


def depth_of(v):
    if isinstance(v, list):
        return 1 + max([depth_of(x[1] if isinstance(v, Obj) else x) for x in v] or [0])
    return 0


def sdump(s):
    return json.dumps(s, ensure_ascii=False)


def dump(v):
    if isinstance(v, Obj):
        return "{" + ",".join(sdump(k) + ":" + dump(x) for k, x in v) + "}"
    if isinstance(v, list):
        return "[" + ",".join(dump(x) for x in v) + "]"
    if isinstance(v, Num):
        return str(v)
    if isinstance(v, str):
        return sdump(v)
    return {None: "null", True: "true", False: "false"}[v]


def ref_line(ln, field, mode):
    """(kind, value): ("ok", (id, text, meta, invalid)) or ("bad", why)."""
    s = ln.decode("utf-8", "diffjsonl_mark")
    try:
        v = pyload(s)
    except (ValueError, RecursionError):
        return "bad", "malformed"
    if depth_of(v) > 512:
        return "bad", "malformed"  # documented: SL_JSON_MAX_DEPTH
    count = [0]
    v = fix_strings(v, mode, count)
    if not isinstance(v, Obj):
        return "bad", "not object"
    last = dict(v)  # the last duplicate wins
    if field not in last:
        return "bad", "no field"
    text = last[field]
    if not isinstance(text, str) or isinstance(text, Num):
        return "bad", "not string"
    ident = last.get("id")
    if ident is not None and (not isinstance(ident, str) or isinstance(ident, Obj)):
        return "bad", "bad id"
    drop = {"id", field, "text"}
    meta = [(k, x) for k, x in v if k not in drop]
    return "ok", (ident, text, meta, count[0])


BAD_MSG = {
    "malformed": lambda f: r"offset \d+: ",
    "not object": lambda f: re.escape("not a JSON object"),
    "no field": lambda f: re.escape('no "%s" field' % f),
    "not string": lambda f: re.escape('field "%s" is not a string' % f),
    "bad id": lambda f: re.escape('field "id" is not a string or a number'),
}


def expect(c, names):
    """{"ok": lines} or {"fail": (source, line, regex)}; with "skipped", "invalid"."""
    field, mode = c["field"], c["invalid"]
    maxdoc = c.get("max_doc", 64 << 20)
    out, skipped, invalid = [], 0, 0
    for name, data in zip(names, c["sources"]):
        data = strip_bom(data)
        empty = first_byte(data) is None  # no documents, but its lines are bounded too
        lines = data.split(b"\n")
        if lines[-1] == b"":
            lines.pop()
        ndoc = 0
        for no, raw in enumerate(lines, 1):
            if len(raw) > maxdoc:
                return {"fail": (name, no, re.escape("line longer than --max-doc-bytes (%d bytes)" % maxdoc),
                                 "line too long")}
            if empty:
                continue
            ln = raw[:-1] if raw.endswith(b"\r") else raw
            if not ln.strip(WS):
                continue
            if mode == "error":
                try:
                    ln.decode("utf-8")
                except UnicodeDecodeError as e:
                    return {"fail": (name, no, re.escape("invalid UTF-8 (byte %d of the line)" % e.start),
                                     "invalid UTF-8")}
            kind, v = ref_line(ln, field, mode)
            if kind == "bad":
                if c["on_error"] == "fail":
                    return {"fail": (name, no, BAD_MSG[v](field), v)}
                skipped += 1
                continue
            ident, text, meta, inv = v
            ndoc += 1
            invalid += inv
            if ident is None:
                idj = sdump("%s:%d" % (name, ndoc))
            elif isinstance(ident, Num):
                idj = str(ident)
            else:
                idj = sdump(ident)
            out.append("{" + ",".join(['"id":' + idj, '"text":' + sdump(text)] +
                                      [sdump(k) + ":" + dump(x) for k, x in meta]) + "}")
    return {"ok": out, "skipped": skipped, "invalid": invalid}


def norm(v):
    """A parsed value for comparison: floats by repr (NaN equal to NaN), key order kept."""
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, float):
        return ("float", repr(v))
    if isinstance(v, int):
        return ("int", v)
    if isinstance(v, dict):
        return ("obj", [(k, norm(x)) for k, x in v.items()])
    if isinstance(v, list):
        return [norm(x) for x in v]
    return v


# ---- running sluice -------------------------------------------------------------


def write_inputs(c, work, tag):
    names = []
    for i, data in enumerate(c["sources"]):
        nm = "%s%s.jsonl" % (tag, "ab"[i] if len(c["sources"]) > 1 else "")
        with open(os.path.join(work, nm), "wb") as f:
            f.write(data)
        names.append(nm)
    return names


def base_args(c, threads):
    a = ["read", "-@", str(threads), "--invalid", c["invalid"], "--on-error", c["on_error"]]
    if c["field"] != "text":
        a += ["--field", c["field"]]
    if c["format"] != "auto" or any(first_byte(s) not in (None, 0x7B) for s in c["sources"]):
        a += ["--format", "jsonl"]  # (a source not starting with '{' would be plain text)
    if c.get("max_doc"):
        a += ["--max-doc-bytes", str(c["max_doc"])]
    if c.get("mem_budget"):
        a += ["--mem-budget", c["mem_budget"]]
    return a


def run(sluice, args, work, stdin=None):
    with open(os.path.join(work, stdin), "rb") if stdin else open(os.devnull, "rb") as f:
        p = subprocess.run([sluice] + args, cwd=work, stdin=f, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=300)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def compare_lines(exp, got):
    """Problems (class, detail) between the expected lines and sluice's output bytes."""
    probs = []
    try:
        gl = got.decode("utf-8").split("\n")
    except UnicodeDecodeError as e:
        return [("output not UTF-8", str(e))]
    if gl[-1] != "":
        probs.append(("output: no final newline", repr(gl[-1][:200])))
    else:
        gl.pop()
    for i in range(max(len(exp), len(gl))):
        e = exp[i] if i < len(exp) else None
        g = gl[i] if i < len(gl) else None
        if e == g:
            continue
        if e is None or g is None:
            probs.append(("document count", "expected %d documents, got %d; first extra/missing: %s" % (
                len(exp), len(gl), (e if g is None else g)[:300])))
            break
        try:
            gv = norm(json.loads(g))
        except ValueError as err:
            probs.append(("output line not JSON", "%s: %s" % (err, g[:300])))
            continue
        ev = norm(json.loads(e))
        cls = "value" if gv != ev else "spelling"
        probs.append((cls, "document %d\n      expected %s\n      sluice   %s" % (i + 1, e[:600], g[:600])))
    return probs


def check(c, sluice, work, tag):
    """The problems of case c: a list of (class, detail)."""
    names = write_inputs(c, work, tag)
    stdin_names = ["<stdin>"] if c["input"] == "stdin" else names
    exp = expect(c, stdin_names)
    c["_outcome"] = "fails: " + exp["fail"][3] if "fail" in exp else "ok"
    c["_docs"], c["_skipped"] = len(exp.get("ok", [])), exp.get("skipped", 0)
    args = base_args(c, c["threads"])
    outname = tag + ".out.jsonl"
    outp = os.path.join(work, outname)
    if os.path.exists(outp):
        os.unlink(outp)
    if c["input"] == "stdin":
        rc, out, err = run(sluice, args, work, stdin=names[0])
    else:
        rc, out, err = run(sluice, args + ["-o", outname] + names, work)
        if os.path.exists(outp):
            with open(outp, "rb") as f:
                out = f.read()
    c["_cmd"] = " ".join([sluice] + args + (["<", names[0]] if c["input"] == "stdin" else ["-o", outname] + names))
    probs = []
    if rc < 0 or rc > 2:
        return [("crash", "exit %d: %s" % (rc, err[-2000:]))]
    if "fail" in exp:
        src, line, what, _ = exp["fail"]
        want = r"^sluice: read: %s:%d: %s" % (re.escape(src), line, what)
        if rc != 1:
            probs.append(("expected failure, exit %d" % rc, "want %s" % want))
            if rc == 0:
                probs += [("(output)", out.decode("utf-8", "replace")[:1500])]
        elif not re.search(want, err, re.M):
            kind = re.sub(r"^sluice: read: [^:]*:\d+: ", "", err.strip().split("\n")[-1])
            kind = re.sub(r"offset \d+", "offset N", kind)
            probs.append(("error differs: %s" % kind[:80], "want /%s/\n      got  %s" % (want, err.strip()[-600:])))
        if c["input"] != "stdin" and os.path.exists(outp):
            probs.append(("output file left after a failure", outname))
        return probs
    if rc != 0:
        kind = re.sub(r"^sluice: read: [^:]*:\d+: ", "", err.strip().split("\n")[-1])
        kind = re.sub(r"offset \d+", "offset N", kind)
        return [("unexpected failure: %s" % kind[:80], err.strip()[-600:])]
    probs += compare_lines(exp["ok"], out)
    m = re.search(r"(\d+) invalid UTF-8 sequence\(s\) (replaced|dropped)", err)
    if (int(m.group(1)) if m else 0) != exp["invalid"]:
        probs.append(("repair count", "expected %d, stderr: %s" % (exp["invalid"], m.group(0) if m else "none")))
    m = re.search(r"(\d+) malformed line\(s\) skipped", err)
    if (int(m.group(1)) if m else 0) != exp["skipped"]:
        probs.append(("skip count", "expected %d, stderr: %s" % (exp["skipped"], m.group(0) if m else "none")))
    if c.get("other_threads"):
        rc2, out2, _ = run(sluice, base_args(c, 3 - c["threads"]) + (names if c["input"] != "stdin" else []),
                           work, stdin=names[0] if c["input"] == "stdin" else None)
        if rc2 != 0 or out2 != out:
            probs.append(("thread count changes the output", "-@ %d: exit %d" % (3 - c["threads"], rc2)))
    if c["input"] == "file" and c["threads"] == 1 and not probs:
        # the same from standard input: ids and messages name <stdin>
        rc2, out2, _ = run(sluice, base_args(c, 1), work, stdin=names[0])
        want = "\n".join(expect(c, ["<stdin>"])["ok"]).encode() + (b"\n" if exp["ok"] else b"")
        if rc2 != 0 or out2 != want:
            probs.append(("stdin differs", "exit %d" % rc2))
    if c.get("part") and c["input"] != "stdin":
        n = c["part"]
        cat = b""
        for k in range(n):
            rc2, out2, err2 = run(sluice, base_args(c, c["threads"]) + ["--part", "%d/%d" % (k, n)] + names, work)
            if rc2 != 0:
                probs.append(("--part fails", "part %d/%d: %s" % (k, n, err2.strip()[-300:])))
                break
            cat += out2
        else:
            if cat != out:
                probs.append(("--part concatenation differs", "N=%d: %d bytes, whole run %d" % (n, len(cat), len(out))))
    return probs


# ---- minimizing -------------------------------------------------------------


def shrink(seq, ok):
    """A shorter seq (list or bytes) for which ok still holds, by deleting chunks."""
    chunk = max(1, len(seq) // 2)
    while True:
        i, changed = 0, False
        while i < len(seq):
            t = seq[:i] + seq[i + chunk:]
            if ok(t):
                seq, changed = t, True
            else:
                i += chunk
        if chunk == 1 and not changed:
            return seq
        chunk = max(1, chunk // 2)


def minimize(c, sluice, work, cls):
    """A smaller case with a problem of the same class: fewer sources, lines, bytes."""
    def same(cc):
        try:
            return any(p[0] == cls for p in check(cc, sluice, work, "min"))
        except Exception:
            return False
    if same(dict(c, other_threads=False, part=0)):
        c = dict(c, other_threads=False, part=0)
    for key in ("max_doc", "mem_budget"):
        if c.get(key) is not None:
            t = dict(c, **{key: None})
            if same(t):
                c = t
    if c["threads"] != 1:
        t = dict(c, threads=1)
        if same(t):
            c = t
    for si in range(len(c["sources"])):  # lines, then bytes
        for split, glue in ((lambda d: d.split(b"\n"), b"\n".join), (lambda d: d, bytes)):
            def ok(t):
                srcs = list(c["sources"])
                srcs[si] = glue(t)
                return len(t) > 0 and same(dict(c, sources=srcs))
            t = shrink(split(c["sources"][si]), ok)
            srcs = list(c["sources"])
            srcs[si] = glue(t)
            c = dict(c, sources=srcs)
    return c


def describe(c):
    keys = ("field", "invalid", "on_error", "threads", "format", "mem_budget", "input", "max_doc", "part")
    return " ".join("%s=%s" % (k, c.get(k)) for k in keys if c.get(k) is not None)


def main():
    a, avoid, sluice, work, cases = diffcli.case_args(
        __doc__, "diff-jsonl-", n=200, avoidable=AVOIDABLE,
        more=lambda ap: ap.add_argument("--show", type=int, default=3,
                                        help="problems printed per failing case (default 3)"))
    classes = collections.OrderedDict()
    outcomes = collections.Counter()
    ndocs = nskipped = 0
    nbad = nlines = nbytes = 0
    for k in cases:
        c = gen_case(a.seed, k, avoid)
        nlines += sum(s.count(b"\n") + 1 for s in c["sources"])
        nbytes += sum(len(s) for s in c["sources"])
        tag = "c%d" % k
        probs = check(c, sluice, work, tag)
        outcomes[c["_outcome"]] += 1
        ndocs += c["_docs"]
        nskipped += c["_skipped"]
        if a.verbose:
            print("case %d: %s, %d bytes: %s" % (k, describe(c), sum(len(s) for s in c["sources"]),
                                                  "ok" if not probs else "DIFFER"))
        for nm in os.listdir(work):
            if nm.startswith(tag + ".") or nm.startswith(tag + "a.") or nm.startswith(tag + "b."):
                if not (probs and a.keep):
                    os.unlink(os.path.join(work, nm))
        if not probs:
            continue
        nbad += 1
        for p in probs:
            classes.setdefault(p[0], []).append(k)
        print("case %d (%s) differs:" % (k, describe(c)))
        print("    %s" % c["_cmd"])
        for p in probs[:a.show]:
            print("  %s: %s" % p)
        if a.keep:
            with open(os.path.join(work, tag + ".txt"), "w") as f:
                f.write(describe(c) + "\n" + c["_cmd"] + "\n" + "\n".join("%s: %s" % p for p in probs) + "\n")
        if a.minimize:
            m = minimize(c, sluice, work, probs[0][0])
            print("  minimal (%s): %s" % (describe(m), " | ".join(repr(s) for s in m["sources"])))
            for p in check(m, sluice, work, "min")[:a.show]:
                print("    %s: %s" % p)
    print("seed %s: %d cases, %d lines, %d bytes; %d differ; work %s" % (
        a.seed, len(cases), nlines, nbytes, nbad, work))
    print("expected: %d documents, %d lines skipped; outcomes: %s" % (
        ndocs, nskipped, ", ".join("%s %d" % kv for kv in outcomes.most_common())))
    if classes:
        print("classes (class: count, first cases):")
        for cl, ks in classes.items():
            print("  %s: %d  %s" % (cl, len(ks), " ".join(map(str, ks[:8]))))
    if not a.work and not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if nbad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Randomized differential test of `sluice read` on Parquet files against
pyarrow (a developer tool; not run by `make test`).

    python3 -m venv /tmp/v && /tmp/v/bin/pip install pyarrow numpy pandas fastparquet polars duckdb
    /tmp/v/bin/python tests/data/parquet/diff_random.py --seed 1 --n 200 --sluice build/sluice
    /tmp/v/bin/python tests/data/parquet/diff_random.py --seed 1 --case 17 --keep -v   # one case again
    /tmp/v/bin/python tests/data/parquet/diff_random.py --seed 1 --case 17 --minimize  # shrink it

Each case (seed, number) builds a random table: every scalar type pyarrow
writes (integers of every width, float16/32/64 with NaN, infinities and -0.0,
bool, strings with random Unicode, large strings, binary, fixed-size binary,
string and binary views, UUID, JSON, bool8, date32/64, timestamps s to ns with
and without time zones, time32/64, decimal32 to decimal256, null,
dictionary-encoded columns; odd column names), nested in lists,
large lists, fixed-size lists, structs and maps, with nulls at every level,
empty lists and all-null columns. It is written with random writer options
(pyarrow: codecs, dictionary on/off, data page v1/v2, tiny pages, row groups,
statistics, per-column encodings DELTA_* / BYTE_STREAM_SPLIT / RLE, decimals
as integers, INT96, legacy list names, page index, bloom filters ...; or
fastparquet, polars, duckdb; each writer runs in a forked child, so that its
crashes only skip the case), then `sluice read` is run on it (with random
-@ threads, --mem-budget, from standard input, or as --part R/N pieces
concatenated) and its output
compared line by line with pq.read_table(FILE).to_pylist() converted as
make_fixtures.py's expected_lines() does (the same conv(); see docs/read.md).

Documented deviations are expected, not reported: a time zone from the Arrow
schema is applied when it is UTC or a fixed offset, a named zone (Europe/Paris)
is written in UTC (pylist.conv); where to_pylist raises (a date
or timestamp outside the years 1 to 9999) sluice must fail with an error;
decimals wider than 32 bytes and an `id` column that is neither a string nor
an integer nor a float (FLOAT, DOUBLE, FLOAT16) nor of the Null type (FILE:N,
as a null id) are errors; a null text is an error (or skipped with
--on-error skip). Files pyarrow itself cannot read are skipped (counted).

A failing case is reported with its class (the differing column's Arrow type,
or sluice's error message); --keep keeps its file, the expected and actual
output and a description under --work. --avoid CLASS[,CLASS] stops the
generator from producing a known discrepancy (see AVOIDABLE) so that others
can be found. Exit status: 0 when every case agrees, 1 otherwise.
"""
import collections
import decimal
import io
import json
import os
import random
import re
import shutil
import string
import subprocess
import sys
import traceback
import warnings

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import diffcli  # noqa: E402  (tests/data/diffcli.py: the command line)
import pylist  # noqa: E402  (tests/data/pylist.py: make_fixtures.py's conversion)
from pylist import drop_path  # noqa: E402

warnings.filterwarnings("ignore")
os.environ["RUST_BACKTRACE"] = "0"  # polars panics on some types: a skipped column, not a backtrace

# Generator switches for known discrepancies (--avoid), so that runs look for others.
AVOIDABLE = {
    "time_ns": "time64[ns] values with nanoseconds (not multiples of 1000)",
    "dup_name": "duplicate column names",
    "float_pow2": "floats that are powers of two",
    "empty_table": "tables of no rows",
    "gzip_dict": "GZIP with dictionary pages (an all-null column's dictionary page is empty)",
}

# ---- expected output (as make_fixtures.py's conv / expected_lines) ---------------


conv = pylist.conv  # (docs/read.md's rule for time zones: a fixed offset and UTC kept, a named zone in UTC)



class Expected:
    def __init__(self):
        self.lines = []  # expected output lines
        self.error = None  # why sluice must fail (None: it must succeed)


def table_rows(t, field, ex):
    """t.to_pylist(), or None with ex.error set where sluice must fail: an `id`
    column that is no string, number or Null column (Null: FILE:N, as a null
    id), or a value to_pylist cannot make (what Python's datetime cannot hold).
    Shared with tests/data/arrow/diff_random.py."""
    if "id" in t.column_names and field != "id":
        f = t.schema.field("id")
        ty = f.type.value_type if pa.types.is_dictionary(f.type) else f.type
        if not (pa.types.is_integer(ty) or pa.types.is_floating(ty) or pa.types.is_string(ty) or
                pa.types.is_large_string(ty) or pa.types.is_string_view(ty) or pa.types.is_null(ty)):
            ex.error = "id column of type %s" % f.type
            return None
    try:
        return t.to_pylist()
    except Exception as e:
        ex.error = "to_pylist raises %s: %s" % (type(e).__name__, e)
        return None


def doc_line(row, text, name, n, field):
    """The line sluice writes for row n (its text taken out): the id from
    the `id` field, FILE:N where none or null, then the other fields.
    Shared with tests/data/arrow/diff_random.py."""
    rid = row.pop("id", None) if field != "id" else None
    out = {"id": f"{name}:{n}" if rid is None else rid, "text": text}
    out.update(row)
    return json.dumps(out, ensure_ascii=False, separators=(",", ":"))


def expected_output(path, name, field, skip_null_text):
    """What `sluice read` must write for the file at path (named name)."""
    ex = Expected()
    t = pq.read_table(path)
    # documented refusals
    md = pq.ParquetFile(path).schema
    for i in range(len(md)):
        c = md.column(i)
        lt = str(c.logical_type)
        if (lt.startswith("Decimal") or c.converted_type == "DECIMAL") and (
                c.physical_type == "FIXED_LEN_BYTE_ARRAY" and c.length > 32):
            ex.error = "decimal wider than 32 bytes"
            return ex
    rows = table_rows(t, field, ex)
    if rows is not None:
        rows_lines(rows, name, field, skip_null_text, ex)
    return ex


def rows_lines(rows, name, field, skip_null_text, ex):
    """ex.lines from to_pylist's rows, or ex.error at a null text (a bad row, skipped
    with skip_null_text). A binary text is its UTF-8, repaired as --invalid replace
    does. Shared with tests/data/arrow/diff_random.py."""
    for n, row in enumerate(rows, 1):
        text = drop_path(row, field)
        if text is None:
            if skip_null_text:
                continue
            ex.error = "row %d: null text" % n
            return
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        ex.lines.append(doc_line(conv(row), text, name, n, field))


# ---- random values ---------------------------------------------------------------

CHARSETS = [
    string.ascii_letters + string.digits + " ",
    "\x00\x01\x07\x08\t\n\x0b\x0c\r\x1b\x1f\x7f\x80\x9f\"\\/'",
    "éèàçñößøåÆŒ€£¥©®°±µ¶·",
    "日本語中文한국어ひらがなカタカナ",
    "😀🎉🚀𝄞𐍈🀄\U0010fffd\U000e0001",
    "\u2028\u2029\u200b\u200d\ufeff\ufffd\uffff\ufffe\u0300\u0301",
    "\u0627\u0644\u0639\u0631\u0628\u064a\u05e2\u05d1\u05e8\u05d9\u05ea",
]


def rand_str(rng, long_ok=True):
    r = rng.random()
    if r < 0.1:
        return ""
    if r < 0.12 and long_ok:
        n = rng.randint(1000, 40000)
    elif r < 0.2:
        n = rng.randint(20, 200)
    else:
        n = rng.randint(1, 12)
    cs = rng.choice(CHARSETS) if rng.random() < 0.7 else "".join(CHARSETS)
    if rng.random() < 0.3:  # repetitive: compresses, DELTA_BYTE_ARRAY prefixes
        base = "".join(rng.choice(cs) for _ in range(min(n, 8)))
        return (base * (n // max(len(base), 1) + 1))[:n]
    return "".join(rng.choice(cs) for _ in range(n))


def rand_bytes(rng, n=None):
    if n is None:
        r = rng.random()
        n = 0 if r < 0.1 else rng.randint(1000, 20000) if r < 0.12 else rng.randint(1, 24)
    if rng.random() < 0.2:
        return bytes([rng.getrandbits(8)]) * n
    return rng.getrandbits(8 * n).to_bytes(n, "little") if n else b""


def rand_int(rng, bits, signed):
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    r = rng.random()
    if r < 0.25:
        return rng.choice([lo, lo + 1, hi - 1, hi, 0, 1] + ([-1] if signed else []))
    if r < 0.55:
        return max(lo, min(hi, rng.randint(-100, 100)))
    if r < 0.7:  # sorted-ish runs for delta encodings
        return max(lo, min(hi, rng.randint(0, 1 << rng.randint(1, bits - 1))))
    return rng.randint(lo, hi)


SPECIAL_F = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 5e-324, 2.2250738585072014e-308,
             1.7976931348623157e308, -1.7976931348623157e308, 1e16, 1e-7, 1e-5, 0.0001, 1e15, 9999999999999998.0,
             123456789012345678.0, 0.1, 0.3, -2.5, 1.0, 100.0, 1.5e300, 3.4028234663852886e38, 1.401298464324817e-45,
             1.1754943508222875e-38, 65504.0, 6.103515625e-05, 5.960464477539063e-08]


def rand_double(rng, kind, avoid=()):
    import math
    v = _rand_double(rng, kind)
    if "float_pow2" in avoid and v != 0 and math.isfinite(v) and abs(math.frexp(v)[0]) == 0.5:
        v *= 1.5
    return v


def _rand_double(rng, kind):
    import struct
    r = rng.random()
    if r < 0.3:
        v = rng.choice(SPECIAL_F)
    elif r < 0.5:
        v = rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30)
    elif r < 0.6:
        v = float(rng.randint(-1000, 1000))
    else:
        if kind == "f64":
            v = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        elif kind == "f32":
            v = struct.unpack("<f", rng.getrandbits(32).to_bytes(4, "little"))[0]
        else:
            v = struct.unpack("<e", rng.getrandbits(16).to_bytes(2, "little"))[0]
    if kind == "f32" and v == v:
        v = struct.unpack("<f", struct.pack("<f", v))[0] if abs(v) <= 3.4028234663852886e38 else v
    if kind == "f16" and v == v and abs(v) not in (float("inf"),):
        try:
            v = struct.unpack("<e", struct.pack("<e", v))[0]
        except (OverflowError, struct.error):
            v = float("inf") if v > 0 else float("-inf")
    return v


D0, D1 = -719162, 2932896  # days of 0001-01-01 and 9999-12-31
PER_S = {"s": 1, "ms": 1000, "us": 10**6, "ns": 10**9}


def rand_days(rng, edge):
    r = rng.random()
    if r < 0.1 and edge:
        return rng.choice([D0, D1, D0 + 1, D1 - 1])
    if r < 0.5:
        return rng.randint(-30000, 30000)
    return rng.randint(D0 + 2, D1 - 2)


def rand_ts(rng, unit, tz):
    per = PER_S[unit]
    if unit == "ns":
        r = rng.random()
        if tz is not None and tz != "UTC" and r < 0.5:  # a local time past 2262 is pyarrow's OverflowError
            return rng.randint(-2**62, 2**62)
        if r < 0.1:
            return rng.choice([-2**63 + 1, 2**63 - 1, 0, 1, -1])
        if r < 0.3:
            return rng.randint(-10**9, 10**9)
        if r < 0.5:
            return rng.randint(-10**6, 10**6) * 1000 * rng.choice([1, 1000, 10**6])
        return rng.randint(-2**63 + 1, 2**63 - 1)
    edge = tz is None
    days = rand_days(rng, edge)
    if not edge:
        days = max(D0 + 366, min(D1 - 366, days))
    r = rng.random()
    if r < 0.3:
        rem = 0
    elif r < 0.5:
        rem = rng.randint(0, 86399) * per
    else:
        rem = rng.randint(0, 86400 * per - 1)
    if edge and rng.random() < 0.05:
        return rng.choice([D0 * 86400 * per, (D1 + 1) * 86400 * per - 1])
    return days * 86400 * per + rem


def rand_time(rng, unit, avoid):
    per = PER_S[unit]
    r = rng.random()
    if r < 0.1:
        v = rng.choice([0, 86400 * per - 1, per, 43200 * per])
    elif r < 0.3:
        v = rng.randint(0, 86399) * per
    else:
        v = rng.randint(0, 86400 * per - 1)
    if unit == "ns" and "time_ns" in avoid:
        v -= v % 1000
    return v


def rand_decimal(rng, p, s):
    r = rng.random()
    if r < 0.1:
        digits = 0
    elif r < 0.25:
        digits = 10**p - 1
    elif r < 0.5:
        digits = rng.randint(0, 10**min(p, 3) - 1)
    else:
        digits = rng.randint(0, 10**rng.randint(1, p) - 1)
    sign = rng.random() < 0.4
    return decimal.Decimal((int(sign), tuple(int(c) for c in str(digits)), -s))


# ---- random types ----------------------------------------------------------------

TZS = ["UTC", "+05:30", "-08:00", "+00:00", "Europe/Paris", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"]


def rand_scalar_type(rng, ctx):
    k = rng.choice(["int", "int", "uint", "float", "float", "f16", "bool", "str", "str", "large_str", "bin",
                    "large_bin", "fsb", "uuid", "date32", "date64", "ts", "ts", "time", "dec", "dec", "null",
                    "view", "json", "bool8"])
    if k == "view":
        return rng.choice([pa.string_view(), pa.binary_view()])
    if k == "json":
        return pa.json_()
    if k == "bool8":
        return pa.bool8()
    if k == "int":
        return rng.choice([pa.int8(), pa.int16(), pa.int32(), pa.int64()])
    if k == "uint":
        return rng.choice([pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()])
    if k == "float":
        return rng.choice([pa.float32(), pa.float64()])
    if k == "f16":
        return pa.float16()
    if k == "bool":
        return pa.bool_()
    if k == "str":
        return pa.string()
    if k == "large_str":
        return pa.large_string()
    if k == "bin":
        return pa.binary()
    if k == "large_bin":
        return pa.large_binary()
    if k == "fsb":
        return pa.binary(rng.choice([1, 2, 3, 4, 7, 8, 12, 16, 17, 33]))
    if k == "uuid":
        return pa.uuid()
    if k == "date32":
        return pa.date32()
    if k == "date64":
        return pa.date64()
    if k == "ts":
        unit = rng.choice(["s", "ms", "us", "ns"])
        tz = None if rng.random() < 0.5 else rng.choice(TZS)
        return pa.timestamp(unit, tz=tz)
    if k == "time":
        return rng.choice([pa.time32("s"), pa.time32("ms"), pa.time64("us"), pa.time64("ns")])
    if k == "dec":
        w = rng.choice([32, 64, 128, 128, 128, 256])
        maxp = {32: 9, 64: 18, 128: 38, 256: 38 if rng.random() < 0.8 else 76}[w]
        p = rng.randint(1, maxp)
        s = rng.choice([0, 0, p, rng.randint(0, p)])
        return {32: pa.decimal32, 64: pa.decimal64, 128: pa.decimal128, 256: pa.decimal256}[w](p, s)
    return pa.null()


def rand_type(rng, ctx, depth=0):
    r = rng.random()
    if depth >= ctx["max_depth"] or r < 0.6:
        t = rand_scalar_type(rng, ctx)
        if rng.random() < 0.12 and not pa.types.is_null(t) and not isinstance(t, pa.BaseExtensionType) \
                and not pa.types.is_float16(t) and not (pa.types.is_decimal(t) and t.bit_width < 128):
            return pa.dictionary(rng.choice([pa.int8(), pa.int16(), pa.int32(), pa.int64()]), t)
        return t
    k = rng.choice(["list", "list", "large_list", "fixed_list", "struct", "struct", "map"])
    if k == "list":
        return pa.list_(rand_type(rng, ctx, depth + 1))
    if k == "large_list":
        return pa.large_list(rand_type(rng, ctx, depth + 1))
    if k == "fixed_list":
        return pa.list_(rand_type(rng, ctx, depth + 1), rng.randint(1, 3))
    if k == "struct":
        nf = rng.randint(1, 4)
        names = rand_names(rng, nf, ctx)
        return pa.struct([pa.field(nm, rand_type(rng, ctx, depth + 1)) for nm in names])
    kt = rng.choice([pa.string(), pa.int32(), pa.int64(), pa.int8(), pa.binary(), pa.date32(), pa.float64(),
                     pa.large_string(), pa.decimal128(9, 2)])
    return pa.map_(kt, rand_type(rng, ctx, depth + 1))


WEIRD_NAMES = ["é", "a b", 'q"uote', "back\\slash", "日本", "😀", "tab\tx", "new\nline", "a.b", "x-y", "$", "0",
               "\u2028", "ctl\x01", "__index_level_0__", "list", "element", "item", "key", "value", "array",
               "text_tuple", "ID", "Text"]


def rand_names(rng, n, ctx, taken=()):
    out = []
    used = set(taken)
    for i in range(n):
        while True:
            if rng.random() < 0.2:
                nm = rng.choice(WEIRD_NAMES)
                if rng.random() < 0.05:  # a NUL inside the name
                    nm = "nul\x00" + nm
            else:
                nm = "c%d" % rng.randint(0, 999)
            if nm not in used and nm not in ("id", "text"):
                break
        if "dup_name" not in ctx["avoid"] and out and rng.random() < 0.01:
            nm = out[-1]
        used.add(nm)
        out.append(nm)
    return out


def null_mask(rng, n, p):
    if p <= 0:
        return None
    return pa.array([rng.random() < p for _ in range(n)], pa.bool_())


def rand_null_p(rng):
    return rng.choice([0, 0, 0, 0.05, 0.2, 0.5, 0.9, 1.0])


def build(rng, t, n, ctx, p_null=None):
    """A random array of type t and length n."""
    if p_null is None:
        p_null = rand_null_p(rng)
    if pa.types.is_dictionary(t):
        vals = build(rng, t.value_type, n, ctx, p_null)
        try:
            enc = vals.dictionary_encode()
        except pa.ArrowNotImplementedError:
            return vals  # no dictionary of this type
        lim = 2 ** (t.index_type.bit_width - 1)
        if len(enc.dictionary) <= lim:
            return pa.DictionaryArray.from_arrays(enc.indices.cast(t.index_type), enc.dictionary)
        idx = pa.array([None if x is None else x % lim for x in enc.indices.to_pylist()], t.index_type)
        return pa.DictionaryArray.from_arrays(idx, enc.dictionary.slice(0, lim))
    if isinstance(t, pa.BaseExtensionType):  # uuid, json, bool8
        if t.storage_type == pa.binary(16):
            val = lambda: rand_bytes(rng, 16)
        elif t.storage_type == pa.int8():
            val = lambda: rng.choice([0, 1])
        else:
            val = lambda: json.dumps(rand_str(rng, False), ensure_ascii=rng.random() < 0.5)
        st = pa.array([None if rng.random() < p_null else val() for _ in range(n)], t.storage_type)
        return pa.ExtensionArray.from_storage(t, st)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
        offs, total, nulls = [0], 0, []
        maxlen = rng.choice([1, 3, 5, 20])
        for _ in range(n):
            isnull = rng.random() < p_null
            nulls.append(isnull)
            if not isnull:
                total += 0 if rng.random() < 0.15 else rng.randint(0, maxlen)
            offs.append(total)
        ot = pa.int64() if pa.types.is_large_list(t) else pa.int32()
        offarr = pa.array(offs, ot)
        mask = pa.array(nulls, pa.bool_()) if any(nulls) else None
        if pa.types.is_map(t):
            keys = build(rng, t.key_type, total, ctx, 0)
            items = build(rng, t.item_type, total, ctx)
            return pa.MapArray.from_arrays(offarr, keys, items, type=t, mask=mask)
        child = build(rng, t.value_type, total, ctx)
        cls = pa.LargeListArray if pa.types.is_large_list(t) else pa.ListArray
        return cls.from_arrays(offarr, child, type=t, mask=mask)
    if pa.types.is_fixed_size_list(t):
        child = build(rng, t.value_type, n * t.list_size, ctx)
        return pa.FixedSizeListArray.from_arrays(child, type=t, mask=null_mask(rng, n, p_null))
    if pa.types.is_struct(t):
        kids = [build(rng, t.field(i).type, n, ctx) for i in range(t.num_fields)]
        return pa.StructArray.from_arrays(kids, fields=list(t), mask=null_mask(rng, n, p_null))
    if pa.types.is_null(t):
        return pa.nulls(n)
    vals = [None if rng.random() < p_null else scalar_value(rng, t, ctx) for _ in range(n)]
    return pa.array(vals, t)


def scalar_value(rng, t, ctx):
    if pa.types.is_integer(t):
        return rand_int(rng, t.bit_width, pa.types.is_signed_integer(t))
    if pa.types.is_float16(t):
        return rand_double(rng, "f16", ctx["avoid"])
    if pa.types.is_float32(t):
        return rand_double(rng, "f32", ctx["avoid"])
    if pa.types.is_float64(t):
        return rand_double(rng, "f64", ctx["avoid"])
    if pa.types.is_boolean(t):
        return rng.random() < 0.5
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return rand_str(rng)
    if pa.types.is_fixed_size_binary(t):
        return rand_bytes(rng, t.byte_width)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return rand_bytes(rng)
    if pa.types.is_date32(t):
        d = rand_days(rng, True)
        if ctx["out_of_range"] and rng.random() < 0.02:
            d = rng.choice([D0 - 1, D1 + 1, -2**31, 2**31 - 1])
        return d
    if pa.types.is_date64(t):
        return rand_days(rng, True) * 86400000
    if pa.types.is_timestamp(t):
        v = rand_ts(rng, t.unit, t.tz)
        if ctx["out_of_range"] and t.unit != "ns" and rng.random() < 0.02:
            per = PER_S[t.unit]
            # (no value whose conversion to another unit overflows: pyarrow's writer aborts on it)
            v = rng.choice([(D0 - 1) * 86400 * per, (D1 + 1) * 86400 * per] +
                           ([-2**62, 2**62] if t.unit == "us" else []))
        return v
    if pa.types.is_time32(t) or pa.types.is_time64(t):
        return rand_time(rng, t.unit, ctx["avoid"])
    if pa.types.is_decimal(t):
        return rand_decimal(rng, t.precision, t.scale)
    raise ValueError("no values for %s" % t)


# ---- a case ----------------------------------------------------------------------


class Case:
    pass


def gen_case(seed, i, avoid):
    rng = random.Random("%s:%d" % (seed, i))
    c = Case()
    c.seed, c.i = seed, i
    ctx = {"max_depth": rng.choice([0, 1, 2, 2, 3, 4]), "avoid": avoid, "out_of_range": rng.random() < 0.1}
    c.writer = rng.choices(["pyarrow", "fastparquet", "polars", "duckdb"], [70, 10, 10, 10])[0]
    if c.writer == "fastparquet":  # nested columns become JSON strings
        ctx["max_depth"] = 0
    r = rng.random()
    if r < 0.03:
        n = 0 if "empty_table" not in avoid else 1
    elif r < 0.25:
        n = rng.randint(1, 10)
    elif r < 0.92:
        n = rng.randint(10, 300)
    else:
        n = rng.randint(1000, 9000)
    ncols = rng.randint(0, 8) if n < 1000 else rng.randint(0, 3)
    if n >= 1000:
        ctx["max_depth"] = min(ctx["max_depth"], 1)
    names = rand_names(rng, ncols, ctx)
    cols = [(nm, build(rng, rand_type(rng, ctx), n, ctx)) for nm in names]
    # the text: top-level "text" or another name, or a string inside a struct
    tt = rng.choice([pa.string(), pa.string(), pa.large_string(), pa.dictionary(pa.int32(), pa.string())])
    tnull = 0 if rng.random() < 0.85 else rng.choice([0.05, 0.5])
    text = build(rng, tt, n, ctx, tnull)
    c.skip_null = tnull > 0 and rng.random() < 0.7
    where = rng.random()
    if where < 0.7:
        c.field = "text"
        tcol = ("text", text)
    elif where < 0.85 or c.writer == "fastparquet":
        c.field = rng.choice(["content", "body", "a.b", "é"])
        if c.field in names:
            c.field = "content_"
        tcol = (c.field, text)
    else:
        sname = "doc" if "doc" not in names else "doc_"
        others = [(nm, build(rng, rand_type(rng, ctx, 1), n, ctx)) for nm in rand_names(rng, rng.randint(0, 2), ctx,
                                                                                        ("body",))]
        kids = others + [("body", text)]
        rng.shuffle(kids)
        st = pa.StructArray.from_arrays([a for _, a in kids], names=[nm for nm, _ in kids],
                                        mask=null_mask(rng, n, 0.05 if tnull else 0))
        c.field = sname + ".body"
        tcol = (sname, st)
    cols.insert(rng.randint(0, len(cols)), tcol)
    # the id
    if rng.random() < 0.5:
        it = rng.choice([pa.string(), pa.large_string(), pa.int64(), pa.int32(), pa.uint64(), pa.int8(), pa.uint32(),
                         pa.float64(), pa.float32(), pa.float16(), pa.dictionary(pa.int16(), pa.string())])
        if rng.random() < 0.05:
            # refused by sluice ("id" is a string, an integer or a float)
            it = rng.choice([pa.bool_(), pa.date32(), pa.binary(), pa.decimal128(5, 1)])
        cols.insert(rng.randint(0, len(cols)), ("id", build(rng, it, n, ctx, rng.choice([0, 0, 0.1, 1.0]))))
    c.table = pa.table([a for _, a in cols], names=[nm for nm, _ in cols])
    if c.table.nbytes > MAX_BYTES:  # files of KBs to a few MB
        c.table = c.table.slice(0, max(1, int(c.table.num_rows * MAX_BYTES / c.table.nbytes)))
    c.opts = writer_opts(rng, c.writer, c.table, avoid)
    c.run = {"threads": rng.choice([None, None, 1, 2, 3]), "stdin": rng.random() < 0.08,
             "parts": rng.choice([0] * 9 + [rng.randint(2, 4)]), "mem": rng.choice([None] * 8 + ["1M", "2M"])}
    return c


MAX_BYTES = 2 << 20  # a case's table in memory, at most
CODECS = ["NONE", "SNAPPY", "GZIP", "ZSTD", "LZ4", "BROTLI"]


def writer_opts(rng, writer, table, avoid):
    o = {}
    if writer == "pyarrow":
        if rng.random() < 0.15:
            o["compression"] = {nm: rng.choice(CODECS) for nm in table.column_names}
        else:
            o["compression"] = rng.choice(CODECS)
        if rng.random() < 0.2 and o["compression"] in ("GZIP", "ZSTD", "BROTLI"):
            o["compression_level"] = rng.choice([1, 3, 9])
        o["use_dictionary"] = rng.random() < 0.6
        if "gzip_dict" in avoid and o["use_dictionary"]:
            gz = {"GZIP": "ZSTD"}
            c = o["compression"]
            o["compression"] = {k: gz.get(v, v) for k, v in c.items()} if isinstance(c, dict) else gz.get(c, c)
        o["data_page_version"] = rng.choice(["1.0", "2.0"])
        o["version"] = rng.choice(["1.0", "2.4", "2.6", "2.6"])
        o["allow_truncated_timestamps"] = True  # versions before 2.6 write ns as us
        small = table.nbytes < (256 << 10)  # one page per value only for small tables (file size)
        if rng.random() < 0.6:
            o["data_page_size"] = rng.choice(([1, 16] if small else []) + [64, 100, 256, 512, 1024, 4096])
        if rng.random() < 0.5:
            o["row_group_size"] = rng.randint(1, max(1, table.num_rows))
        o["write_statistics"] = rng.random() < 0.5
        if rng.random() < 0.3:
            o["store_decimal_as_integer"] = True
        if rng.random() < 0.1:
            o["use_deprecated_int96_timestamps"] = True
        elif rng.random() < 0.1:
            o["coerce_timestamps"] = rng.choice(["ms", "us"])
        if rng.random() < 0.2:
            o["use_compliant_nested_type"] = False
        if rng.random() < 0.2:
            o["dictionary_pagesize_limit"] = rng.choice([1, 64, 512, 4096])
        if rng.random() < 0.2:
            o["write_batch_size"] = rng.choice(([1, 7] if small else []) + [64])
        if rng.random() < 0.2:
            o["max_rows_per_page"] = rng.choice(([1, 3] if small else []) + [50])
        if rng.random() < 0.2:
            o["write_page_index"] = True
        if rng.random() < 0.2:
            o["write_page_checksum"] = True
        if rng.random() < 0.1:
            o["store_schema"] = False
        if rng.random() < 0.1:
            o["write_time_adjusted_to_utc"] = True
        if rng.random() < 0.1:
            o["use_content_defined_chunking"] = {"min_chunk_size": 64, "max_chunk_size": 1024}
        if rng.random() < 0.05:
            o["bloom_filter_options"] = {nm: True for nm in table.column_names[:2]}
        if not o["use_dictionary"] and rng.random() < 0.6:
            o["column_encoding"] = "random"  # chosen per leaf once the schema is known
            o["enc_seed"] = rng.getrandbits(32)
        elif rng.random() < 0.3:
            fl = [f.name for f in table.schema if pa.types.is_floating(f.type) and not pa.types.is_float16(f.type)]
            if fl:
                o["use_byte_stream_split"] = fl
    elif writer == "fastparquet":
        o["compression"] = rng.choice(["UNCOMPRESSED", "SNAPPY", "GZIP", "ZSTD", "LZ4", "BROTLI"])
        # (fastparquet writes a categorical's whole dictionary in every row group)
        o["row_group_offsets"] = max(rng.choice([10, 50, 5000]), table.num_rows // 10)
        o["stats"] = rng.random() < 0.5
        o["times"] = rng.choice(["int64", "int96"])
        o["object_encoding"] = "infer"
    elif writer == "polars":
        o["compression"] = rng.choice(["uncompressed", "snappy", "gzip", "zstd", "lz4", "brotli"])
        o["statistics"] = rng.random() < 0.5
        if rng.random() < 0.5:
            o["row_group_size"] = rng.randint(1, 200)
        if rng.random() < 0.5:
            o["data_page_size"] = rng.choice([64, 512, 4096])
    else:
        o["COMPRESSION"] = rng.choice(["uncompressed", "snappy", "gzip", "zstd", "lz4", "brotli"])
        o["ROW_GROUP_SIZE"] = rng.choice([1, 10, 100, 2048, 122880])
        o["PARQUET_VERSION"] = rng.choice(["V1", "V2"])
    if "gzip_dict" in avoid and writer != "pyarrow":
        for k, v in o.items():
            if isinstance(v, str) and v.lower() == "gzip":
                o[k] = "zstd" if writer != "fastparquet" else "ZSTD"
    return o


ENCODINGS = {
    "BOOLEAN": ["PLAIN", "RLE"],
    "INT32": ["PLAIN", "DELTA_BINARY_PACKED", "BYTE_STREAM_SPLIT"],
    "INT64": ["PLAIN", "DELTA_BINARY_PACKED", "BYTE_STREAM_SPLIT"],
    "INT96": ["PLAIN"],
    "FLOAT": ["PLAIN", "BYTE_STREAM_SPLIT"],
    "DOUBLE": ["PLAIN", "BYTE_STREAM_SPLIT"],
    "BYTE_ARRAY": ["PLAIN", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY"],
    "FIXED_LEN_BYTE_ARRAY": ["PLAIN", "DELTA_BYTE_ARRAY", "BYTE_STREAM_SPLIT"],
}


class WriterFailed(Exception):
    pass


def _writer_error(e):
    """polars panics through pyo3's PanicException, a BaseException."""
    if isinstance(e, (KeyboardInterrupt, SystemExit)):
        raise e


def write_pyarrow(table, path, opts):
    o = dict(opts)
    if o.get("column_encoding") == "random":
        rng = random.Random(o.pop("enc_seed"))
        probe = io.BytesIO()
        po = {k: v for k, v in o.items() if k != "column_encoding"}
        pq.write_table(table.slice(0, 0), probe, **po)
        probe.seek(0)
        sch = pq.ParquetFile(probe).schema
        enc = {}
        for i in range(len(sch)):
            col = sch.column(i)
            if rng.random() < 0.8:
                enc[col.path] = rng.choice(ENCODINGS[col.physical_type])
        o["column_encoding"] = enc
    o.pop("enc_seed", None)
    in_child(lambda: pq.write_table(table, path, **o))
    return o


def in_child(fn):
    """Runs fn in a forked child: pyarrow's writer aborts the process on some
    values (a failed check on a cast), which must only skip the case."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            import resource
            import signal
            signal.alarm(120)  # a writer that takes this long is killed (SIGALRM): the case is skipped
            resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 20, 64 << 20))  # and so is a file over 64 MiB
            fn()
            os._exit(0)
        except BaseException as e:
            os.write(w, ("%s: %s" % (type(e).__name__, e)).encode("utf-8", "replace")[:2000])
            os._exit(1)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        msg = f.read().decode("utf-8", "replace")
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        raise RuntimeError("the writer died of signal %d" % os.WTERMSIG(status))
    if os.WEXITSTATUS(status):
        raise RuntimeError(msg or "the writer failed")


def write_file(c, table, path):
    """Writes table with c's writer; returns the options used. The writers
    run in a forked child (imported there only): a crash or an abort in one
    skips the case instead of ending the run."""
    if c.writer == "pyarrow":
        return write_pyarrow(table, path, c.opts)
    in_child(lambda: write_other(c, table, path))
    return c.opts


def write_other(c, table, path):
    if c.writer == "fastparquet":
        import fastparquet
        fastparquet.write(path, table.to_pandas(), write_index=False, **c.opts)
    elif c.writer == "polars":
        import polars as pl
        pl.from_arrow(table).write_parquet(path, use_pyarrow=False, **c.opts)
    else:
        import duckdb
        con = duckdb.connect()
        con.register("t", table)
        o = "".join(", %s %s" % (k, v) for k, v in c.opts.items())
        con.execute("COPY t TO '%s' (FORMAT PARQUET%s)" % (path.replace("'", "''"), o))
        con.close()


def write_case(c, table, path):
    """Writes the case; columns its writer cannot write are dropped (once)."""
    try:
        return table, write_file(c, table, path)
    except BaseException as e:
        _writer_error(e)
    keep = []
    for k, nm in enumerate(table.column_names):
        sub = table.select([k])
        try:
            write_file(c, sub, path)
            keep.append(k)
        except BaseException as e:
            _writer_error(e)
    if table.column_names.index(top_text(c)) not in keep:
        raise WriterFailed("%s cannot write the text column" % c.writer)
    t2 = table.select(keep)
    try:
        return t2, write_file(c, t2, path)
    except BaseException as e:
        _writer_error(e)
        raise WriterFailed("%s: %s" % (c.writer, str(e).splitlines()[0] if str(e) else type(e).__name__))


def top_text(c):
    return c.field.split(".")[0] if c.field.startswith("doc") and "." in c.field else c.field


# ---- running sluice --------------------------------------------------------------


def run_sluice(c, sluice, path, extra=()):
    base = ["nice", sluice, "read", "-q", "--field", c.field]
    if c.skip_null:
        base += ["--on-error", "skip"]
    if c.run["threads"]:
        base += ["-@", str(c.run["threads"])]
    if c.run["mem"]:
        base += ["--mem-budget", c.run["mem"]]
    base += list(extra)
    if c.run["stdin"]:
        with open(path, "rb") as f:
            p = subprocess.run(base + ["-"], stdin=f, capture_output=True, timeout=120)
        return p.returncode, p.stdout, p.stderr, " ".join(base + ["-", "<", path])
    if c.run["parts"]:
        outs, errs, rc = [], [], 0
        for r in range(c.run["parts"]):
            p = subprocess.run(base + ["--part", "%d/%d" % (r, c.run["parts"]), path], capture_output=True,
                               timeout=120)
            outs.append(p.stdout)
            errs.append(p.stderr)
            if p.returncode:
                rc = p.returncode
                break
        return rc, b"".join(outs), b"".join(errs), " ".join(base + ["--part", "R/%d" % c.run["parts"], path])
    p = subprocess.run(base + [path], capture_output=True, timeout=120)
    return p.returncode, p.stdout, p.stderr, " ".join(base + [path])


def type_at(schema, key):
    try:
        return str(schema.field(key).type)
    except KeyError:
        return "?"


def classify(c, table_read, ex, rc, out, err):
    """None when sluice agrees, else (class, detail)."""
    if rc < 0 or rc > 2:
        return "crash rc=%d" % rc, err.decode("utf-8", "replace")[-500:]
    errmsg = err.decode("utf-8", "replace").strip().splitlines()
    errmsg = errmsg[-1] if errmsg else ""
    if ex.error:
        if rc == 1:
            return None
        why = re.sub(r"[0-9]+", "N", ex.error)[:80]
        if "duplicate field names" in ex.error:
            why = "to_pylist refuses duplicate field names"
        return "sluice succeeds where an error is expected (%s)" % why, ex.error
    if rc != 0:
        cls = re.sub(r"'[^']*'|\"[^\"]*\"", "S", errmsg)
        cls = re.sub(r"^sluice: read: \S+: ", "", cls)
        cls = re.sub(r"column .*?([,:] )", r"column C\1", cls)
        cls = re.sub(r"[0-9]+", "N", cls)
        return "sluice error: " + cls[:120], errmsg
    got = out.decode("utf-8", "surrogateescape").split("\n")
    if got and got[-1] == "":
        got.pop()
    if got == ex.lines:
        return None
    for k, (a, b) in enumerate(zip(got, ex.lines)):
        if a != b:
            break
    else:
        k = min(len(got), len(ex.lines))
        return "line count %d, expected %d" % (len(got), len(ex.lines)), "first extra line %d" % (k + 1)
    try:
        raw = {"parse_float": lambda x: ("float", x), "parse_int": lambda x: ("int", x),
               "parse_constant": lambda x: ("float", x)}  # numbers compared as written
        ja, jb = json.loads(got[k], **raw), json.loads(ex.lines[k], **raw)
    except ValueError:
        return "unparsable line", got[k][:300]
    keys = [key for key in list(jb) + [x for x in ja if x not in jb] if (key in ja) != (key in jb)
            or ja.get(key) != jb.get(key)]
    if not keys and list(ja) != list(jb):
        return "key order", "got %s expected %s" % (list(ja), list(jb))
    if not keys:
        return "formatting", "got %s\nexp %s" % (got[k][:300], ex.lines[k][:300])
    key = keys[0]
    ty = {"id": type_at(table_read.schema, "id"), "text": "text"}.get(key) or type_at(table_read.schema, key)
    va, vb = (json.dumps(j[key], ensure_ascii=False) if key in j else "(absent)" for j in (ja, jb))
    detail = "line %d column %r (%s): got %s expected %s" % (k + 1, key, ty, va[:400], vb[:400])
    if key not in ja or key not in jb:
        return "a column missing or extra in the output%s" % (" (its name holds a NUL)" if "\0" in key else ""), detail
    where, a, b = first_diff(ja[key], jb[key], key)
    return value_class(a, b, ty), "%s: got %s expected %s (%s)" % (
        where, json.dumps(a, ensure_ascii=False)[:200], json.dumps(b, ensure_ascii=False)[:200], detail)


def first_diff(a, b, where):
    """The first differing part of two decoded JSON values: (path, a, b)."""
    if isinstance(a, dict) and isinstance(b, dict) and list(a) == list(b):
        for k in a:
            if a[k] != b[k]:
                return first_diff(a[k], b[k], "%s.%s" % (where, k))
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return first_diff(x, y, "%s[%d]" % (where, i))
    return where, a, b


TIME_RE = re.compile(r"^(\d{4}-\d\d-\d\dT)?\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:\d\d)?$")


def value_class(a, b, ty):
    num = lambda v: isinstance(v, tuple) and v[0] in ("int", "float")  # as parsed in classify()
    if isinstance(a, dict) and isinstance(b, dict) and list(a) != list(b):
        nul = any("\0" in k for k in list(a) + list(b))
        return "struct fields missing or extra%s" % (" (a name holds a NUL)" if nul else "")
    if num(a) and isinstance(b, bool):
        return "a boolean written as an integer (%s)" % re.sub(r"\d+", "N", ty)[:60]
    if num(a) and num(b) and a[0] == b[0] == "float":
        try:
            same = float(a[1]) == float(b[1])
        except ValueError:
            same = False
        return "float digits (%s)" % ("same double, other digits" if same else "another value")
    if isinstance(a, str) and isinstance(b, str) and TIME_RE.match(a) and TIME_RE.match(b):
        return "date/time text (%s)" % ("fraction digits" if a.split(".")[0] == b.split(".")[0] else "another value")
    return "value of a column of type %s" % re.sub(r"\d+", "N", ty)[:100]


def check(c, table, sluice, work, verbose=False):
    """Writes and reads one case. Returns (status, class, detail, info)."""
    path = os.path.join(work, "case.parquet")
    if os.path.exists(path):
        os.unlink(path)
    try:
        table, used = write_case(c, table, path)
    except WriterFailed as e:
        return "skip", str(e), "", {}
    if os.path.getsize(path) > (32 << 20):
        return "skip", "file over 32 MiB", "", {}
    name = "<stdin>" if c.run["stdin"] else path
    try:
        ex = expected_output(path, name, c.field, c.skip_null)
        tread = pq.read_table(path)
    except Exception as e:
        if "DictAccumulator" in str(e) and any(pa.types.is_dictionary(f.type) for f in table.schema):
            # pyarrow reads no DELTA_*BYTE_ARRAY page into a dictionary: the same without dictionaries
            plain = pa.schema([f.with_type(f.type.value_type) if pa.types.is_dictionary(f.type) else f
                               for f in table.schema])
            return check(c, table.cast(plain), sluice, work, verbose)
        if verbose:
            rc, out, err, cmd = run_sluice(c, sluice, path)
            print("pyarrow cannot read %s: %s; sluice: rc %d, %d lines, %s" % (
                path, e, rc, out.count(b"\n"), err.decode("utf-8", "replace").strip()[:300]), file=sys.stderr)
        return "skip", "pyarrow cannot read what %s wrote: %s" % (c.writer, str(e).splitlines()[0][:100]), "", {}
    rc, out, err, cmd = run_sluice(c, sluice, path)
    res = classify(c, tread, ex, rc, out, err)
    info = {"table": table, "used": used, "cmd": cmd, "out": out, "err": err, "ex": ex, "path": path}
    if res is None:
        return "ok", "", "", info
    return "fail", res[0], res[1], info


def describe(c, info):
    t = info["table"]
    return "\n".join([
        "case: --seed %s --case %d" % (c.seed, c.i),
        "writer: %s %r" % (c.writer, info["used"]),
        "run: %r" % c.run,
        "command: %s" % info["cmd"],
        "schema:\n%s" % t.schema.to_string(show_schema_metadata=False),
        "rows: %d" % t.num_rows,
    ])


def keep_files(c, info, work, tag, name="case.parquet", description=None):
    """A failing case's file, expected and actual output and description in
    work/fail-SEED-CASE (also for tests/data/arrow/diff_random.py: name and
    description given)."""
    d = os.path.join(work, "fail-%s-%d" % (c.seed, c.i))
    os.makedirs(d, exist_ok=True)
    shutil.copy(info["path"], os.path.join(d, name))
    with open(os.path.join(d, "expected.jsonl"), "w") as f:
        f.write("".join(l + "\n" for l in info["ex"].lines))
        if info["ex"].error:
            f.write("# expected error: %s\n" % info["ex"].error)
    with open(os.path.join(d, "sluice.jsonl"), "wb") as f:
        f.write(info["out"])
    with open(os.path.join(d, "info.txt"), "w") as f:
        f.write((describe(c, info) if description is None else description) + "\nclass: %s\n" % tag +
                "stderr: %s\n" % info["err"].decode("utf-8", "replace"))
    return d


# ---- minimizing ------------------------------------------------------------------


def minimize(c, sluice, work, cls):
    """Shrinks the case's table and options while it still fails with class cls."""
    def fails(table, opts=None, run=None):
        saved = c.opts, c.run
        if opts is not None:
            c.opts = opts
        if run is not None:
            c.run = run
        try:
            st, k, _, _ = check(c, table, sluice, work)
        except Exception:
            st, k = "skip", ""
        if st == "fail" and k == cls:
            return True
        c.opts, c.run = saved
        return False

    t = c.table
    # the run: no threads option, no stdin, no parts
    for key, plain in (("parts", 0), ("stdin", False), ("threads", None), ("mem", None)):
        if c.run[key] != plain:
            fails(t, run=dict(c.run, **{key: plain}))
    # columns
    changed = True
    while changed:
        changed = False
        for nm in list(t.column_names):
            if nm == top_text(c):
                continue
            t2 = t.drop_columns([nm])
            if fails(t2):
                t, changed = t2, True
    # rows: keep halves, then drop single rows from the ends
    while t.num_rows > 1:
        h = t.num_rows // 2
        if fails(t.slice(0, h)):
            t = t.slice(0, h)
        elif fails(t.slice(h)):
            t = t.slice(h)
        elif fails(t.slice(0, t.num_rows - 1)):
            t = t.slice(0, t.num_rows - 1)
        elif fails(t.slice(1)):
            t = t.slice(1)
        else:
            break
    # options back to their defaults, one at a time
    for key in list(c.opts):
        if key in ("enc_seed",):
            continue
        o2 = dict(c.opts)
        del o2[key]
        if key == "column_encoding":
            o2.pop("enc_seed", None)
        fails(t, opts=o2)
    t = pa.Table.from_batches(t.combine_chunks().to_batches()) if t.num_rows else t
    st, k, detail, info = check(c, t, sluice, work)
    return t, st, k, detail, info


# ---- main ------------------------------------------------------------------------


def run_cases(a, avoid, work, cases, gen, check_case, show, keep, on_minimize):
    """The loop over the cases (shared with tests/data/arrow/diff_random.py):
    gen(seed, i, avoid) makes case i, check_case(c) runs it ((status, class,
    detail, info)), show(c, info) describes it, keep(c, info, cls) keeps its
    files, on_minimize(c, cls) shrinks a failing one. Prints each failure and
    the summary (with the features the cases exercised, where info["feats"]
    names them); returns the exit status."""
    counts = collections.Counter()
    classes = collections.OrderedDict()
    skips = collections.Counter()
    feats = collections.Counter()
    for i in cases:
        try:
            c = gen(a.seed, i, avoid)
        except Exception as e:
            skips["generator: %s" % str(e).splitlines()[0][:80]] += 1
            counts["skip"] += 1
            if a.verbose:
                traceback.print_exc()
            continue
        try:
            st, cls, detail, info = check_case(c)
        except subprocess.TimeoutExpired:
            st, cls, detail, info = "fail", "sluice hangs (over 120 s)", "", {}
        except Exception as e:
            st, cls, detail, info = "skip", "harness: %s: %s" % (type(e).__name__, str(e).splitlines()[0][:80]), "", {}
            if a.verbose:
                traceback.print_exc()
        counts[st] += 1
        feats.update(info.get("feats", ()))
        if st == "skip":
            skips[cls] += 1
            if a.verbose:
                print("case %d: skipped: %s" % (i, cls), file=sys.stderr)
            continue
        if a.verbose:
            print("case %d: %s %s" % (i, st, cls), file=sys.stderr)
            if st == "fail" or a.case is not None:
                print(show(c, info), file=sys.stderr)
        if st != "fail":
            continue
        classes.setdefault(cls, []).append((i, detail))
        print("FAIL seed %s case %d: %s\n    %s" % (a.seed, i, cls, detail.replace("\n", "\n    ")[:600]),
              flush=True)
        if a.keep and info:
            print("    kept in %s" % keep(c, info, cls), flush=True)
        if a.minimize and info:
            on_minimize(c, cls)
    total = sum(counts.values())
    print("seed %s: %d cases: %d agree, %d differ, %d skipped (work: %s)" %
          (a.seed, total, counts["ok"], counts["fail"], counts["skip"], work))
    if feats:
        print("  cases with: " + ", ".join("%s %d" % kv for kv in sorted(feats.items())))
    for cls, l in classes.items():
        print("  %4d x %s (cases %s)" % (len(l), cls, " ".join(str(i) for i, _ in l[:12])))
    for cls, k in skips.most_common():
        print("  skipped %d: %s" % (k, cls))
    if not a.work and not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if counts["fail"] else 0


def main():
    a, avoid, sluice, work, cases = diffcli.case_args(__doc__, "sluice-diff-", avoidable=AVOIDABLE)

    def on_minimize(c, cls):
        t, st2, k2, detail2, info2 = minimize(c, sluice, work, cls)
        print("minimized (%s: %s)\n    %s" % (st2, k2, detail2), flush=True)
        print(describe(c, info2))
        print("rows: %r" % t.to_pylist()[:20])
        if a.keep:
            print("    kept in %s" % keep_files(c, info2, work, k2), flush=True)
    return run_cases(a, avoid, work, cases, gen_case, lambda c: check(c, c.table, sluice, work, a.verbose), describe,
                     lambda c, info, cls: keep_files(c, info, work, cls), on_minimize)


if __name__ == "__main__":
    sys.exit(main())

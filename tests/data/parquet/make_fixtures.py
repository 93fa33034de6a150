#!/usr/bin/env python3
"""Writes the Parquet / Arrow fixtures of tests/cli/read_parquet.sh and their
expected `sluice read` output, taken from pyarrow itself.

    python3 -m venv /tmp/v && /tmp/v/bin/pip install pyarrow fastparquet polars duckdb datasets
    /tmp/v/bin/python tests/data/parquet/make_fixtures.py   # from the repository root

Every file is written by a real writer (pyarrow in a matrix of codecs x
dictionary x page versions x page sizes x statistics, fastparquet, polars,
duckdb) and then read back with pyarrow.parquet.read_table(...).to_pylist();
the expected line of a row is

    {"id": <the "id" column, or FILE:N>, "text": <the --field column>, <the other columns>}

written as json.dumps(..., ensure_ascii=False, separators=(",", ":")) writes
it (NaN and Infinity included), with the values json.dumps cannot write
converted as docs/read.md says: bytes as base64, dates/times as isoformat(),
Decimal as str(), maps as lists of [key, value] (to_pylist's tuples).

manifest.tsv lists: file, --field, expected file, extra sluice options.
"""
import datetime
import decimal
import json
import os
import random
import sys
import uuid

import pyarrow as pa
import pyarrow.parquet as pq

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(OUT))
from pylist import conv, drop_path, wide_table  # noqa: E402  (tests/data/pylist.py)
os.chdir(OUT)
rng = random.Random(31)
manifest = []


def expected_lines(path, field="text", skip_null_text=False):
    t = pq.read_table(path)
    lines = []
    for n, row in enumerate(t.to_pylist(), 1):
        row = conv(row)
        text = drop_path(row, field)
        if text is None:
            if skip_null_text:
                continue
            raise SystemExit(f"{path}: row {n}: null text")
        rid = row.pop("id", None) if field != "id" else None
        if rid is None:
            rid = f"{path}:{n}"
        out = {"id": rid, "text": text}
        out.update(row)
        lines.append(json.dumps(out, ensure_ascii=False, separators=(",", ":")))
    return "".join(l + "\n" for l in lines)


written = {}  # expected text -> its file (files that read the same share one)


def add(path, field="text", opts="", skip_null_text=False, expected=None):
    text = expected_lines(path, field, skip_null_text)
    exp = written.get(text)
    if expected:
        assert exp == expected or expected not in written.values(), f"{path} reads differently from {expected}"
    if not exp:
        exp = expected or path.rsplit(".", 1)[0] + ".expected.jsonl"
        with open(exp, "w") as f:
            f.write(text)
        written[text] = exp
    manifest.append((path, field, exp, opts))


def words(k):
    vocab = ["the", "data", "long", "context", "été", "naïve", "日本語", "😀", "tab\tin", "quote\"d", "back\\slash",
             "line\nbreak", "ctl\x01", "\u2028", "model", "token"]
    return " ".join(rng.choice(vocab) for _ in range(k))


# ---- FineWeb's schema ------------------------------------------------------
def fineweb(n=60):
    dumps = ["CC-MAIN-2013-20", "CC-MAIN-2024-10", "CC-MAIN-2023-50"]
    rows = {
        "text": [words(rng.randint(0, 30)) for _ in range(n)],
        "id": [f"<urn:uuid:{uuid.UUID(int=rng.getrandbits(128))}>" for _ in range(n)],
        "dump": [rng.choice(dumps) for _ in range(n)],
        "url": [f"https://example.org/{rng.randint(0, 10**6)}/é" for _ in range(n)],
        "date": [f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T0{rng.randint(0, 9)}:12:33Z" for _ in range(n)],
        "file_path": [f"s3://commoncrawl/crawl-data/{rng.randint(0, 999):05d}.warc.gz" for _ in range(n)],
        "language": [rng.choice(["en", "fr", None]) for _ in range(n)],
        "language_score": [rng.random() if i % 7 else None for i in range(n)],
        "token_count": [rng.randint(0, 2**40) for _ in range(n)],
    }
    rows["text"][0] = ""
    rows["language_score"][5] = float("nan")
    rows["language_score"][6] = float("inf")
    rows["language_score"][8] = 1e16
    rows["language_score"][9] = 1e-7
    rows["language_score"][10] = 0.1
    rows["language_score"][11] = -2.5
    return pa.table(rows)


fw = fineweb()
codecs = ["NONE", "SNAPPY", "GZIP", "ZSTD", "BROTLI", "LZ4"]
first = None
for ci, codec in enumerate(codecs):
    for dic in (True, False):
        for ver in ("1.0", "2.0"):
            stats = (ci + dic + (ver == "2.0")) % 2 == 0
            small = (ci + (ver == "2.0")) % 2 == 0
            name = f"fw_{codec.lower()}_{'dict' if dic else 'plain'}_v{ver[0]}{'_small' if small else ''}{'_stats' if stats else ''}.parquet"
            pq.write_table(fw, name, compression=codec, use_dictionary=dic, data_page_version=ver,
                           write_statistics=stats, data_page_size=512 if small else None, row_group_size=25)
            add(name, expected="fw.expected.jsonl")

# encodings: DELTA_*, BYTE_STREAM_SPLIT
pq.write_table(fw, "fw_delta.parquet", use_dictionary=False, compression="SNAPPY",
               column_encoding={"text": "DELTA_LENGTH_BYTE_ARRAY", "url": "DELTA_BYTE_ARRAY",
                                "file_path": "DELTA_BYTE_ARRAY", "token_count": "DELTA_BINARY_PACKED",
                                "language_score": "BYTE_STREAM_SPLIT", "dump": "DELTA_BYTE_ARRAY"},
               data_page_size=700)
add("fw_delta.parquet", expected="fw.expected.jsonl")
pq.write_table(fw, "fw_delta_v2.parquet", use_dictionary=False, compression="ZSTD", data_page_version="2.0",
               column_encoding={"text": "DELTA_BYTE_ARRAY", "id": "DELTA_LENGTH_BYTE_ARRAY",
                                "token_count": "DELTA_BINARY_PACKED", "language_score": "BYTE_STREAM_SPLIT"})
add("fw_delta_v2.parquet", expected="fw.expected.jsonl")

# other writers, same rows
try:
    import fastparquet
    import pandas as pd
    df = fw.to_pandas()
    fastparquet.write("fw_fastparquet.parquet", df, compression="SNAPPY", row_group_offsets=20, stats=True)
    add("fw_fastparquet.parquet")
    fastparquet.write("fw_fastparquet_gzip.parquet", df, compression="GZIP", object_encoding="utf8")
    add("fw_fastparquet_gzip.parquet")
except ImportError:
    print("fastparquet missing: skipped", file=sys.stderr)
try:
    import polars as pl
    pl.from_arrow(fw).write_parquet("fw_polars.parquet", compression="zstd", row_group_size=32)
    add("fw_polars.parquet")
    pl.from_arrow(fw).write_parquet("fw_polars_lz4.parquet", compression="lz4", statistics=False)
    add("fw_polars_lz4.parquet")
except ImportError:
    print("polars missing: skipped", file=sys.stderr)
try:
    import duckdb
    con = duckdb.connect()
    con.register("fw", fw)
    con.execute("COPY fw TO 'fw_duckdb.parquet' (FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE 32)")
    add("fw_duckdb.parquet")
    con.execute("COPY fw TO 'fw_duckdb_snappy.parquet' (FORMAT PARQUET, COMPRESSION SNAPPY)")
    add("fw_duckdb_snappy.parquet")
except ImportError:
    print("duckdb missing: skipped", file=sys.stderr)

# ---- The Stack's schema: content, repo path, licenses list, stars --------------
n = 60
stack = pa.table({
    "content": [words(rng.randint(1, 40)) for _ in range(n)],
    "max_stars_repo_path": [f"src/m{i}.py" for i in range(n)],
    "max_stars_repo_name": [f"org/repo{rng.randint(0, 9)}" for _ in range(n)],
    "licenses": [[rng.choice(["MIT", "Apache-2.0", "BSD-3-Clause"]) for _ in range(rng.randint(0, 3))] if i % 9 else None
                 for i in range(n)],
    "max_stars_count": pa.array([rng.randint(0, 50000) if i % 5 else None for i in range(n)], pa.int32()),
})
pq.write_table(stack, "stack.parquet", compression="ZSTD")
add("stack.parquet", field="content")
pq.write_table(stack, "stack_v2_small.parquet", compression="SNAPPY", data_page_version="2.0", data_page_size=300)
add("stack_v2_small.parquet", field="content")

# ---- nested: lists of structs, maps, structs, a dotted text path ---------------
n = 50
item = pa.struct([("name", pa.string()), ("score", pa.float32()), ("tags", pa.list_(pa.string()))])
nested = pa.table({
    "doc": pa.array([{"body": words(rng.randint(1, 20)), "lang": rng.choice(["en", None])} for _ in range(n)],
                    pa.struct([("body", pa.string()), ("lang", pa.string())])),
    "items": pa.array([None if i % 11 == 3 else
                       [None if (i + j) % 13 == 0 else
                        {"name": rng.choice(["a", "b", None]), "score": rng.random(),
                         "tags": None if j % 4 == 3 else [rng.choice(["x", "y"]) for _ in range(rng.randint(0, 2))]}
                        for j in range(rng.randint(0, 3))] for i in range(n)], pa.list_(item)),
    "attrs": pa.array([None if i % 10 == 4 else [(f"k{j}", rng.choice([1, 2, None])) for j in range(rng.randint(0, 3))]
                       for i in range(n)], pa.map_(pa.string(), pa.int64())),
    "matrix": pa.array([[[rng.randint(0, 9) for _ in range(rng.randint(0, 2))] for _ in range(rng.randint(0, 2))]
                        for _ in range(n)], pa.list_(pa.list_(pa.int16()))),
    "fixed": pa.array([[rng.randint(0, 5) for _ in range(2)] for _ in range(n)], pa.list_(pa.int8(), 2)),
})
pq.write_table(nested, "nested.parquet", compression="SNAPPY", data_page_size=256)
add("nested.parquet", field="doc.body")
pq.write_table(nested, "nested_v2.parquet", compression="ZSTD", data_page_version="2.0", use_dictionary=False)
add("nested_v2.parquet", field="doc.body")

# ---- every type ------------------------------------------------------------------
n = 40
utc = datetime.timezone.utc
types = pa.table({
    "text": [words(3) for _ in range(n)],
    "id": pa.array([i * 7 - 100 for i in range(n)], pa.int64()),
    "b": pa.array([None if i % 5 == 0 else i % 2 == 0 for i in range(n)], pa.bool_()),
    "i8": pa.array([rng.randint(-128, 127) for _ in range(n)], pa.int8()),
    "i16": pa.array([rng.randint(-2**15, 2**15 - 1) for _ in range(n)], pa.int16()),
    "i32": pa.array([rng.randint(-2**31, 2**31 - 1) for _ in range(n)], pa.int32()),
    "i64": pa.array([rng.randint(-2**63, 2**63 - 1) for _ in range(n)], pa.int64()),
    "u8": pa.array([rng.randint(0, 255) for _ in range(n)], pa.uint8()),
    "u16": pa.array([rng.randint(0, 2**16 - 1) for _ in range(n)], pa.uint16()),
    "u32": pa.array([rng.randint(0, 2**32 - 1) for _ in range(n)], pa.uint32()),
    "u64": pa.array([rng.randint(0, 2**64 - 1) for _ in range(n)], pa.uint64()),
    "f32": pa.array([rng.uniform(-1e6, 1e6) for _ in range(n)], pa.float32()),
    "f64": pa.array([rng.choice([rng.uniform(-1, 1), 10 ** rng.randint(-30, 30) * rng.random(), 0.0, -0.0, 5e-324,
                                 1.7976931348623157e308, 123456789012345678.0, 0.3])
                     for _ in range(n)], pa.float64()),
    "date": pa.array([datetime.date(1970, 1, 1) + datetime.timedelta(days=rng.randint(-50000, 50000)) for _ in range(n)],
                     pa.date32()),
    "ts_ms": pa.array([rng.randint(-2**40, 2**42) for _ in range(n)], pa.timestamp("ms")),
    "ts_us_utc": pa.array([rng.randint(-2**50, 2**52) if i % 3 else rng.randint(0, 10**6) * 10**6
                           for i in range(n)], pa.timestamp("us", tz="UTC")),
    "ts_ns": pa.array([rng.randint(0, 2**62) if i % 2 else rng.randint(0, 2**40) * 1000 for i in range(n)],
                      pa.timestamp("ns")),
    "t32": pa.array([rng.randint(0, 86400 * 1000 - 1) for _ in range(n)], pa.time32("ms")),
    "t64": pa.array([rng.randint(0, 86400 * 10**6 - 1) for _ in range(n)], pa.time64("us")),
    "bin": pa.array([bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 9))) for _ in range(n)], pa.binary()),
    "fsb": pa.array([bytes(rng.getrandbits(8) for _ in range(4)) for _ in range(n)], pa.binary(4)),
    "dec9": pa.array([decimal.Decimal(rng.randint(-10**9 + 1, 10**9 - 1)).scaleb(-3) for _ in range(n)],
                     pa.decimal128(9, 3)),
    "dec18": pa.array([decimal.Decimal(rng.randint(-10**18 + 1, 10**18 - 1)).scaleb(-10) for _ in range(n)],
                      pa.decimal128(18, 10)),
    "dec38": pa.array([decimal.Decimal(rng.randint(-10**38 + 1, 10**38 - 1)).scaleb(-2) for _ in range(n)],
                      pa.decimal128(38, 2)),
    "dec_small": pa.array([decimal.Decimal(rng.randint(-99, 99)).scaleb(-9) for _ in range(n)], pa.decimal128(10, 9)),
    "dict": pa.array([rng.choice(["red", "green", None]) for _ in range(n)]).dictionary_encode(),
    "large": pa.array([words(2) for _ in range(n)], pa.large_string()),
    "null": pa.nulls(n),
})
pq.write_table(types, "types.parquet", compression="SNAPPY")
add("types.parquet")
pq.write_table(types, "types_v2.parquet", compression="GZIP", data_page_version="2.0", use_dictionary=False,
               store_decimal_as_integer=True)
add("types_v2.parquet", expected="types.expected.jsonl")
pq.write_table(types, "types_int96.parquet", use_deprecated_int96_timestamps=True, compression="NONE")
add("types_int96.parquet")

# ---- an all-null column: its dictionary page holds no bytes, compressed by each codec ----
for codec in ("GZIP", "ZSTD", "BROTLI", "LZ4"):
    name = "allnull_%s.parquet" % codec.lower()
    pq.write_table(pa.table({"text": ["a", "b"], "n": pa.array([None, None], pa.int32())}), name, compression=codec)
    add(name)

# ---- dates and timestamps at the ends of the years Python's datetime holds (1, 9999) -----
# (one step past them: tests/data/parquet/make_bad.py)
D0, D1 = -719162, 2932896                    # 0001-01-01 and 9999-12-31, days since 1970-01-01
S0, S1 = D0 * 86400, (D1 + 1) * 86400 - 1    # their first and last second
pq.write_table(pa.table({
    "text": ["first", "last"],
    "d32": pa.array([D0, D1], pa.date32()),
    "ts_ms": pa.array([S0 * 1000, S1 * 1000 + 999], pa.timestamp("ms")),
    "ts_us": pa.array([S0 * 10**6, S1 * 10**6 + 999999], pa.timestamp("us", tz="UTC")),
    "ts_ns": pa.array([-2**63 + 1, 2**63 - 1], pa.timestamp("ns")),
}), "edges.parquet")
add("edges.parquet")

# ---- decimals of up to 76 digits (256 bits), and times in nanoseconds ---------------
wide = wide_table()
pq.write_table(wide, "wide.parquet")
add("wide.parquet")

# ---- every power of two a double holds, and a float32's: the shortest digits that read
# back, where the nearest ones below do not (2^-24 is 5.960464477539063e-08) -------------
pq.write_table(pa.table({"text": ["pow2"], "f64": [[2.0**k for k in range(-1074, 1024)]],
                         "f32": pa.array([[2.0**k for k in range(-149, 128)]], pa.list_(pa.float32()))}),
               "pow2.parquet")
add("pow2.parquet")

# ---- an empty table: pyarrow writes one row group of no rows, its chunks at offset 0 ----
pq.write_table(pa.table({"text": pa.array([], pa.string()), "n": pa.array([], pa.int64())}), "empty.parquet")
add("empty.parquet")

# ---- ids: strings with nulls (generated FILE:N), floats ------------------------------
pq.write_table(pa.table({"text": ["a", "b", "c", "d"], "id": ["x", None, "", "é\"q"]}), "ids.parquet")
add("ids.parquet")
pq.write_table(pa.table({"id": [1.5, None, 1e300], "text": ["a", "b", "c"]}), "ids_float.parquet")
add("ids_float.parquet")
# float16 ids: to_pylist's Python float (its double), like float32 and float64 ones
import numpy as np  # noqa: E402
pq.write_table(pa.table({"id": pa.array(np.array([1.5, 0.1, 65504, -0.0, 6e-8, np.nan], np.float16)),
                         "text": ["a", "b", "c", "d", "e", "f"]}), "ids_half.parquet")
add("ids_half.parquet")
# an id column of the Null type (datasets writes one for ids that are all None): FILE:N
pq.write_table(pa.table({"text": ["a", "b"], "id": pa.nulls(2), "k": [1, 2]}), "ids_null.parquet")
add("ids_null.parquet")
# a NUL inside column names (whole names written; "id\0x" and "text\0" are neither id nor text)
pq.write_table(pa.table({"text": ["a", "b"], "a\x00b": [1, 2], "id\x00x": ["p", "q"], "text\x00": ["s", "t"],
                         "s": pa.array([{"k\x00": 1, "k": 2}, None], pa.struct([("k\x00", pa.int8()), ("k", pa.int8())]))}),
               "nul_names.parquet")
add("nul_names.parquet")

# ---- what pyarrow's Arrow schema (ARROW:schema) adds to the Parquet types ----------------
# arrow.bool8 (INT(8) in Parquet: booleans, nonzero true) and time zones (UTC and fixed
# offsets applied, a named zone written in UTC), at the top level and nested; and the same
# table without the Arrow schema (store_schema=False: the Parquet types alone)
def bool8(vals):
    return pa.ExtensionArray.from_storage(pa.bool8(), pa.array(vals, pa.int8()))


arrow_schema = pa.table({
    "text": ["a", "b", "c"],
    "flag": bool8([1, 0, None]),
    "odd": bool8([-3, 2, 0]),
    "ts_east": pa.array([0, 10**12, None], pa.timestamp("ms", tz="+05:30")),
    "ts_west": pa.array([-10**15, 1, 2**50], pa.timestamp("us", tz="-08:00")),
    "ts_ns": pa.array([1, None, 10**18 + 7], pa.timestamp("ns", tz="+14:00")),
    "ts_utc": pa.array([0, 1, 2], pa.timestamp("s", tz="UTC")),
    "ts_named": pa.array([0, 1700000000, None], pa.timestamp("s", tz="Europe/Paris")),
    "nested": pa.StructArray.from_arrays(
        [pa.ListArray.from_arrays(pa.array([0, 2, 2, 2], pa.int32()), bool8([1, 0]),
                                  mask=pa.array([False, False, True])),
         pa.array([5, None, None], pa.timestamp("ms", tz="+01:00"))],
        names=["b", "t"], mask=pa.array([False, True, False])),
    "m": pa.array([[("k", 0)], [], None], pa.map_(pa.string(), pa.timestamp("ms", tz="-03:30"))),
    # pyarrow gives a dictionary-encoded column its Parquet type (UTC here), and a type
    # the Arrow IPC reader refuses (a view) leaves the other columns' facts as they are
    "ts_dict": pa.array([0, 0, 7], pa.timestamp("ms", tz="+02:00")).dictionary_encode(),
    "view": pa.array(["x", None, "z"], pa.string_view()),
})
pq.write_table(arrow_schema, "arrow_schema.parquet")
add("arrow_schema.parquet")
pq.write_table(arrow_schema, "arrow_schema_none.parquet", store_schema=False)
add("arrow_schema_none.parquet")

# ---- null text: an error, or skipped with --on-error skip --------------------------
pq.write_table(pa.table({"text": ["a", None, "c"], "k": [1, 2, 3]}), "nulltext.parquet")
add("nulltext.parquet", opts="--on-error skip", skip_null_text=True)

# ---- a multi-MB string (compresses to KBs) --------------------------------------------
big = ("long-context " * 300000)[:3_500_000]
pq.write_table(pa.table({"text": [big, "short", big[:1_000_001] + "é"], "n": [1, 2, 3]}), "big.parquet",
               compression="ZSTD")
exp = expected_lines("big.parquet")
import zstandard  # noqa: E402  (only here: the expected output is stored compressed)
with open("big.expected.jsonl.zst", "wb") as f:
    f.write(zstandard.ZstdCompressor(level=19).compress(exp.encode()))
manifest.append(("big.parquet", "text", "big.expected.jsonl.zst", ""))

with open("manifest.tsv", "w") as f:
    for row in manifest:
        f.write("\t".join(row) + "\n")
print(f"{len(manifest)} fixtures", file=sys.stderr)

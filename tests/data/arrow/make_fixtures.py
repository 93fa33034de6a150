#!/usr/bin/env python3
"""Writes the Arrow IPC fixtures of tests/cli/read_arrow.sh (files, streams and
`datasets.save_to_disk` folders) and their expected `sluice read` output, taken
from pyarrow itself.

    python3 -m venv /tmp/v && /tmp/v/bin/pip install pyarrow datasets pandas
    /tmp/v/bin/python tests/data/arrow/make_fixtures.py   # from the repository root

Each file is written by pyarrow's IPC writers (pa.ipc.new_file: the file
format, "ARROW1"; pa.ipc.new_stream: the stream format) with the body
compression off, LZ4_FRAME or ZSTD, in several record batches, with
dictionary-encoded columns (replaced and delta dictionaries in streams), nested
types and every scalar type; the folders by datasets' Dataset.save_to_disk and
DatasetDict.save_to_disk. The expected output is pa.ipc.open_file/open_stream
(...).read_all().to_pylist() (for a folder: its data files in state.json's
order), one line per row:

    {"id": <the "id" column, or FILE:N>, "text": <the --field column>, <the other columns>}

written as json.dumps(..., ensure_ascii=False, separators=(",", ":")) writes it,
with the values json.dumps cannot write converted as docs/read.md says: bytes as
base64, dates/times as isoformat(), Decimal and UUID as str(), maps as lists of
[key, value], float16 as float.

manifest.tsv lists: file or folder, --field, expected file, extra sluice options.
"""
import datetime
import decimal
import json
import os
import random
import shutil
import sys
import uuid

import numpy as np
import pyarrow as pa

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(OUT))
from pylist import conv, drop_path, wide_table  # noqa: E402  (tests/data/pylist.py)
os.chdir(OUT)
rng = random.Random(3131)
manifest = []


def read_table(path):
    if os.path.isdir(path):
        with open(os.path.join(path, "state.json")) as f:
            state = json.load(f)
        return [(os.path.join(path, d["filename"]), pa.ipc.open_stream(os.path.join(path, d["filename"])).read_all())
                for d in state["_data_files"]]
    with open(path, "rb") as f:
        magic = f.read(6)
    return [(path, (pa.ipc.open_file if magic == b"ARROW1" else pa.ipc.open_stream)(path).read_all())]


def expected_lines(path, field="text", skip_null_text=False):
    lines = []
    for name, t in read_table(path):
        for n, row in enumerate(t.to_pylist(), 1):
            row = conv(row)
            text = drop_path(row, field)
            if text is None:
                if skip_null_text:
                    continue
                raise SystemExit(f"{path}: row {n}: null text")
            rid = row.pop("id", None) if field != "id" else None
            if rid is None:
                rid = f"{name}:{n}"
            out = {"id": rid, "text": text}
            out.update(row)
            lines.append(json.dumps(out, ensure_ascii=False, separators=(",", ":")))
    return "".join(l + "\n" for l in lines)


written = {}


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


def write(path, table, stream=False, compression=None, chunk=None, **kw):
    opts = pa.ipc.IpcWriteOptions(compression=compression, **kw)
    with (pa.ipc.new_stream if stream else pa.ipc.new_file)(path, table.schema, options=opts) as w:
        w.write_table(table, max_chunksize=chunk)


def words(k):
    vocab = ["the", "data", "long", "context", "été", "naïve", "日本語", "😀", "tab\tin", "quote\"d", "back\\slash",
             "line\nbreak", "ctl\x01", "\u2028", "model", "token"]
    return " ".join(rng.choice(vocab) for _ in range(k))


# ---- FineWeb's schema: file and stream, uncompressed / LZ4_FRAME / ZSTD ---------
n = 70
dumps = ["CC-MAIN-2013-20", "CC-MAIN-2024-10", "CC-MAIN-2023-50"]
fw = pa.table({
    "text": [words(rng.randint(0, 30)) for _ in range(n)],
    "id": [f"<urn:uuid:{uuid.UUID(int=rng.getrandbits(128))}>" for _ in range(n)],
    "dump": [rng.choice(dumps) for _ in range(n)],
    "url": [f"https://example.org/{rng.randint(0, 10**6)}/é" for _ in range(n)],
    "date": [f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T0{rng.randint(0, 9)}:12:33Z" for _ in range(n)],
    "file_path": [f"s3://commoncrawl/crawl-data/{rng.randint(0, 999):05d}.warc.gz" for _ in range(n)],
    "language": [rng.choice(["en", "fr", None]) for _ in range(n)],
    "language_score": [rng.random() if i % 7 else None for i in range(n)],
    "token_count": [rng.randint(0, 2**40) for _ in range(n)],
})
for fmt in ("file", "stream"):
    for comp in (None, "lz4", "zstd"):
        name = f"fw_{fmt}_{comp or 'none'}.arrow"
        write(name, fw, stream=fmt == "stream", compression=comp, chunk=16)
        add(name, expected="fw.expected.jsonl")
write("fw_one_batch.arrow", fw, compression="zstd")
add("fw_one_batch.arrow", expected="fw.expected.jsonl")

# ---- dictionaries: a dictionary-encoded text and columns; replaced and delta
# dictionaries in streams -------------------------------------------------------------
fwd = fw.set_column(fw.schema.get_field_index("dump"), "dump", fw["dump"].dictionary_encode())
fwd = fwd.set_column(fwd.schema.get_field_index("language"), "language", fwd["language"].dictionary_encode())
fwd = fwd.set_column(0, "text", fwd["text"].dictionary_encode())
write("fw_dict_file.arrow", fwd, compression="lz4", chunk=20)
add("fw_dict_file.arrow", expected="fw.expected.jsonl")
write("fw_dict_stream.arrow", fwd, stream=True, chunk=20)
add("fw_dict_stream.arrow", expected="fw.expected.jsonl")
# batches each with their own dictionaries: replacements in a stream, deltas when asked
batches = []
for b in range(4):
    rows = fw.slice(b * 18, 18)
    batches.append(pa.record_batch([pa.array(rows["text"].to_pylist()).dictionary_encode(),
                                    pa.array(rows["id"].to_pylist()),
                                    pa.array(rows["dump"].to_pylist()).dictionary_encode()],
                                   names=["text", "id", "dump"]))
schema = batches[0].schema
with pa.ipc.new_stream("dict_replace.arrow", schema, options=pa.ipc.IpcWriteOptions(compression="zstd")) as w:
    for bt in batches:
        w.write_batch(bt)
add("dict_replace.arrow")
# deltas: each batch's dictionary extends the one before (values in order of first use)
vocab = {"text": [], "dump": []}
delta = []
for b in range(4):
    rows = fw.slice(b * 18, 18)
    cols = []
    for c in ("text", "id", "dump"):
        vals = rows[c].to_pylist()
        if c == "id":
            cols.append(pa.array(vals))
            continue
        for v in vals:
            if v not in vocab[c]:
                vocab[c].append(v)
        cols.append(pa.DictionaryArray.from_arrays(pa.array([vocab[c].index(v) for v in vals], pa.int32()),
                                                   pa.array(list(vocab[c]))))
    delta.append(pa.record_batch(cols, names=["text", "id", "dump"]))
with pa.ipc.new_stream("dict_delta.arrow", delta[0].schema,
                       options=pa.ipc.IpcWriteOptions(emit_dictionary_deltas=True)) as w:
    for bt in delta:
        w.write_batch(bt)
add("dict_delta.arrow", expected="dict_replace.expected.jsonl")

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
write("stack_stream_zstd.arrow", stack, stream=True, compression="zstd", chunk=25)
add("stack_stream_zstd.arrow", field="content")

# ---- nested: lists of structs, maps, structs, a dotted text path ---------------
n = 50
item = pa.struct([("name", pa.string()), ("score", pa.float32()), ("tags", pa.list_(pa.string()))])
nested = pa.table({
    "doc": pa.array([None if i == 7 else {"body": words(rng.randint(1, 20)), "lang": rng.choice(["en", None])}
                     for i in range(n)], pa.struct([("body", pa.string()), ("lang", pa.string())])),
    "items": pa.array([None if i % 11 == 3 else
                       [None if (i + j) % 13 == 0 else
                        {"name": rng.choice(["a", "b", None]), "score": rng.random(),
                         "tags": None if j % 4 == 3 else [rng.choice(["x", "y"]) for _ in range(rng.randint(0, 2))]}
                        for j in range(rng.randint(0, 3))] for i in range(n)], pa.list_(item)),
    "attrs": pa.array([None if i % 10 == 4 else [(f"k{j}", rng.choice([1, 2, None])) for j in range(rng.randint(0, 3))]
                       for i in range(n)], pa.map_(pa.string(), pa.int64())),
    "matrix": pa.array([[[rng.randint(0, 9) for _ in range(rng.randint(0, 2))] for _ in range(rng.randint(0, 2))]
                        for _ in range(n)], pa.list_(pa.list_(pa.int16()))),
    "fixed": pa.array([[rng.randint(0, 5) for _ in range(2)] if i % 6 else None for i in range(n)],
                      pa.list_(pa.int8(), 2)),
    "large": pa.array([[words(1) for _ in range(rng.randint(0, 3))] for _ in range(n)], pa.large_list(pa.large_string())),
    "tagd": pa.array([[rng.choice(["p", "q", None]) for _ in range(rng.randint(0, 3))] for _ in range(n)],
                     pa.list_(pa.dictionary(pa.int8(), pa.string()))),
})
write("nested_file.arrow", nested, chunk=13)
add("nested_file.arrow", field="doc.body", opts="--on-error skip", skip_null_text=True)
write("nested_stream_lz4.arrow", nested, stream=True, compression="lz4", chunk=20)
add("nested_stream_lz4.arrow", field="doc.body", opts="--on-error skip", skip_null_text=True)

# ---- every type ------------------------------------------------------------------
n = 40
types = pa.table({
    "text": pa.array([words(3) for _ in range(n)], pa.large_string()),
    "id": pa.array([i * 7 - 100 for i in range(n)], pa.int64()),
    "b": pa.array([None if i % 5 == 0 else i % 2 == 0 for i in range(n)], pa.bool_()),
    "i8": pa.array([rng.randint(-128, 127) for _ in range(n)], pa.int8()),
    "i16": pa.array([rng.randint(-2**15, 2**15 - 1) for _ in range(n)], pa.int16()),
    "i32": pa.array([rng.randint(-2**31, 2**31 - 1) if i % 4 else None for i in range(n)], pa.int32()),
    "i64": pa.array([rng.randint(-2**63, 2**63 - 1) for _ in range(n)], pa.int64()),
    "u8": pa.array([rng.randint(0, 255) for _ in range(n)], pa.uint8()),
    "u16": pa.array([rng.randint(0, 2**16 - 1) for _ in range(n)], pa.uint16()),
    "u32": pa.array([rng.randint(0, 2**32 - 1) for _ in range(n)], pa.uint32()),
    "u64": pa.array([rng.randint(0, 2**64 - 1) for _ in range(n)], pa.uint64()),
    "f16": pa.array(np.array([rng.uniform(-100, 100) for _ in range(n)], np.float16), pa.float16()),
    "f32": pa.array([rng.uniform(-1e6, 1e6) for _ in range(n)], pa.float32()),
    "f64": pa.array([rng.choice([rng.uniform(-1, 1), 10 ** rng.randint(-30, 30) * rng.random(), 0.0, -0.0, 5e-324,
                                 1.7976931348623157e308, 123456789012345678.0, 0.3, float("nan"), float("-inf")])
                     for _ in range(n)], pa.float64()),
    "date32": pa.array([datetime.date(1970, 1, 1) + datetime.timedelta(days=rng.randint(-50000, 50000))
                        for _ in range(n)], pa.date32()),
    "date64": pa.array([datetime.date(1970, 1, 1) + datetime.timedelta(days=rng.randint(-50000, 50000))
                        for _ in range(n)], pa.date64()),
    "ts_s": pa.array([rng.randint(-2**33, 2**34) for _ in range(n)], pa.timestamp("s")),
    "ts_ms": pa.array([rng.randint(-2**40, 2**42) for _ in range(n)], pa.timestamp("ms")),
    "ts_us_utc": pa.array([rng.randint(-2**50, 2**52) if i % 3 else rng.randint(0, 10**6) * 10**6
                           for i in range(n)], pa.timestamp("us", tz="UTC")),
    "ts_ns": pa.array([rng.randint(0, 2**62) if i % 2 else rng.randint(0, 2**40) * 1000 for i in range(n)],
                      pa.timestamp("ns")),
    "ts_off": pa.array([rng.randint(0, 2**50) for _ in range(n)], pa.timestamp("us", tz="+05:30")),
    "ts_neg": pa.array([rng.randint(0, 2**40) for _ in range(n)], pa.timestamp("ms", tz="-03:00")),
    "t32s": pa.array([rng.randint(0, 86399) for _ in range(n)], pa.time32("s")),
    "t32": pa.array([rng.randint(0, 86400 * 1000 - 1) for _ in range(n)], pa.time32("ms")),
    "t64": pa.array([rng.randint(0, 86400 * 10**6 - 1) for _ in range(n)], pa.time64("us")),
    "t64ns": pa.array([rng.randint(0, 86400 * 10**9 - 1) // 1000 * 1000 for _ in range(n)], pa.time64("ns")),
    "bin": pa.array([bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 9))) for _ in range(n)], pa.binary()),
    "lbin": pa.array([bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 9))) for _ in range(n)],
                     pa.large_binary()),
    "fsb": pa.array([bytes(rng.getrandbits(8) for _ in range(4)) for _ in range(n)], pa.binary(4)),
    "dec9": pa.array([decimal.Decimal(rng.randint(-10**9 + 1, 10**9 - 1)).scaleb(-3) for _ in range(n)],
                     pa.decimal128(9, 3)),
    "dec38": pa.array([decimal.Decimal(rng.randint(-10**38 + 1, 10**38 - 1)).scaleb(-2) for _ in range(n)],
                      pa.decimal128(38, 2)),
    "dec_small": pa.array([decimal.Decimal(rng.randint(-99, 99)).scaleb(-9) for _ in range(n)], pa.decimal128(10, 9)),
    "dec256": pa.array([decimal.Decimal(rng.randint(-10**30, 10**30)).scaleb(-5) for _ in range(n)],
                       pa.decimal256(40, 5)),
    "dict": pa.array([rng.choice(["red", "green", None]) for _ in range(n)]).dictionary_encode(),
    "dict_int": pa.array([rng.choice([3, 5, None]) for _ in range(n)]).dictionary_encode(),
    "uuid": pa.array([uuid.UUID(int=rng.getrandbits(128)).bytes for _ in range(n)], pa.uuid()),
    "null": pa.nulls(n),
    "empty": pa.array([{} for _ in range(n)], pa.struct([])),
})
write("types_file.arrow", types, chunk=15)
add("types_file.arrow")
write("types_stream_zstd.arrow", types, stream=True, compression="zstd", chunk=15)
add("types_stream_zstd.arrow", expected="types_file.expected.jsonl")

# ---- dates and timestamps at the ends of the years Python's datetime holds (1, 9999) -----
D0, D1 = -719162, 2932896                    # 0001-01-01 and 9999-12-31, days since 1970-01-01
S0, S1 = D0 * 86400, (D1 + 1) * 86400 - 1    # their first and last second
write("edges.arrow", pa.table({
    "text": ["first", "last"],
    "d32": pa.array([D0, D1], pa.date32()),
    "d64": pa.array([D0 * 86400000, D1 * 86400000], pa.date64()),
    "ts_s": pa.array([S0, S1], pa.timestamp("s")),
    "ts_ms": pa.array([S0 * 1000, S1 * 1000 + 999], pa.timestamp("ms")),
    "ts_us": pa.array([S0 * 10**6, S1 * 10**6 + 999999], pa.timestamp("us", tz="UTC")),
    "ts_ns": pa.array([-2**63 + 1, 2**63 - 1], pa.timestamp("ns")),
    "ts_east": pa.array([S0 * 1000, (S1 - 19800) * 1000], pa.timestamp("ms", tz="+05:30")),
    "ts_west": pa.array([(S0 + 18000) * 1000, S1 * 1000], pa.timestamp("ms", tz="-05:00")),
}))
add("edges.arrow")

# ---- decimals of up to 76 digits (256 bits), and times in nanoseconds ---------------
wide = wide_table()
write("wide.arrow", wide)
add("wide.arrow")

# ---- ids: strings with nulls (generated FILE:N), floats ------------------------------
write("ids.arrow", pa.table({"text": ["a", "b", "c", "d"], "id": ["x", None, "", "é\"q"]}), stream=True)
add("ids.arrow")
# a NUL inside column names (whole names written; "id\0x" and "text\0" are neither id nor text)
write("nul_names.arrow", pa.table({
    "text": ["a", "b"], "a\x00b": [1, 2], "id\x00x": ["p", "q"], "text\x00": ["s", "t"],
    "s": pa.array([{"k\x00": 1, "k": 2}, None], pa.struct([("k\x00", pa.int8()), ("k", pa.int8())]))}))
add("nul_names.arrow")
# the arrow.bool8 extension (booleans in to_pylist: nonzero true) and an id column of
# the Null type (datasets writes one for ids that are all None: FILE:N, as a null id)
write("bool8_nullid.arrow", pa.table({
    "text": ["a", "b", "c", "d"], "id": pa.nulls(4),
    "b": pa.ExtensionArray.from_storage(pa.bool8(), pa.array([1, None, 0, -2], pa.int8())),
    "l": pa.ListArray.from_arrays(pa.array([0, 1, None, 1, 2], pa.int32()),
                                  pa.ExtensionArray.from_storage(pa.bool8(), pa.array([3, None], pa.int8())))}))
add("bool8_nullid.arrow")

# ---- null text: an error, or skipped with --on-error skip --------------------------
write("nulltext.arrow", pa.table({"text": ["a", None, "c"], "k": [1, 2, 3]}))
add("nulltext.arrow", opts="--on-error skip", skip_null_text=True)

# ---- datasets.save_to_disk: a Dataset in shards, a DatasetDict -----------------------
try:
    import datasets
    datasets.disable_progress_bars()
    for d in ("hf_dataset", "hf_dict"):
        shutil.rmtree(d, ignore_errors=True)
    rows = fw.to_pylist()
    ds = datasets.Dataset.from_list(rows)
    ds.save_to_disk("hf_dataset", num_shards=3)
    add("hf_dataset", expected="hf_dataset.expected.jsonl")
    # a DatasetDict: a train split of FineWeb rows, a test split of The Stack's rows (content as "text")
    dd = datasets.DatasetDict({"train": datasets.Dataset.from_list(rows[:40]),
                               "test": datasets.Dataset.from_list(
                                   [{"text": r["content"], **{k: v for k, v in r.items() if k != "content"}}
                                    for r in stack.to_pylist()[:9]])})
    dd.save_to_disk("hf_dict")
    exp = expected_lines("hf_dict/train") + expected_lines("hf_dict/test")
    with open("hf_dict.expected.jsonl", "w") as f:
        f.write(exp)
    manifest.append(("hf_dict", "text", "hf_dict.expected.jsonl", ""))
except ImportError:
    print("datasets missing: skipped", file=sys.stderr)

# ---- the view types (Utf8View, BinaryView: 16-byte views, strings of up to 12 bytes
# inline, longer ones in variadic data buffers) and polars' own files -------------------
n = 45
sv = [words(rng.randint(0, 6)) if i % 9 else rng.choice(["", "short", "twelve bytes", "thirteen byte"])
      for i in range(n)]
views = pa.table({
    # two arrays concatenated: a column with two variadic data buffers
    "text": pa.concat_arrays([pa.array(sv[:20], pa.string_view()), pa.array(sv[20:], pa.string_view())]),
    "id": pa.array([f"doc-{i}-{'x' * (i % 15)}" if i % 8 else None for i in range(n)], pa.string_view()),
    "bv": pa.array([None if i % 6 == 1 else bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 20)))
                    for i in range(n)], pa.binary_view()),
    "tags": pa.array([None if i % 7 == 2 else [words(rng.randint(1, 4)) for _ in range(rng.randint(0, 3))]
                      for i in range(n)], pa.list_(pa.string_view())),
    "s": pa.array([{"v": None if i % 5 == 0 else words(rng.randint(0, 5))} for i in range(n)],
                  pa.struct([("v", pa.string_view())])),
    "dv": pa.array([rng.choice(["red", "a much longer colour name", None]) for _ in range(n)],
                   pa.string_view()).dictionary_encode(),
})
write("views_file.arrow", views, chunk=16)
add("views_file.arrow")
write("views_stream_zstd.arrow", views, stream=True, compression="zstd", chunk=10)
add("views_stream_zstd.arrow")
write("views_text_only.arrow", pa.table({"text": pa.array(sv, pa.string_view())}), stream=True, compression="lz4")
add("views_text_only.arrow")
# polars writes string views, and in its IPC files a schema message that is no framed
# message (pyarrow reads such a file by its footer, as sluice does)
try:
    import polars as pl
    pdf = pl.DataFrame({"text": sv, "id": [f"p{i}" for i in range(n)], "n": list(range(n)),
                        "tags": [[words(1)] * (i % 3) for i in range(n)]})
    pdf.write_ipc("polars_file.arrow", compression="zstd")
    add("polars_file.arrow")
    pdf.write_ipc_stream("polars_stream.arrow", compression="lz4")
    add("polars_stream.arrow", expected="polars_file.expected.jsonl")
except ImportError:
    print("polars missing: skipped", file=sys.stderr)

# ---- bad input (tests/cli/read_arrow.sh checks the one-line errors) ----------------
os.makedirs("bad", exist_ok=True)


def messages(data, pos=0):
    """(offset, metadata length, body offset, body length) of each message of a stream."""
    out = []
    reader = pa.BufferReader(data[pos:])
    while True:
        at = reader.tell()
        try:
            m = pa.ipc.read_message(reader)
        except (StopIteration, EOFError, pa.ArrowInvalid, OSError):
            break
        meta_len = len(m.metadata) + 8
        out.append((pos + at, meta_len, pos + at + meta_len, m.body.size if m.body else 0, m.type))
    return out


def put(name, data):
    with open(os.path.join("bad", name), "wb") as f:
        f.write(data)


plain = pa.table({"text": ["alpha", "beta", "gamma", "delta"] * 4, "n": list(range(16))})
write("bad/_plain.arrow", plain, stream=True, chunk=4)
good = open("bad/_plain.arrow", "rb").read()
os.remove("bad/_plain.arrow")
msgs = messages(good)
batch1 = [m for m in msgs if m[4] == "record batch"][1]
put("truncated_stream.arrow", good[:batch1[2] + 10])               # in the middle of a body
b = bytearray(good)
b[batch1[2] + 4:batch1[2] + 8] = (0x7FFFFF00).to_bytes(4, "little")  # text offsets[1]: beyond the data
put("bad_offsets.arrow", bytes(b))
b = bytearray(good)
b[batch1[0] + 8:batch1[0] + 12] = (0xFFFFF0).to_bytes(4, "little")   # the flatbuffer's root offset
put("bad_flatbuffer.arrow", bytes(b))
b = bytearray(good)
b[batch1[0] + 4:batch1[0] + 8] = (0x7FFFFFF0).to_bytes(4, "little")  # a metadata length that lies
put("bad_meta_len.arrow", bytes(b))
write("bad/_file.arrow", plain, chunk=4)
gf = open("bad/_file.arrow", "rb").read()
os.remove("bad/_file.arrow")
put("truncated_file.arrow", gf[:len(gf) // 2])                       # no footer, no end magic
b = bytearray(gf)
b[-10:-6] = (0x7FFFFFF0).to_bytes(4, "little")                       # footer length that lies
put("bad_footer_len.arrow", bytes(b))
write("bad/_z.arrow", pa.table({"text": [words(50) for _ in range(40)]}), stream=True, compression="zstd", chunk=20)
gz = open("bad/_z.arrow", "rb").read()
os.remove("bad/_z.arrow")
zb = [m for m in messages(gz) if m[4] == "record batch"][1]
b = bytearray(gz)
for i in range(zb[2] + zb[3] // 2, zb[2] + zb[3] // 2 + 24):       # the compressed text data
    b[i] ^= 0x5A
put("bad_zstd.arrow", bytes(b))
# a dictionary index beyond the dictionary
idx = pa.array([0, 1, 7, 1], pa.int8())
bad_dict = pa.DictionaryArray.from_arrays(idx, pa.array(["x", "y"]), safe=False)
try:
    write("bad/bad_dict_index.arrow", pa.table({"text": ["a", "b", "c", "d"], "k": bad_dict}), stream=True)
except pa.ArrowInvalid:
    print("pyarrow refused the bad dictionary index: bad_dict_index.arrow not written", file=sys.stderr)
# a Time (seconds) of 86400, no time of day (pyarrow's to_pylist wraps it to 00:00)
write("bad/bad_time.arrow", pa.table({"text": ["a", "b", "c"], "t": pa.array([0, 3600, 86400], pa.time32("s"))}),
      stream=True)

# dates and timestamps one step past the years Python's datetime holds (1 to 9999): to_pylist
# raises OverflowError; sluice refuses them (the ends themselves: edges.arrow)
D0, D1 = -719162, 2932896                    # 0001-01-01 and 9999-12-31, days since 1970-01-01
S0, S1 = D0 * 86400, (D1 + 1) * 86400 - 1    # their first and last second
write("bad/bad_date.arrow", pa.table({"text": ["a", "b", "c"], "d": pa.array([0, D1, D1 + 1], pa.date32())}))
write("bad/bad_timestamp.arrow", pa.table({"text": ["a", "b", "c"],
                                           "ts": pa.array([0, S0 * 10**6, S0 * 10**6 - 1], pa.timestamp("us"))}),
      stream=True)
# in range in UTC, not in local time (-05:00 takes 0001-01-01T01:00 back into year 0)
write("bad/bad_timestamp_tz.arrow", pa.table({"text": ["a", "b", "c"],
                                              "ts": pa.array([0, S1, S0 + 3600], pa.timestamp("s", tz="-05:00"))}))
# an arrow.bool8 column as the id: booleans are no id (to_pylist gives True/False)
write("bad/bool8_id.arrow", pa.table({"text": ["a", "b"], "id": pa.ExtensionArray.from_storage(
    pa.bool8(), pa.array([1, 0], pa.int8()))}))
for name in ("bad/bad_date.arrow", "bad/bad_timestamp.arrow", "bad/bad_timestamp_tz.arrow"):
    try:
        read_table(name)[0][1].to_pylist()
        raise SystemExit(f"{name}: pyarrow reads it")
    except OverflowError:
        pass

# views that point outside their data: a buffer index past the variadic buffers, a
# range past the end of its buffer (pyarrow's writer does not check views)


def view(n, buf=0, off=0, inline=b""):
    if n <= 12:
        return n.to_bytes(4, "little") + inline.ljust(12, b"\0")
    return n.to_bytes(4, "little") + b"abcd" + buf.to_bytes(4, "little") + off.to_bytes(4, "little")


data = pa.py_buffer(b"0123456789abcdefghijklmnopqrstuvwxyz")
for name, bad_view in (("bad_view_buffer.arrow", view(20, buf=3)), ("bad_view_range.arrow", view(20, off=30))):
    col = pa.Array.from_buffers(pa.string_view(), 3, [None, pa.py_buffer(view(2, inline=b"ok") + view(20) + bad_view),
                                                      data])
    write("bad/" + name, pa.table({"text": col}), stream=True)


def file_bytes(table, chunk):
    """The bytes of table written as an IPC file."""
    write("bad/_f.arrow", table, chunk=chunk)
    with open("bad/_f.arrow", "rb") as f:
        data = bytearray(f.read())
    os.remove("bad/_f.arrow")
    return data


def footer_vector(data, i):
    """(footer start, footer length, position of the Footer's field i (a vector's
    offset), position of that vector) in the bytes of an IPC file."""
    flen = int.from_bytes(data[-10:-6], "little")
    foot = len(data) - 10 - flen
    root = foot + int.from_bytes(data[foot:foot + 4], "little")
    vt = root - int.from_bytes(data[root:root + 4], "little", signed=True)
    field = root + int.from_bytes(data[vt + 4 + 2 * i:vt + 6 + 2 * i], "little")
    return foot, flen, field, field + int.from_bytes(data[field:field + 4], "little")


# a file whose footer puts a record batch past its end
fb_ = file_bytes(plain, 4)
vec = footer_vector(fb_, 3)[3]                                            # recordBatches (field 3)
fb_[vec + 4 + 24:vec + 4 + 32] = (1 << 40).to_bytes(8, "little")           # the second block's offset
put("bad_footer_block.arrow", bytes(fb_))
# a file whose footer lists its dictionary batch twice: the second is a replacement, which
# a file cannot hold (pyarrow: "Unsupported dictionary replacement in IPC file"). The new
# dictionaries vector is put after the footer's bytes and the field pointed at it.
fd = file_bytes(pa.table({"text": pa.array(["a", "b", "a"]).dictionary_encode()}), 2)
foot, flen, field, old_vec = footer_vector(fd, 2)                          # dictionaries (field 2)
assert int.from_bytes(fd[old_vec:old_vec + 4], "little") == 1
block = bytes(fd[old_vec + 4:old_vec + 28])
body = fd[:foot + flen]
while (len(body) + 4) % 8:
    body += b"\0"
new_vec = len(body)
body += (2).to_bytes(4, "little") + block + block
fd[field:field + 4] = (new_vec - field).to_bytes(4, "little")
body[field:field + 4] = fd[field:field + 4]
put("dict_replace_file.arrow", bytes(body) + (len(body) - foot).to_bytes(4, "little") + b"ARROW1")
try:
    pa.ipc.open_file("bad/dict_replace_file.arrow").read_all()
    raise SystemExit("bad/dict_replace_file.arrow: pyarrow reads it")
except pa.ArrowInvalid as e:
    assert "replacement" in str(e), e

# ---- seeds of tests/fuzz/fuzz_arrow_ipc.c: small files and streams, a flags byte first ---
seeds = os.path.join("..", "..", "fuzz", "corpus", "arrow_ipc")
os.makedirs(seeds, exist_ok=True)


def seed(name, table, flags=0, **kw):
    write(os.path.join(seeds, "_tmp"), table, **kw)
    with open(os.path.join(seeds, "_tmp"), "rb") as f:
        data = f.read()
    os.remove(os.path.join(seeds, "_tmp"))
    with open(os.path.join(seeds, name), "wb") as f:
        f.write(bytes([flags]) + data)


seed("fw_file", fw.slice(0, 5), chunk=2)
seed("fw_stream_zstd", fw.slice(0, 5), stream=True, compression="zstd", chunk=2)
seed("fw_stream_lz4", fw.slice(0, 5), stream=True, compression="lz4", chunk=3)
seed("dict", fwd.slice(0, 6), stream=True, chunk=3)
seed("nested", nested.slice(0, 4), flags=1, stream=True, chunk=2)
seed("types", types.slice(0, 3), stream=True, chunk=2)
seed("stack", stack.slice(0, 4), flags=2, chunk=2)
seed("views_file", views.slice(0, 5), chunk=2)
seed("views_stream_lz4", views.slice(5, 4), stream=True, compression="lz4", chunk=3)
if os.path.exists("polars_file.arrow"):
    with open("polars_file.arrow", "rb") as f, open(os.path.join(seeds, "polars_file"), "wb") as g:
        g.write(b"\0" + f.read())

with open("manifest.tsv", "w") as f:
    for row in manifest:
        f.write("\t".join(row) + "\n")
print(f"{len(manifest)} fixtures", file=sys.stderr)

#!/usr/bin/env python3
"""Randomized differential test of `sluice read` on Arrow IPC files and streams
against pyarrow (a developer tool; not run by `make test`).

    python3 -m venv /tmp/v && /tmp/v/bin/pip install pyarrow numpy pandas
    /tmp/v/bin/python tests/data/arrow/diff_random.py --seed 1 --n 200 --sluice build/sluice
    /tmp/v/bin/python tests/data/arrow/diff_random.py --seed 1 --case 17 --keep -v   # one case again
    /tmp/v/bin/python tests/data/arrow/diff_random.py --seed 1 --case 17 --minimize  # shrink it

The Arrow sibling of tests/data/parquet/diff_random.py, whose random types and
values (every scalar type, nested in lists, large lists, fixed-size lists,
structs and maps, nulls at every level, dictionary-encoded columns, odd
column names), expected-output rules and sluice runs (-@ threads,
--mem-budget, standard input, --part R/N pieces concatenated) it imports;
only what is Arrow-specific is here. Each case (seed, number) is a schema
(with random schema and field metadata) and several record batches of random
sizes, empty ones included, written by pa.ipc.new_file (the file format),
pa.ipc.new_stream (the stream format), pa.feather.write_feather (Feather
v2) or polars (pl.from_arrow, then write_ipc or write_ipc_stream: polars'
own types and its files' unframed schema message), uncompressed, LZ4_FRAME
or ZSTD, metadata V4 or V5. Dictionary-encoded
columns (top level, inside lists, structs and maps) are written with one
dictionary for all batches, with a dictionary per batch (replacements, in
streams) or with dictionaries growing from batch to batch
(emit_dictionary_deltas: delta batches, in files and streams); string and
binary views (Utf8View, BinaryView) in half the cases. The text is a
string, large string, string view or binary column, dictionary-encoded or not, at the top
or inside a struct (--field doc.body); the `id` a string, integer, float,
string view, dictionary or null column (or another type, refused). Expected output:
pa.ipc.open_file(FILE) (or open_stream) .read_all().to_pylist(), converted as
tests/data/pylist.py's conv() does (docs/read.md).

Documented deviations are expected, not reported: a named time zone
(`Europe/Paris`) is written in UTC (`+00:00`), a fixed offset or `UTC` as
to_pylist's aware datetime; where to_pylist raises (a date or timestamp
outside the years 1 to 9999) sluice must fail; the types refused by name
(Union, Interval, Duration, RunEndEncoded, the list views) are generated
now and then, and sluice must then fail with an error naming the type; an
`id` column that is neither a string nor a number nor of the Null type is an
error;
a null text is an error (or skipped with --on-error skip).

A failing case is reported with its class (the differing column's Arrow type,
or sluice's error message); --keep keeps its file, the expected and actual
output and a description under --work. --avoid CLASS[,CLASS] stops the
generator from producing a known discrepancy (see AVOIDABLE). Exit status: 0
when every case agrees, 1 otherwise.
"""
import json
import os
import random
import re
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.feather  # noqa: F401  (pa.feather)



def _load_parquet_script():
    """tests/data/parquet/diff_random.py, as the module pq_diff_random (this file has its name)."""
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "parquet", "diff_random.py")
    spec = importlib.util.spec_from_file_location("pq_diff_random", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["pq_diff_random"] = mod
    spec.loader.exec_module(mod)  # (it puts tests/data on sys.path, for pylist)
    return mod


pqdiff = _load_parquet_script()

# Generator switches for known discrepancies (--avoid), so that runs look for others.
AVOIDABLE = dict({k: v for k, v in pqdiff.AVOIDABLE.items() if k in ("time_ns", "dup_name", "float_pow2")},
                 empty_table="files and streams of no rows",
                 refused="the types refused by name (Union, Interval, Duration, RunEndEncoded, list views)",
                 null_id="an `id` column of the Null type",
                 binary_text="a binary text column")

# ---- expected output -------------------------------------------------------------

REFUSED = [  # (predicate, the name sluice's error must hold (a regular expression))
    (pa.types.is_union, "union"),
    (pa.types.is_interval, "interval"),
    (pa.types.is_duration, "duration"),
    (pa.types.is_run_end_encoded, "run.?end"),
    (lambda t: pa.types.is_list_view(t) or pa.types.is_large_list_view(t), "view"),
]


def refused_in(t):
    """The name of the first type refused by name inside type t, or None."""
    for pred, name in REFUSED:
        if pred(t):
            return name
    if isinstance(t, pa.BaseExtensionType):
        return refused_in(t.storage_type)
    if pa.types.is_dictionary(t):
        return refused_in(t.value_type)
    for i in range(getattr(t, "num_fields", 0)):
        r = refused_in(t.field(i).type)
        if r:
            return r
    return None


def read_ipc(path, stats=None):
    with open(path, "rb") as f:
        magic = f.read(6)
    r = (pa.ipc.open_file if magic == b"ARROW1" else pa.ipc.open_stream)(path)
    t = r.read_all()
    if stats is not None:  # what the file holds, for the summary
        st = r.stats
        stats.update({"dictionary deltas": st.num_dictionary_deltas > 0,
                      "replaced dictionaries": st.num_replaced_dictionaries > 0,
                      "dictionaries": st.num_dictionary_batches > 0,
                      "empty batches": any(b.num_rows == 0 for b in t.to_batches()) or not t.num_rows,
                      "several batches": st.num_record_batches > 1})
    return t


class Expected(pqdiff.Expected):
    refused = None  # the type name sluice's error must hold


def expected_output(path, name, field, skip_null_text):
    """What `sluice read` must write for the file at path (named name)."""
    ex = Expected()
    t = read_ipc(path)
    for f in t.schema:
        r = refused_in(f.type)
        if r:
            ex.error, ex.refused = "column %r of type %s: refused by name" % (f.name, f.type), r
            return ex
    rows = pqdiff.table_rows(t, field, ex)
    if rows is not None:
        pqdiff.rows_lines(rows, name, field, skip_null_text, ex)
    return ex


# ---- random types and values ------------------------------------------------------


def map_type(t, fn):
    """t with fn applied to every type inside it, innermost first."""
    if pa.types.is_dictionary(t):
        t = pa.dictionary(t.index_type, map_type(t.value_type, fn))
    elif pa.types.is_map(t):
        t = pa.map_(t.key_field, t.item_field.with_type(map_type(t.item_type, fn)))
    elif pa.types.is_fixed_size_list(t):
        t = pa.list_(t.value_field.with_type(map_type(t.value_type, fn)), t.list_size)
    elif pa.types.is_large_list(t):
        t = pa.large_list(t.value_field.with_type(map_type(t.value_type, fn)))
    elif pa.types.is_list(t):
        t = pa.list_(t.value_field.with_type(map_type(t.value_type, fn)))
    elif pa.types.is_struct(t):
        t = pa.struct([f.with_type(map_type(f.type, fn)) for f in t])
    return fn(t)


def rand_metadata(rng):
    md = {}
    for _ in range(rng.randint(1, 4)):
        k = rng.choice(["k", "é", "huggingface", "pandas", "ARROW:x", "", "a b", "😀"]) + str(rng.randint(0, 99))
        md[k] = rng.choice([pqdiff.rand_str(rng, False), json.dumps({"info": {"features": [1, "x"]}}), ""])
    return md


def with_field_metadata(rng, t):
    """Metadata on some fields of the structs inside t."""
    def fn(x):
        if pa.types.is_struct(x) and rng.random() < 0.5:
            return pa.struct([f.with_metadata(rand_metadata(rng)) if rng.random() < 0.5 else f for f in x])
        return x
    return map_type(t, fn)


def rand_type(rng, ctx):
    t = pqdiff.rand_type(rng, ctx)
    if not ctx["views"]:  # string and binary views in some cases only
        t = map_type(t, lambda x: pa.string() if pa.types.is_string_view(x) else pa.binary()
                     if pa.types.is_binary_view(x) else x)
    if ctx["field_md"]:
        t = with_field_metadata(rng, t)
    return t


def build(rng, t, n, ctx, p_null=None):
    """A random array of type t (for types the Parquet script does not build:
    at the top or in a list, the ones refused by name)."""
    if pa.types.is_list(t) and refused_in(t.value_type):
        offs, tot = [0], 0
        for _ in range(n):
            tot += rng.randint(0, 3)
            offs.append(tot)
        return pa.ListArray.from_arrays(pa.array(offs, pa.int32()), build(rng, t.value_type, tot, ctx))
    if pa.types.is_duration(t):
        return pa.array([None if rng.random() < 0.2 else rng.randint(-2**40, 2**40) for _ in range(n)], t)
    if pa.types.is_interval(t):
        return pa.array([None if rng.random() < 0.2 else (rng.randint(-9, 9), rng.randint(-9, 9), rng.randint(0, 10**9))
                         for _ in range(n)], t)
    if pa.types.is_union(t):
        kids = [pqdiff.build(rng, t.field(i).type, n, ctx) for i in range(t.num_fields)]
        codes = pa.array([rng.randrange(t.num_fields) for _ in range(n)], pa.int8())
        names = [t.field(i).name for i in range(t.num_fields)]
        if t.mode == "sparse":
            return pa.UnionArray.from_sparse(codes, kids, names)
        return pa.UnionArray.from_dense(codes, pa.array(list(range(n)), pa.int32()), kids, names)
    if pa.types.is_run_end_encoded(t):
        return pc.run_end_encode(pqdiff.build(rng, t.value_type, n, ctx), run_end_type=t.run_end_type)
    if pa.types.is_list_view(t):
        vals = pqdiff.build(rng, t.value_type, 2 * n, ctx)
        offs = [rng.randint(0, n) for _ in range(n)]
        sizes = [rng.randint(0, n) for _ in range(n)]
        return pa.ListViewArray.from_arrays(pa.array(offs, pa.int32()), pa.array(sizes, pa.int32()), vals)
    return pqdiff.build(rng, t, n, ctx, p_null)


def refused_type(rng):
    k = rng.choice(["duration", "interval", "sparse", "dense", "ree", "list_view"])
    if k == "duration":
        t = pa.duration(rng.choice(["s", "ms", "us", "ns"]))
    elif k == "interval":
        t = pa.month_day_nano_interval()
    elif k in ("sparse", "dense"):
        t = (pa.sparse_union if k == "sparse" else pa.dense_union)([pa.field("i", pa.int32()),
                                                                    pa.field("s", pa.string())])
    elif k == "ree":
        t = pa.run_end_encoded(pa.int32(), pa.string())
    elif k == "list_view":
        t = pa.list_view(pa.int16())
    return pa.list_(t) if rng.random() < 0.3 and k not in ("ree",) else t


# ---- dictionaries across batches ----------------------------------------------------


def redict(arr, mode, state, path=""):
    """arr (a batch's column, not a slice) with the dictionaries inside it chosen
    by mode: "delta" extends state's dictionary of that place with the batch's
    new values (each a prefix of the next one: delta batches), "fixed" uses
    state's dictionary as it is (one dictionary for all batches)."""
    t = arr.type
    if pa.types.is_dictionary(t):
        vals = arr.dictionary.take(arr.indices)
        vocab = state.get(path)
        if vocab is None:
            vocab = pa.array([], t.value_type)
        if mode == "delta":
            lim = min(2 ** (t.index_type.bit_width - 1), 1 << 30)
            uniq = pc.unique(vals.drop_null())
            new = uniq.filter(pc.invert(pc.is_in(uniq, value_set=vocab)))
            new = new.slice(0, max(0, lim - len(vocab)))
            if len(new):
                vocab = pa.concat_arrays([vocab, new])
            state[path] = vocab
        idx = pc.index_in(vals, value_set=vocab)
        lost = pc.and_(idx.is_null(), vals.is_valid())  # values beyond the index type's range
        if len(vocab):
            idx = pc.if_else(lost, 0, idx)
        return pa.DictionaryArray.from_arrays(idx.cast(t.index_type), vocab)
    mask = arr.is_null() if arr.null_count else None
    if pa.types.is_map(t):
        return pa.MapArray.from_arrays(arr.offsets, redict(arr.keys, mode, state, path + "/k"),
                                       redict(arr.items, mode, state, path + "/v"), type=t, mask=mask)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        cls = pa.LargeListArray if pa.types.is_large_list(t) else pa.ListArray
        return cls.from_arrays(arr.offsets, redict(arr.values, mode, state, path + "/l"), type=t, mask=mask)
    if pa.types.is_fixed_size_list(t):
        return pa.FixedSizeListArray.from_arrays(redict(arr.values, mode, state, path + "/l"), type=t, mask=mask)
    if pa.types.is_struct(t):
        kids = [redict(arr.field(i), mode, state, "%s/%d" % (path, i)) for i in range(t.num_fields)]
        return pa.StructArray.from_arrays(kids, fields=list(t), mask=mask)
    return arr


def has_dict(t):
    if pa.types.is_dictionary(t):
        return True
    return any(has_dict(t.field(i).type) for i in range(getattr(t, "num_fields", 0)))


# ---- a case --------------------------------------------------------------------------


class Case:
    pass


MAX_BYTES = 2 << 20  # a case's batches in memory, at most


def gen_case(seed, i, avoid):
    rng = random.Random("arrow:%s:%d" % (seed, i))
    c = Case()
    c.seed, c.i = seed, i
    ctx = {"max_depth": rng.choice([0, 1, 2, 2, 3, 4]), "avoid": avoid, "out_of_range": rng.random() < 0.1,
           "views": rng.random() < 0.5, "field_md": rng.random() < 0.2}
    fmt = rng.choices(["file", "stream", "feather", "polars_file", "polars_stream"], [34, 39, 13, 7, 7])[0]
    # batches: sizes
    r = rng.random()
    if r < 0.03 and "empty_table" not in avoid:
        nb = rng.choice([0, 1, 3])
        sizes = [0] * nb
    else:
        nb = rng.choice([1, 1, 2, 3, 4, 6, 10])
        sizes = []
        for _ in range(nb):
            r = rng.random()
            sizes.append(0 if r < 0.15 else rng.randint(1, 10) if r < 0.4 else rng.randint(10, 200) if r < 0.95
                         else rng.randint(500, 3000))
        if "empty_table" in avoid and not sum(sizes):
            sizes[0] = 1
    big = sum(sizes) >= 1000
    ncols = rng.randint(0, 8) if not big else rng.randint(0, 3)
    if big:
        ctx["max_depth"] = min(ctx["max_depth"], 1)
    names = pqdiff.rand_names(rng, ncols, ctx)
    fields = [pa.field(nm, rand_type(rng, ctx)) for nm in names]
    if "refused" not in avoid and rng.random() < 0.04:
        fields.insert(rng.randint(0, len(fields)), pa.field("refused", refused_type(rng)))
    # the text: top-level "text" or another name, or a string inside a struct
    tts = [pa.string(), pa.string(), pa.large_string(), pa.dictionary(pa.int32(), pa.string()),
           pa.dictionary(pa.int8(), pa.large_string())]
    if ctx["views"]:
        tts += [pa.string_view(), pa.string_view(), pa.dictionary(pa.int16(), pa.string_view())]
    if "binary_text" not in avoid:
        tts += [pa.binary(), pa.large_binary(), pa.dictionary(pa.int16(), pa.binary())]
        tts += [pa.binary_view()] if ctx["views"] else []
    tt = rng.choice(tts)
    c.tnull = 0 if rng.random() < 0.85 else rng.choice([0.05, 0.5])
    c.skip_null = c.tnull > 0 and rng.random() < 0.7
    where = rng.random()
    if where < 0.7:
        c.field = "text"
        tf, tpos = pa.field("text", tt), None
    elif where < 0.85:
        c.field = rng.choice(["content", "body", "a.b", "é"])
        if c.field in names:
            c.field = "content_"
        tf = pa.field(c.field, tt)
    else:
        sname = "doc" if "doc" not in names else "doc_"
        kids = [pa.field(nm, rand_type(rng, dict(ctx, max_depth=max(ctx["max_depth"] - 1, 0))))
                for nm in pqdiff.rand_names(rng, rng.randint(0, 2), ctx, ("body",))] + [pa.field("body", tt)]
        rng.shuffle(kids)
        c.field = sname + ".body"
        tf = pa.field(sname, pa.struct(kids))
    tpos = rng.randint(0, len(fields))
    fields.insert(tpos, tf)
    # the id
    c.id_null = 0
    if rng.random() < 0.5:
        it = rng.choice([pa.string(), pa.large_string(), pa.int64(), pa.int32(), pa.uint64(), pa.int8(), pa.uint32(),
                         pa.float64(), pa.float32(), pa.float16(), pa.dictionary(pa.int16(), pa.string()),
                         pa.dictionary(pa.int8(), pa.int64())] + ([pa.null()] if "null_id" not in avoid else [])
                        + ([pa.string_view()] if ctx["views"] else []))
        if rng.random() < 0.05:  # refused ("id" is a string, an integer or a float)
            it = rng.choice([pa.bool_(), pa.date32(), pa.binary(), pa.decimal128(5, 1), pa.list_(pa.int32())])
        fields.insert(rng.randint(0, len(fields)), pa.field("id", it))
        c.id_null = rng.choice([0, 0, 0, 0.1, 1.0])
    if rng.random() < 0.2:
        fields = [f.with_metadata(rand_metadata(rng)) if rng.random() < 0.5 else f for f in fields]
    schema = pa.schema(fields, metadata=rand_metadata(rng) if rng.random() < 0.3 else None)
    # the batches
    batches = []
    for n in sizes:
        cols = []
        for f in schema:
            if f.name == "id":
                cols.append(build(rng, f.type, n, ctx, c.id_null))
            elif f.name == top_text(c):
                if pa.types.is_struct(f.type):
                    kids = [build(rng, k.type, n, ctx, c.tnull if k.name == "body" else None) for k in f.type]
                    cols.append(pa.StructArray.from_arrays(kids, fields=list(f.type),
                                                           mask=pqdiff.null_mask(rng, n, 0.05 if c.tnull else 0)))
                else:
                    cols.append(build(rng, f.type, n, ctx, c.tnull))
            else:
                cols.append(build(rng, f.type, n, ctx))
        batches.append(cols)
    # dictionaries: one for all batches, one per batch (stream), or growing (deltas)
    dicts = any(has_dict(f.type) for f in schema)
    if fmt in ("feather", "polars_file", "polars_stream"):
        mode = "unified"
    elif fmt == "file":
        mode = rng.choice(["unified", "delta"])
    else:
        mode = rng.choice(["unified", "delta", "replace", "replace"])
    if dicts and mode != "replace":
        states = [{} for _ in schema]
        if mode == "unified":
            for cols in batches:
                for k, a in enumerate(cols):
                    redict(a, "delta", states[k])
        batches = [[redict(a, "delta" if mode == "delta" else "fixed", states[k]) for k, a in enumerate(cols)]
                   for cols in batches]
    # at most MAX_BYTES (files of KBs to a few MB)
    total = sum(a.nbytes for cols in batches for a in cols)
    if total > MAX_BYTES:
        keep = MAX_BYTES / total
        batches = [[a.slice(0, max(1, int(len(a) * keep))) if len(a) else a for a in cols] for cols in batches]
    c.schema, c.batches = schema, batches
    c.opts = {"format": fmt, "compression": rng.choice([None, "lz4", "zstd"]), "dict_mode": mode if dicts else None}
    if fmt in ("file", "stream"):
        c.opts["deltas"] = mode == "delta" or rng.random() < 0.3
        # (V4 has no body compression: pyarrow writes compressed buffers that it reads back as they are)
        c.opts["metadata_version"] = "V4" if rng.random() < 0.2 and not c.opts["compression"] else "V5"
    elif fmt == "feather":
        c.opts["chunksize"] = rng.choice([None, 1, 7, 64, 1000])
    c.writer = fmt.replace("_", " ") if fmt.startswith("polars") else "pyarrow " + fmt
    c.run = {"threads": rng.choice([None, None, 1, 2, 3]), "stdin": rng.random() < 0.08,
             "parts": rng.choice([0] * 6 + [rng.randint(2, 4)]) if fmt != "stream" or nb > 1 else 0,
             "mem": rng.choice([None] * 8 + ["1M", "2M"])}
    return c


def top_text(c):
    return pqdiff.top_text(c)


# ---- writing ------------------------------------------------------------------------


def write_ipc(c, path):
    batches = [pa.RecordBatch.from_arrays(cols, schema=c.schema) for cols in c.batches]
    o = c.opts
    if o["format"].startswith("polars"):  # (pl.from_arrow: polars' own types, string views among them)
        import polars as pl
        df = pl.from_arrow(pa.Table.from_batches(batches, c.schema))
        (df.write_ipc if o["format"] == "polars_file" else df.write_ipc_stream)(
            path, compression=o["compression"] or "uncompressed")
        return
    if o["format"] == "feather":
        pa.feather.write_feather(pa.Table.from_batches(batches, c.schema), path,
                                 compression=o["compression"] or "uncompressed", chunksize=o["chunksize"])
        return
    opts = pa.ipc.IpcWriteOptions(compression=o["compression"], emit_dictionary_deltas=o["deltas"],
                                  metadata_version=getattr(pa.ipc.MetadataVersion, o["metadata_version"]))
    with (pa.ipc.new_file if o["format"] == "file" else pa.ipc.new_stream)(path, c.schema, options=opts) as w:
        for b in batches:
            w.write_batch(b)


class WriterFailed(Exception):
    pass


def check(c, sluice, work, verbose=False):
    """Writes and reads one case. Returns (status, class, detail, info)."""
    path = os.path.join(work, "case.arrow")
    if os.path.exists(path):
        os.unlink(path)
    try:
        pqdiff.in_child(lambda: write_ipc(c, path))
    except Exception as e:
        why = re.sub(r"[0-9]+", "N", str(e).splitlines()[0][:100])
        return "skip", "%s cannot write it: %s" % (c.writer.split()[0], why), "", {}
    name = "<stdin>" if c.run["stdin"] else path
    try:
        ex = expected_output(path, name, c.field, c.skip_null)
        feats = {}
        tread = read_ipc(path, feats)
    except Exception as e:
        return "skip", "pyarrow cannot read it: %s" % str(e).splitlines()[0][:100], "", {}
    rc, out, err, cmd = pqdiff.run_sluice(c, sluice, path)
    res = pqdiff.classify(c, tread, ex, rc, out, err)
    if res is None and ex.refused and not re.search(ex.refused, err.decode("utf-8", "replace"), re.I):
        res = "a refused type's error does not name it (%s)" % ex.refused, err.decode("utf-8", "replace")[-300:]
    feats.update({c.opts["format"]: True, "compressed": bool(c.opts["compression"]), "stdin": c.run["stdin"],
                  "--part": bool(c.run["parts"]), "-@": bool(c.run["threads"]), "--mem-budget": bool(c.run["mem"]),
                  "metadata V4": c.opts.get("metadata_version") == "V4", "refused type": bool(ex.refused),
                  "other expected error": bool(ex.error and not ex.refused), "text in a struct": "." in c.field
                  and c.field.startswith("doc"), "schema metadata": bool(c.schema.metadata)})
    info = {"cmd": cmd, "out": out, "err": err, "ex": ex, "path": path,
            "feats": [k for k, v in feats.items() if v]}
    if res is None:
        return "ok", "", "", info
    return "fail", res[0], res[1], info


def describe(c):
    rows = [len(cols[0]) if cols else 0 for cols in c.batches]
    return "\n".join([
        "case: --seed %s --case %d" % (c.seed, c.i),
        "writer: %s %r" % (c.writer, c.opts),
        "run: %r" % c.run,
        "field: %s, skip null text: %s" % (c.field, c.skip_null),
        "schema:\n%s" % c.schema.to_string(show_schema_metadata=True, show_field_metadata=True),
        "batches: %d, rows %r" % (len(c.batches), rows),
    ])


def keep_files(c, info, work, tag):
    return pqdiff.keep_files(c, info, work, tag, "case.arrow", describe(c) + "\ncommand: %s" % info["cmd"])


# ---- minimizing ------------------------------------------------------------------


def minimize(c, sluice, work, cls):
    """Shrinks the case's batches, columns and options while it still fails with class cls."""
    def fails(**kw):
        saved = {k: getattr(c, k) for k in kw}
        for k, v in kw.items():
            setattr(c, k, v)
        try:
            st, k, _, _ = check(c, sluice, work)
        except Exception:
            st, k = "skip", ""
        if st == "fail" and k == cls:
            return True
        for k, v in saved.items():
            setattr(c, k, v)
        return False

    for key, plain in (("parts", 0), ("stdin", False), ("threads", None), ("mem", None)):
        if c.run[key] != plain:
            fails(run=dict(c.run, **{key: plain}))
    # columns
    changed = True
    while changed:
        changed = False
        for k in reversed(range(len(c.schema))):
            if c.schema.field(k).name == top_text(c):
                continue
            if fails(schema=c.schema.remove(k), batches=[cols[:k] + cols[k + 1:] for cols in c.batches]):
                changed = True
    # batches: drop whole ones, then rows (halves, then single rows from the ends)
    for k in reversed(range(len(c.batches))):
        if len(c.batches) > 1:
            fails(batches=c.batches[:k] + c.batches[k + 1:])
    for k in range(len(c.batches)):
        while c.batches[k] and len(c.batches[k][0]) > 1:
            b = c.batches[k]
            n, h = len(b[0]), len(b[0]) // 2
            for cut in ((0, h), (h, n - h), (0, n - 1), (1, n - 1)):
                nb = list(c.batches)
                nb[k] = [a.slice(*cut) for a in b]
                if fails(batches=nb):
                    break
            else:
                break
    # options and metadata back to their defaults
    for key, plain in (("compression", None), ("deltas", False), ("metadata_version", "V5"), ("chunksize", None)):
        if key in c.opts and c.opts[key] != plain:
            fails(opts=dict(c.opts, **{key: plain}))
    if c.opts["format"] == "feather":
        fails(opts={"format": "file", "compression": c.opts["compression"], "deltas": False,
                    "metadata_version": "V5", "dict_mode": c.opts["dict_mode"]})
    if c.schema.metadata:
        fails(schema=c.schema.remove_metadata())
    if any(f.metadata for f in c.schema):
        fails(schema=pa.schema([f.remove_metadata() for f in c.schema], metadata=c.schema.metadata))
    return check(c, sluice, work)


def snippet(c):
    """Python that writes the case's file again (small cases)."""
    lines = ["import pyarrow as pa", "schema = %s" % type_src_schema(c.schema), "batches = ["]
    for cols in c.batches:
        lines.append("    pa.record_batch([%s], schema=schema)," % ", ".join(
            "pa.array(%r, schema.field(%d).type)" % (a.to_pylist(), k) for k, a in enumerate(cols)))
    lines.append("]")
    o = c.opts
    if o["format"].startswith("polars"):
        lines += ["import polars as pl", "df = pl.from_arrow(pa.Table.from_batches(batches, schema))",
                  "df.%s('case.arrow', compression=%r)" % ("write_ipc" if o["format"] == "polars_file"
                                                           else "write_ipc_stream", o["compression"] or "uncompressed")]
        return "\n".join(lines)
    w = "new_file" if o["format"] != "stream" else "new_stream"
    lines.append("opts = pa.ipc.IpcWriteOptions(compression=%r, emit_dictionary_deltas=%r)" % (
        o["compression"], o.get("deltas", False)))
    lines.append("with pa.ipc.%s('case.arrow', schema, options=opts) as w:" % w)
    lines.append("    for b in batches: w.write_batch(b)")
    return "\n".join(lines)


def type_src_schema(s):
    return "pa.schema(%r)" % [(f.name, str(f.type)) for f in s] + "  # (types as strings: rewrite with pa.*)"


# ---- main ------------------------------------------------------------------------


def main():
    a, avoid, sluice, work, cases = pqdiff.diffcli.case_args(__doc__, "sluice-arrowdiff-", avoidable=AVOIDABLE)

    def on_minimize(c, cls):
        st2, k2, detail2, info2 = minimize(c, sluice, work, cls)
        print("minimized (%s: %s)\n    %s" % (st2, k2, detail2), flush=True)
        print(describe(c))
        print("command: %s" % info2.get("cmd"))
        if sum(len(cols[0]) if cols else 0 for cols in c.batches) <= 20:
            try:
                print(snippet(c))
            except Exception as e:  # (to_pylist refuses duplicate field names)
                print("(no snippet: %s)" % e)
        if a.keep and info2:
            print("    kept in %s" % keep_files(c, info2, work, k2), flush=True)
    return pqdiff.run_cases(a, avoid, work, cases, gen_case, lambda c: check(c, sluice, work, a.verbose),
                            lambda c, info: describe(c), lambda c, info, cls: keep_files(c, info, work, cls),
                            on_minimize)


if __name__ == "__main__":
    sys.exit(main())

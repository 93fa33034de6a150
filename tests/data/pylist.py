"""Shared by the Parquet and Arrow fixture writers (tests/data/parquet/make_fixtures.py,
tests/data/arrow/make_fixtures.py) and their random differential scripts: how a value of
pyarrow's to_pylist() is written where json.dumps cannot write it (docs/read.md), and a
table both formats carry."""
import base64
import datetime
import decimal
import random
import uuid

import pyarrow as pa

try:
    import numpy as np
except ImportError:  # (to_pylist gives numpy floats only for float16)
    np = None


def conv(v):
    """bytes as base64, dates and times as isoformat(), Decimal and UUID as str(), maps
    (lists of tuples) as lists of [key, value], float16's numpy floats as float; an aware
    datetime in a named zone (Europe/Paris) in UTC, as sluice writes it (docs/read.md: it
    applies UTC and fixed offsets, not the tz database)."""
    if isinstance(v, dict):
        return {k: conv(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [conv(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return base64.b64encode(v).decode()
    if isinstance(v, datetime.datetime) and v.tzinfo is not None and not isinstance(v.tzinfo, datetime.timezone):
        v = v.astimezone(datetime.timezone.utc)
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, (decimal.Decimal, uuid.UUID)):
        return str(v)
    if np is not None and isinstance(v, np.floating):
        return float(v)
    return v


def drop_path(row, path):
    """Removes the text column (a dotted path into nested dicts) from the row, giving it."""
    if path in row:
        return row.pop(path)
    parts = path.split(".")
    d = row
    for p in parts[:-1]:
        d = d[p]
        if d is None:
            return None
    return d.pop(parts[-1])


def wide_table():
    """Decimals of up to 76 digits (256 bits) and times in nanoseconds (to_pylist's
    datetime.time keeps the microseconds), from a generator of their own."""
    wr = random.Random(7676)
    with decimal.localcontext() as ctx:
        ctx.prec = 100
        big = [decimal.Decimal(10**76 - 1).scaleb(-10), decimal.Decimal(-(10**76 - 1)).scaleb(-10),
               decimal.Decimal(0).scaleb(-10), decimal.Decimal(-1).scaleb(-10)]
        big += [decimal.Decimal(wr.randint(-(10**76 - 1), 10**76 - 1)).scaleb(-10) for _ in range(4)]
        mid = [decimal.Decimal(wr.randint(-(10**50 - 1), 10**50 - 1)).scaleb(-4) for _ in range(7)] + [None]
    return pa.table({
        "text": ["w%d" % i for i in range(8)],
        "d76": pa.array(big, pa.decimal256(76, 10)),
        "d50": pa.array(mid, pa.decimal256(50, 4)),
        "t_ns": pa.array([0, 1, 999, 1000, 62191189730635, 86399999999999, None, 5], pa.time64("ns")),
    })

#!/usr/bin/env python3
"""Writes small hand-made Parquet files, good and bad, with nothing but the
standard library: a Thrift compact-protocol writer and parquet-format's
field numbers (parquet.thrift). tests/cli/read_parquet_bad.sh runs it into a
temporary directory:  python3 make_bad.py OUTDIR

  good.parquet          3 rows, a PLAIN UTF8 column "text": the writer is right
  page_too_big.parquet  a page header claiming more bytes than its chunk has
  snappy_bad.parquet    SNAPPY page bytes that are not snappy data
  dict_index.parquet    a dictionary index past the dictionary's end
  rep_bomb.parquet      one row whose list claims 2^31-1 elements in a few bytes
  def_too_high.parquet  a definition level above the column's maximum
  short_values.parquet  a page whose values end before its count
  time_range.parquet    a TIME_MICROS column whose third value is 25:00, no time of day
  date_range.parquet    a DATE column whose third value is 10000-01-01 (Python's datetime ends at 9999)
  ts_range.parquet      a TIMESTAMP_MILLIS column whose third value is 1 ms before 0001-01-01
  bytedec.parquet       good: a BYTE_ARRAY DECIMAL(45, 3) column (pyarrow reads it as decimal256:
                        123.456, -0.005, -9999999999999999999999999999999999999.993, 0.000)
  bytedec_wide.parquet  the same with a 33-byte value, wider than Arrow's 256-bit decimals
"""
import os
import struct
import sys

I32, I64, BIN, LIST, STRUCT = 5, 6, 8, 9, 12


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def zz(n):
    return varint((n << 1) ^ (n >> 63))


def st(*fields):
    """A struct from (id, type, encoded value) in id order."""
    out, last = bytearray(), 0
    for fid, ftype, val in fields:
        d = fid - last
        out += bytes([(d << 4) | ftype]) if 0 < d <= 15 else bytes([ftype]) + zz(fid)
        out += val
        last = fid
    return bytes(out) + b"\0"


def i32(v):
    return zz(v)


def lst(etype, items):
    n = len(items)
    head = bytes([(n << 4) | etype]) if n < 15 else bytes([0xF0 | etype]) + varint(n)
    return head + b"".join(items)


def binary(s):
    s = s.encode() if isinstance(s, str) else s
    return varint(len(s)) + s


def page_header(ptype, usize, csize, nvalues, enc=0, dict_page=False):
    if dict_page:
        sub = (7, STRUCT, st((1, I32, i32(nvalues)), (2, I32, i32(0))))
    else:
        sub = (5, STRUCT, st((1, I32, i32(nvalues)), (2, I32, i32(enc)), (3, I32, i32(3)), (4, I32, i32(3))))
    return st((1, I32, i32(ptype)), (2, I32, i32(usize)), (3, I32, i32(csize)), sub)


def plain_strings(vals):
    return b"".join(struct.pack("<I", len(v)) + v for v in vals)


def rle_run(value, count, bw):
    return varint(count << 1) + value.to_bytes((bw + 7) // 8, "little")


class File:
    def __init__(self):
        self.body = bytearray(b"PAR1")
        self.chunks = []

    def chunk(self, ptype, path, pages, codec=0, num_values=None, total=None):
        """pages: list of (header bytes, data bytes); returns the chunk metadata."""
        start = len(self.body)
        nv = 0
        for h, data in pages:
            self.body += h + data
        size = len(self.body) - start
        meta = st((1, I32, i32(ptype)), (2, LIST, lst(I32, [i32(0), i32(3)])),
                  (3, LIST, lst(BIN, [binary(p) for p in path.split(".")])), (4, I32, i32(codec)),
                  (5, I64, zz(num_values if num_values is not None else nv)), (6, I64, zz(size)),
                  (7, I64, zz(total if total is not None else size)), (9, I64, zz(start)))
        self.chunks.append(st((2, I64, zz(start)), (3, STRUCT, meta)))

    def row_group(self, num_rows):
        """Ends a row group of num_rows rows: the chunks added since the one before."""
        self.rgs = getattr(self, "rgs", [])
        self.rgs.append(st((1, LIST, lst(STRUCT, self.chunks)), (2, I64, zz(len(self.body))), (3, I64, zz(num_rows))))
        self.chunks = []
        self.rows = getattr(self, "rows", 0) + num_rows

    def finish(self, path, schema, num_rows):
        """num_rows: the last row group's (the chunks not yet in one)."""
        if self.chunks or not getattr(self, "rgs", None):
            self.row_group(num_rows)
        fmd = st((1, I32, i32(1)), (2, LIST, lst(STRUCT, schema)), (3, I64, zz(self.rows)),
                 (4, LIST, lst(STRUCT, self.rgs)))
        with open(path, "wb") as f:
            f.write(bytes(self.body) + fmd + struct.pack("<I", len(fmd)) + b"PAR1")


def root(n):
    return st((4, BIN, binary("schema")), (5, I32, i32(n)))


def text_col(rep=0):
    return st((1, I32, i32(6)), (3, I32, i32(rep)), (4, BIN, binary("text")), (6, I32, i32(0)))


def text_file(path, vals, tweak=None, codec=0):
    data = plain_strings(vals)
    h = page_header(0, len(data), len(data), len(vals))
    pages = [(h, data)]
    kw = {}
    if tweak:
        pages, kw = tweak(pages)
    f = File()
    f.chunk(6, "text", pages, codec=codec, num_values=len(vals), **kw)
    f.finish(path, [root(1), text_col()], len(vals))


def main(out):
    os.makedirs(out, exist_ok=True)
    p = lambda n: os.path.join(out, n)  # noqa: E731
    vals = [b"alpha", "b\u00e9ta".encode(), b"gamma"]
    text_file(p("good.parquet"), vals)
    # the page says 1000 bytes more than the chunk holds
    text_file(p("page_too_big.parquet"), vals,
              lambda pages: ([(page_header(0, 1000, 1000 + len(pages[0][1]), 3), pages[0][1])], {}))
    # SNAPPY codec over bytes that are not snappy data
    garbage = bytes([0x10]) + b"\xff" * 20
    text_file(p("snappy_bad.parquet"), vals, lambda pages: ([(page_header(0, 16, len(garbage), 3), garbage)], {}),
              codec=1)
    short = plain_strings(vals)[:-3]
    text_file(p("short_values.parquet"), vals, lambda pages: ([(page_header(0, len(short), len(short), 3), short)], {}))
    # dictionary index 7 of a 2-value dictionary
    dvals = plain_strings([b"x", b"y"])
    idx = bytes([3]) + rle_run(7, 3, 3)
    f = File()
    f.chunk(6, "text", [(page_header(2, len(dvals), len(dvals), 2, dict_page=True), dvals),
                        (page_header(0, len(idx), len(idx), 3, enc=8), idx)], num_values=3)
    f.finish(p("dict_index.parquet"), [root(1), text_col()], 3)
    # three row groups of three rows, the last or the last two of them broken (the values of the
    # last one's page run past it; the middle one's dictionary index is out of range): the error
    # is the first one in the file's order, whatever the threads
    for name, bad in (("rg3_last_bad.parquet", (2,)), ("rg3_two_bad.parquet", (1, 2))):
        f = File()
        for g in range(3):
            good = plain_strings([b"r%d-%d" % (g, i) for i in range(3)])
            if g not in bad:
                f.chunk(6, "text", [(page_header(0, len(good), len(good), 3), good)], num_values=3)
            elif g == 2:
                f.chunk(6, "text", [(page_header(0, len(short), len(short), 3), short)], num_values=3)
            else:
                f.chunk(6, "text", [(page_header(2, len(dvals), len(dvals), 2, dict_page=True), dvals),
                                    (page_header(0, len(idx), len(idx), 3, enc=8), idx)], num_values=3)
            f.row_group(3)
        f.finish(p(name), [root(1), text_col()], 3)
    # one row, one list of 2^31 - 1 null elements: rep levels [0, 1, 1, ...], def levels all 2
    n = 2**31 - 1
    levels_rep = rle_run(0, 1, 1) + rle_run(1, n - 1, 1)
    levels_def = rle_run(2, n, 2)
    body = struct.pack("<I", len(levels_rep)) + levels_rep + struct.pack("<I", len(levels_def)) + levels_def
    f = File()
    tv = plain_strings([b"one row"])
    f.chunk(6, "text", [(page_header(0, len(tv), len(tv), 1), tv)], num_values=1)
    f.chunk(1, "l.list.element", [(page_header(0, len(body), len(body), n), body)], num_values=n)
    schema = [root(2), text_col(),
              st((3, I32, i32(1)), (4, BIN, binary("l")), (5, I32, i32(1)), (6, I32, i32(3))),
              st((3, I32, i32(2)), (4, BIN, binary("list")), (5, I32, i32(1))),
              st((1, I32, i32(1)), (3, I32, i32(1)), (4, BIN, binary("element")))]
    f.finish(p("rep_bomb.parquet"), schema, 1)
    # an optional column whose definition level 3 exceeds its maximum 1
    lv = rle_run(3, 3, 1)
    body = struct.pack("<I", len(lv)) + lv + plain_strings(vals)
    f = File()
    f.chunk(6, "text", [(page_header(0, len(body), len(body), 3), body)], num_values=3)
    f.finish(p("def_too_high.parquet"), [root(1), text_col(rep=1)], 3)
    # a required INT64 TIME_MICROS column "t": 00:00, 01:00, then 25:00 (no time of day)
    tv = plain_strings(vals)
    times = struct.pack("<3q", 0, 3600 * 10**6, 90000 * 10**6)
    f = File()
    f.chunk(6, "text", [(page_header(0, len(tv), len(tv), 3), tv)], num_values=3)
    f.chunk(2, "t", [(page_header(0, len(times), len(times), 3), times)], num_values=3)
    f.finish(p("time_range.parquet"), [root(2), text_col(), st((1, I32, i32(2)), (3, I32, i32(0)), (4, BIN, binary("t")),
                                                               (6, I32, i32(8)))], 3)
    # a required INT32 DATE column "d" (converted type 6): 1970-01-01, 9999-12-31, 10000-01-01;
    # an INT64 TIMESTAMP_MILLIS column "ts" (9): the epoch, 0001-01-01T00:00, 1 ms before it
    # a BYTE_ARRAY column "d" of DECIMAL (converted type 5), scale 3 (field 7), precision 45
    # (field 8): big-endian two's complement values of 3, 1, 17 and 1 bytes; then one of 33
    def be(v, n):
        return (v % (1 << (8 * n))).to_bytes(n, "big")
    for name, decs in (("bytedec.parquet", [be(123456, 3), be(-5, 1), be(-(10**40) + 7, 17), be(0, 1)]),
                       ("bytedec_wide.parquet", [be(1, 1), be(2, 1), be(-1, 33), be(0, 1)])):
        tv4 = plain_strings([b"alpha", b"beta", b"gamma", b"delta"])
        dv = plain_strings(decs)
        f = File()
        f.chunk(6, "text", [(page_header(0, len(tv4), len(tv4), 4), tv4)], num_values=4)
        f.chunk(6, "d", [(page_header(0, len(dv), len(dv), 4), dv)], num_values=4)
        f.finish(p(name), [root(2), text_col(), st((1, I32, i32(6)), (3, I32, i32(0)), (4, BIN, binary("d")),
                                                   (6, I32, i32(5)), (7, I32, i32(3)), (8, I32, i32(45)))], 4)
    d0, d1 = -719162, 2932896
    for name, col, ptype, ctype, fmt, vals3 in (("date_range.parquet", "d", 1, 6, "<3i", (0, d1, d1 + 1)),
                                                ("ts_range.parquet", "ts", 2, 9, "<3q",
                                                 (0, d0 * 86400000, d0 * 86400000 - 1))):
        data = struct.pack(fmt, *vals3)
        f = File()
        f.chunk(6, "text", [(page_header(0, len(tv), len(tv), 3), tv)], num_values=3)
        f.chunk(ptype, col, [(page_header(0, len(data), len(data), 3), data)], num_values=3)
        f.finish(p(name), [root(2), text_col(), st((1, I32, i32(ptype)), (3, I32, i32(0)), (4, BIN, binary(col)),
                                                   (6, I32, i32(ctype)))], 3)


main(sys.argv[1] if len(sys.argv) > 1 else ".")

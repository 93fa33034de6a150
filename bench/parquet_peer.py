#!/usr/bin/env python3
"""Peers and generator for bench/parquet.sh.

  parquet_peer.py gen WORDS OUT_PREFIX MB   FineWeb-shaped Parquet files OUT_PREFIX.{snappy,zstd}.parquet
  parquet_peer.py pyarrow FILE              pq.read_table(FILE, columns=["text"]) on one thread
  parquet_peer.py pyarrow-json FILE         read_table + to_pylist + json.dumps per row (what read writes), one thread
  parquet_peer.py datatrove FILE            datatrove's ParquetReader, every document's text touched
  parquet_peer.py ipc-json FILE             an Arrow IPC file read + to_pylist + json.dumps per row, one thread
"""
import json
import random
import sys
import uuid


def gen(words_path, prefix, mb):
    import pyarrow as pa
    import pyarrow.parquet as pq
    words = open(words_path, encoding="utf-8").read().split()
    rng = random.Random(20261127)
    target = int(mb) * 1_000_000
    cols = {k: [] for k in ["text", "id", "dump", "url", "date", "file_path", "language", "language_score",
                            "token_count"]}
    size = 0
    while size < target:
        n = rng.randint(200, 800)
        text = " ".join(rng.choice(words) for _ in range(n))
        cols["text"].append(text)
        cols["id"].append(f"<urn:uuid:{uuid.UUID(int=rng.getrandbits(128))}>")
        cols["dump"].append(rng.choice(["CC-MAIN-2013-20", "CC-MAIN-2024-10", "CC-MAIN-2023-50"]))
        cols["url"].append(f"https://example{rng.randint(0, 9999)}.org/page/{rng.randint(0, 10**9)}")
        cols["date"].append(f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T0{rng.randint(0, 9)}:12:33Z")
        cols["file_path"].append(f"s3://commoncrawl/crawl-data/CC-MAIN-2024-10/segments/{rng.randint(0, 99999)}.warc.gz")
        cols["language"].append("en")
        cols["language_score"].append(rng.random())
        cols["token_count"].append(n + rng.randint(0, 200))
        size += len(text) + 200
    t = pa.table(cols)
    for codec in ("snappy", "zstd"):
        # FineWeb's files have row groups of about 1000 documents... and large ones too; pyarrow's default
        pq.write_table(t, f"{prefix}.{codec}.parquet", compression=codec, row_group_size=20000)
    # FineWeb-style row groups of 1000 documents (the reader's per-row-group costs show)
    pq.write_table(t, f"{prefix}.zstd-rg1k.parquet", compression="zstd", row_group_size=1000)
    # Arrow IPC files in record batches of 1000 rows (as datasets writes them), plain and ZSTD
    for codec in (None, "zstd"):
        with pa.ipc.new_file(f"{prefix}.{codec or 'none'}.arrow", t.schema,
                             options=pa.ipc.IpcWriteOptions(compression=codec)) as w:
            w.write_table(t, max_chunksize=1000)


def main():
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "gen":
        return gen(path, sys.argv[3], sys.argv[4])
    import pyarrow as pa
    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)
    import pyarrow.parquet as pq
    if mode == "pyarrow":
        t = pq.read_table(path, columns=["text"], use_threads=False)
        print(t.num_rows, file=sys.stderr)
    elif mode == "pyarrow-json":
        t = pq.read_table(path, use_threads=False)
        out = sys.stdout
        for row in t.to_pylist():
            out.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")))
            out.write("\n")
    elif mode == "ipc-json":
        t = pa.ipc.open_file(path).read_all()
        out = sys.stdout
        for row in t.to_pylist():
            out.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")))
            out.write("\n")
    elif mode == "datatrove":
        from datatrove.pipeline.readers import ParquetReader
        reader = ParquetReader(path.rsplit("/", 1)[0], glob_pattern=path.rsplit("/", 1)[1])
        n = 0
        for doc in reader.run():
            n += len(doc.text)
        print(n, file=sys.stderr)


main()

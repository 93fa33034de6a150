#!/usr/bin/env python3
"""Writes nested_rows.jsonl: the rows of ../parquet/nested.parquet as pyarrow's
to_pylist() gives them, one json.dumps(row) a line (ensure_ascii=False, compact),
so that `sluice read --field doc.body` of the JSON Lines can be checked against
what it reads from the Parquet file (../parquet/nested.expected.jsonl, pyarrow's
own rows): a dotted --field reaches into nested objects as into structs
(tests/cli/read_field_path.sh). Needs pyarrow; run from this folder."""
import json
import pyarrow.parquet as pq

rows = pq.read_table("../parquet/nested.parquet").to_pylist()
with open("nested_rows.jsonl", "w", encoding="utf-8") as f:
    for r in rows:
        f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")

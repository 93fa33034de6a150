#!/usr/bin/env python3
"""Generates regress_input.jsonl and its expected outputs for tests/cli/read_jsonl_regress.sh:
JSON Lines that diff_jsonl.py found sluice read differently from CPython's json (2026-11-29),
with the output `sluice read --on-error skip [--field F] regress_input.jsonl` must give for
F = text, content and __float__, computed by diff_jsonl.py's reference (CPython's json.loads and
the rules of docs/read.md), not by sluice:
  - an object whose keys are all "__float__" ({"__float__": "NaN"}, transformers' spelling of a
    non-finite float in config.json) was read as the number NaN; json.loads gives the object;
  - with --field, the input field "text" was not dropped from a line holding NaN, Infinity or
    -Infinity (the output then had two "text" keys, and json.loads took the input's).
Run from tests/data/read: python3 make_regress.py
"""
import diff_jsonl as ref

SOURCE = "regress_input.jsonl"
LINES = [
    b'{"content":"c1","text":"t1","v":NaN,"w":[Infinity,-Infinity]}',
    b'{"text":"t2","content":"c2","a":{"__float__":"NaN"},"b":[{"__float__":"Infinity","__float__":"-Infinity"}]}',
    b'{"content":"c3","text":"t3","id":1e400,"n":{"text":NaN}}',
    b'{"__float__":"NaN","text":"t4","content":"c4"}',
    b'{"content":"c5","id":-Infinity,"text":"t5","x":{"__float__":"nan"},"y":-0,"z":{"__float__":1}}',
    b'{"content":"c6", "text": "t6", "deep": [[{"__float__": "-Infinity"}], {"k": NaN}], "text2": Infinity}',
    b'{"id":{"__float__":"NaN"},"text":"t7","content":"c7"}',
    b'{"__float__":"Infinity"}',
    b'{"__float__":"-Infinity","__float__":"NaN"}',
]

data = b"\n".join(LINES) + b"\n"
open(SOURCE, "wb").write(data)
for field in ("text", "content", "__float__"):
    c = {"field": field, "invalid": "replace", "on_error": "skip", "sources": [data]}
    exp = ref.expect(c, [SOURCE])
    name = "regress_expected.jsonl" if field == "text" else "regress_expected_%s.jsonl" % field.strip("_")
    open(name, "w", encoding="utf-8").write("".join(line + "\n" for line in exp["ok"]))
    print("%s: %d documents, %d skipped" % (name, len(exp["ok"]), exp["skipped"]))

#!/usr/bin/env python3
"""Generates reference_input.jsonl and reference_expected.jsonl for tests/cli/read_reference.sh.

reference_expected.jsonl is what `sluice read reference_input.jsonl` must print, computed here by
an independent implementation of the rules in docs/read.md on top of CPython's json module:
lines split on b"\\n" (a "\\r" before it dropped), blank lines skipped, a UTF-8 BOM at the start
dropped, invalid UTF-8 replaced as bytes.decode("utf-8", "replace") does, lone surrogates from
\\u escapes replaced by U+FFFD, numbers kept as written, keys kept in order with duplicates (the
last "id"/"text" wins and none of them is copied), output {"id":...,"text":...,<others>} in
compact JSON with json.dumps(ensure_ascii=False) string escaping.
Run from tests/data/read: python3 make_reference.py
"""
import json
import random
import re

SOURCE = "reference_input.jsonl"


class Num(str):
    pass


class Obj(list):
    pass


def load(line):
    return json.loads(line, object_pairs_hook=Obj, parse_int=Num, parse_float=Num,
                      parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))


LONE = re.compile("[\ud800-\udfff]")


def s(x):
    return json.dumps(LONE.sub("\ufffd", x), ensure_ascii=False)


def dump(v):
    if isinstance(v, Obj):
        return "{" + ",".join(s(k) + ":" + dump(x) for k, x in v) + "}"
    if isinstance(v, list):
        return "[" + ",".join(dump(x) for x in v) + "]"
    if isinstance(v, Num):
        return str(v)
    if isinstance(v, str):
        return s(v)
    return {None: "null", True: "true", False: "false"}[v]


def reference(data):
    out, n = [], 0
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    for raw in data.split(b"\n"):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if not raw.strip(b" \t\r\n"):
            continue
        obj = load(raw.decode("utf-8", "replace"))
        fields = dict(obj)  # last duplicate wins
        text, ident = fields["text"], fields.get("id")
        n += 1
        if ident is None:
            ident_out = s(f"{SOURCE}:{n}")
        elif isinstance(ident, Num):
            ident_out = str(ident)
        else:
            ident_out = s(ident)
        others = [k + ":" + dump(x) for k, x in ((s(k), x) for k, x in obj) if k not in ('"id"', '"text"')]
        out.append("{" + ",".join(['"id":' + ident_out, '"text":' + s(text)] + others) + "}\n")
    return "".join(out).encode("utf-8")


lines = [
    b'\xef\xbb\xbf{"id":"a","text":"hello"}',
    b'{"text":"escapes \\" \\\\ \\/ \\b \\f \\n \\r \\t \\u0001 \\u001f \\u007f \\u2028 \\u00e9"}',
    b'{"text":"pairs \\ud83d\\ude00 \\uD834\\uDD1E lone \\ud800 \\udc00x reversed \\ude00\\ud83d end\\ud800"}',
    '{"text":"raw é € 😀 \u2028 \x7f"}'.encode(),
    b'{"text":"raw invalid \xff \xe2\x82 \xed\xa0\x80 \xf4\x90\x80\x80 \xc0\xaf end"}',
    b'{"id":17,"text":"number id"}',
    b'{"id":-0,"text":"negative zero id","big":123456789012345678901234567890,"f":1.5E+3,"g":-0.0e-0}',
    b'{"id":1.25e-7,"text":"float id"}',
    b'{"text":"nested","a":[],"b":{},"c":[1,[2,[3,{"d":[null,true,false]}]]],"e":{"f":{"g":"h"}}}',
    '{"text":"keys","ключ":"значение","a\\"b":1,"\\u0000nul":2,"emoji😀":3}'.encode(),
    b'{"text":"first","id":"first-id","text":"second","id":"second-id","x":1}',
    b'  {  "text" :  "spaces"  ,  "id" : "sp" , "z" : [ 1 , 2 ] }  ',
    b'{"text":"crlf line"}\r',
    b'',
    b'   \t ',
    b'{"text":""}',
    b'{"text":"null id","id":null}',
    b'{"z":1,"text":"text after a field","y":{"id":"nested id is not the id"}}',
    b'{"text":"\\u0000 embedded NUL and \\u0009 tab"}',
    b'{"text":"long ' + b"x" * 5000 + b'"}',
]

rng = random.Random(20261122)
alphabet = [chr(c) for c in range(0x20, 0x7F)] + ["\n", "\t", "\x01", "\u00e9", "\u20ac", "\U0001f600", "\u2028",
                                                  "\ufeff", "\ud800", "\udfff"]
for i in range(300):
    text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
    obj = {"text": text}
    if rng.random() < 0.5:
        obj["id"] = rng.choice([f"r{i}", i, -i, None])
    if rng.random() < 0.5:
        obj["meta"] = {"k": rng.random() < 0.5, "v": [rng.randint(-9, 9) for _ in range(rng.randint(0, 3))]}
    items = list(obj.items())
    rng.shuffle(items)
    line = json.dumps(dict(items), ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")
    # lone surrogates written raw (surrogatepass) are invalid UTF-8 in the input: replaced per byte
    if rng.random() < 0.2:  # a raw invalid byte inside the text string
        at = line.index(b'"text": "') + 9
        line = line[:at] + bytes([rng.choice([0x80, 0xbf, 0xc3, 0xe2, 0xf0, 0xff])]) + line[at:]
    lines.append(line)

data = b"\n".join(lines) + b"\n"
open(SOURCE, "wb").write(data)
open("reference_expected.jsonl", "wb").write(reference(data))
print(f"{len(lines)} lines")

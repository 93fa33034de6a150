#!/usr/bin/env python3
"""Compares `sluice filter --rules` outputs with the datatrove fixtures
(standard library only; used by tests/cli/filter_rules.sh and by hand).

  check_rules.py expect CORPUS EXPECT OUT REJECTED
  check_rules.py signals SIGNALS ANNOTATED"""
import hashlib
import json
import sys


def load(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(l) for l in f]


def expect(corpus, exp, out, rej):
    src = {d["id"]: d for d in load(corpus)}
    want = load(exp)
    got = load(out)
    gotrej = {r["id"]: r for r in load(rej)}
    kept = [w["id"] for w in want if w["keep"]]
    bad = []
    if [g["id"] for g in got] != kept:
        a, b = set(kept), {g["id"] for g in got}
        bad.append("kept ids differ: missing %s, extra %s" % (sorted(a - b)[:8], sorted(b - a)[:8]))
    for g in got:
        w = next((x for x in want if x["id"] == g["id"]), None)
        if not w:
            continue
        if "text_sha1" in w:
            h = hashlib.sha1(g["text"].encode("utf-8")).hexdigest()
            if h != w["text_sha1"]:
                bad.append("%s: rewritten text differs: %r" % (g["id"], g["text"][:200]))
        elif g["text"] != src[g["id"]]["text"]:
            bad.append("%s: text changed: %r" % (g["id"], g["text"][:200]))
        if g.get("src") != "make_rules_fixtures":
            bad.append("%s: metadata lost" % g["id"])
    for w in want:
        if w["keep"]:
            continue
        r = gotrej.get(w["id"])
        if not r or (r["rule"], r["reason"]) != (w["rule"], w["reason"]):
            bad.append("%s: want %s/%s, got %s" % (w["id"], w["rule"], w["reason"], r and (r["rule"], r["reason"])))
    if len(gotrej) != len(want) - len(kept):
        bad.append("rejected: %d lines for %d dropped" % (len(gotrej), len(want) - len(kept)))
    return bad


def signals(sig, ann):
    lines = open(sig, encoding="utf-8").read().splitlines()
    names = json.loads(lines[0])
    got = {g["id"]: g for g in load(ann)}
    bad = []
    for l in lines[1:]:
        row = dict(zip(names, json.loads(l)))
        g = got.get(row["id"])
        if g is None:
            bad.append("%s: not in the output" % row["id"])
            continue
        for k in names[1:]:
            a, b = row[k], g.get(k, "<absent>")
            if isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
                ok = abs(a - b) <= 1e-9 * max(1.0, abs(a))
            else:
                ok = a == b and type(a) == type(b) or (isinstance(a, int) and not isinstance(a, bool) and b == a and not isinstance(b, bool))
            if not ok:
                bad.append("%s: %s: datatrove %r, sluice %r" % (row["id"], k, a, b))
    if len(got) != len(lines) - 1:
        bad.append("%d documents annotated, %d expected" % (len(got), len(lines) - 1))
    return bad


if __name__ == "__main__":
    bad = expect(*sys.argv[2:6]) if sys.argv[1] == "expect" else signals(*sys.argv[2:4])
    for b in bad[:15]:
        print(b)
    if bad:
        print("%d differences" % len(bad))
        sys.exit(1)

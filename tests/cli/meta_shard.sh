# Per-document metadata end to end (docs/shards.md sections 2.1, 4, 5): JSONL fields
# other than the text, and the labels of `sluice dna species`, through tokenize, pack,
# shard, merge, cat, export/import megatron. The expectation is derived from the input
# files alone (the JSON fields; the species label from the argument order and the id),
# and every shard directory is read back with the format's own rules: documents.idx
# entry k = the byte offset of document k's line in documents.jsonl (python3 stdlib).
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
PY=python3

# --- inputs -------------------------------------------------------------------------
# 300 documents: ids unique, texts of 0..400 characters (ASCII and not), extra fields of
# every JSON kind: strings with escapes, control characters, NUL and non-BMP characters,
# integers beyond 2^63, exponents, nested objects and arrays, true/false/null, unicode
# keys; some documents without any extra field.
"$PY" - "$T/docs.jsonl" <<'PY'
import json, random, sys
rng = random.Random(17)
words = ["alpha", "βeta", "γάμμα", "δ", "日本語", "emoji 😀", "tab\there", "quote\"s", "back\\slash", "line\nbreak"]
def value(depth):
    k = rng.randrange(9 if depth < 3 else 6)
    if k == 0: return rng.randrange(-10**6, 10**6)
    if k == 1: return rng.choice([12345678901234567890, -9007199254740993, 0, 1e300, -2.5e-7, 3.25])
    if k == 2: return rng.choice(words) + chr(rng.choice([1, 0x1f, 0x7f, 0xe9, 0x2028, 0x1f600, 0]))
    if k == 3: return rng.choice([True, False, None])
    if k == 4: return ""
    if k == 5: return rng.choice(words)
    if k == 6: return [value(depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(["k", "ключ", "a\"b", "x y", "n"]) + str(i): value(depth + 1) for i in range(rng.randrange(4))}
with open(sys.argv[1], "w", encoding="utf-8") as f:
    for i in range(300):
        d = {"id": "doc-%03d" % i}
        n = rng.randrange(0, 400) if i % 10 else 0
        d["text"] = "".join(rng.choice(words) + " " for _ in range(n // 6))[:n]
        if i % 7:
            d["source"] = rng.choice(["web", "books", "código", "wiki/ñ"])
            d["label"] = i % 5
            for j in range(rng.randrange(4)):
                d[rng.choice(["score", "meta", "doc", "id2", "split", "ключ", "nested"]) + str(j)] = value(0)
        f.write(json.dumps(d, ensure_ascii=bool(i % 2)) + "\n")
PY
$S tokenize char --append-eos "$T/docs.jsonl" -o "$T/in.tok"
# two species (label = argument position), 300 windows of 64 bases
$S dna species --window 64 --samples 300 --seed 3 "$SRC/tests/data/dna/lambda_virus.fa" \
  "$SRC/tests/data/dna/htslib_ce.fa" -o "$T/sp.tok" 2>"$T/sp.err"

# expectations, one JSON object per document ordinal: id, meta (the fields other than id
# and text, after --keep-fields / --drop-fields), tokens (in the token stream: one per
# UTF-8 byte, plus the appended EOS), eos (the document ends in EOS already: shard
# appends no second one, docs/formats.md "doc_eos")
"$PY" - "$T" <<'PY'
import json, sys
T = sys.argv[1]
docs = [json.loads(l) for l in open(T + "/docs.jsonl", encoding="utf-8")]
def write(name, sel):
    with open(T + "/" + name, "w", encoding="utf-8") as f:
        for d in docs:
            meta = {k: v for k, v in d.items() if k not in ("id", "text") and sel(k)}
            f.write(json.dumps({"id": d["id"], "meta": meta, "tokens": len(d["text"].encode()) + 1, "eos": True}) + "\n")
write("exp.jsonl", lambda k: True)
write("exp-keep.jsonl", lambda k: k in ("label", "ключ0"))
write("exp-drop.jsonl", lambda k: k not in ("source", "label"))
PY
"$PY" - "$T" <<'PY'
# species windows: the id is SPECIES:CHROM:START-END; the label is the species' argument
# position; the metadata must be exactly label, species, chrom, start, end
import json, sys, subprocess
T = sys.argv[1]
species = ["lambda_virus", "htslib_ce"]
out = open(T + "/exp-sp.jsonl", "w")
# ids (only) from the token stream
ids = [json.loads(l)["id"] for l in subprocess.run([__import__("os").environ["SLUICE"], "cat", T + "/sp.tok"],
                                                    capture_output=True, check=True, text=True).stdout.splitlines()]
assert len(ids) == 300, len(ids)
for i in ids:
    sp, rest = i.split(":", 1)
    chrom, span = rest.rsplit(":", 1)
    s, e = map(int, span.split("-"))
    assert e - s == 64
    meta = {"label": species.index(sp), "species": sp, "chrom": chrom, "start": s, "end": e}
    out.write(json.dumps({"id": i, "meta": meta, "tokens": 64}) + "\n")
PY

# --- the checker: a shard directory against an expectation ------------------------
cat >"$T/check.py" <<'PY'
import json, os, struct, sys
d, exp_path = sys.argv[1], sys.argv[2]
opts = sys.argv[3:]
exp = [json.loads(l) for l in open(exp_path, encoding="utf-8")]
m = json.load(open(os.path.join(d, "manifest.json")))
D = m["documents"]
def bad(msg): sys.exit("%s: %s" % (d, msg))
if D["count"] != len(exp): bad("count %d, expected %d" % (D["count"], len(exp)))
if D.get("index") != "documents.idx" or len(D.get("index_xxh64", "")) != 16: bad("manifest: no index: %r" % D)
data = open(os.path.join(d, "documents.jsonl"), "rb").read()
raw = open(os.path.join(d, "documents.idx"), "rb").read()
n = D["count"]
if len(raw) != 8 * (n + 1): bad("documents.idx has %d bytes, expected %d" % (len(raw), 8 * (n + 1)))
idx = struct.unpack("<%dQ" % (n + 1), raw)
if idx[0] != 0 or idx[n] != len(data) or D["bytes"] != len(data): bad("index ends %d/%d, file %d" % (idx[0], idx[n], len(data)))
# the splits the bounds files put each document in
where = {}
for split, sp in m["splits"].items():
    for f in sp["files"]:
        b = open(os.path.join(d, f["bounds"]), "rb").read()
        for r in range(len(b) // 32):
            row, doc, doc_off, off, ln = struct.unpack_from("<QQQII", b, 32 * r)
            where.setdefault(doc, set()).add(split)
seq = m["seq_len"]
def markers(e):  # tokens the packer adds around document e
    return (m["special"]["eos"] is not None and not e.get("eos")) + (m["special"]["bos"] is not None)
for k, e in enumerate(exp):
    line = data[idx[k]:idx[k + 1]]
    if not line.endswith(b"\n") or b"\n" in line[:-1]: bad("document %d: not one line: %r" % (k, line))
    o = json.loads(line)
    keys = list(o)
    want_keys = ["doc", "id", "split"] + (["long"] if "long" in o else []) + (["meta"] if e["meta"] else [])
    if keys != want_keys: bad("document %d: keys %s, expected %s" % (k, keys, want_keys))
    if o["doc"] != k or o["id"] != e["id"]: bad("document %d: doc %r id %r, expected %r" % (k, o["doc"], o["id"], e["id"]))
    if o.get("meta", {}) != e["meta"]: bad("document %d (%s): meta %r, expected %r" % (k, e["id"], o.get("meta"), e["meta"]))
    s = where.get(k)
    if "drop" in opts and e["tokens"] + markers(e) > seq:
        if o.get("long") != "dropped" or s: bad("document %d: %d tokens > %d: not dropped: %r" % (k, e["tokens"], seq, o))
        continue
    if o.get("long"): bad("document %d: unexpected long %r" % (k, o["long"]))
    if s != {o["split"]}: bad("document %d: split %r, its pieces are in %r" % (k, o["split"], s))
print("ok", d, n)
PY
check() { "$PY" "$T/check.py" "$@" >/dev/null || fail "check $*"; }

# --- shard: sequential, val split + shuffle + small files, recurrent, --no-split drop --
$S shard --seq-len 64 "$T/in.tok" -o "$T/a"
check "$T/a" "$T/exp.jsonl"
$S shard --seq-len 64 --val-fraction 0.3 --shuffle --seed 7 --shuffle-window 5 --max-file-bytes 1k "$T/in.tok" -o "$T/b"
check "$T/b" "$T/exp.jsonl"
grep -q '"split":"val"' "$T/b/documents.jsonl" || fail "no val documents"
$S shard --seq-len 64 --layout recurrent --batch 3 "$T/in.tok" -o "$T/c"
check "$T/c" "$T/exp.jsonl"
$S shard --seq-len 64 --no-split --long drop "$T/in.tok" -o "$T/e" 2>"$T/e.err"
check "$T/e" "$T/exp.jsonl" drop
grep -q 'dropped' "$T/e.err" || fail "no dropped documents: $(cat "$T/e.err")"
# pack | shard carries the same lines (also of dropped and empty documents) as shard
$S pack --seq-len 64 --no-split --long drop "$T/in.tok" -o "$T/e.tok" 2>/dev/null
$S shard "$T/e.tok" -o "$T/pe"
cmp "$T/e/documents.jsonl" "$T/pe/documents.jsonl" || fail "pack|shard documents.jsonl differs"
cmp "$T/e/documents.idx" "$T/pe/documents.idx" || fail "pack|shard documents.idx differs"
$S pack --seq-len 64 --layout recurrent --batch 3 "$T/in.tok" | $S shard -o "$T/pc"
for f in documents.jsonl documents.idx train-00000.tokens train-00000.bounds; do
  cmp "$T/c/$f" "$T/pc/$f" || fail "recurrent pack|shard: $f differs"
done
# species labels, sequential and recurrent, with a val split and shuffling
$S shard --seq-len 64 --val-fraction 0.3 --shuffle --seed 1 "$T/sp.tok" -o "$T/s1" 2>/dev/null
check "$T/s1" "$T/exp-sp.jsonl"
$S shard --seq-len 128 --layout recurrent --batch 2 "$T/sp.tok" -o "$T/s2" 2>/dev/null
check "$T/s2" "$T/exp-sp.jsonl"

# --- --keep-fields / --drop-fields (shard, pack) ---------------------------------------
$S shard --seq-len 64 --keep-fields label,ключ0 "$T/in.tok" -o "$T/k"
check "$T/k" "$T/exp-keep.jsonl"
$S pack --seq-len 64 --keep-fields label,ключ0 "$T/in.tok" | $S shard -o "$T/pk"
cmp "$T/k/documents.jsonl" "$T/pk/documents.jsonl" || fail "pack --keep-fields | shard differs"
$S shard --seq-len 64 --drop-fields source,label "$T/in.tok" -o "$T/dr"
check "$T/dr" "$T/exp-drop.jsonl"
# selection also applies to a packed input that carries metadata
$S pack --seq-len 64 "$T/in.tok" | $S shard --drop-fields source,label -o "$T/pdr"
cmp "$T/dr/documents.jsonl" "$T/pdr/documents.jsonl" || fail "shard --drop-fields of a packed stream differs"
expect_fail 2 'exclude each other' -- $S shard --seq-len 64 --keep-fields a --drop-fields b "$T/in.tok" -o "$T/bad"
expect_fail 2 'empty field name' -- $S pack --seq-len 64 --keep-fields a,,b "$T/in.tok" -o "$T/bad.tok"
no_file "$T/bad"; no_file "$T/bad.tok"

# --- merge: the halves of the corpus merged = the lines of the whole ------------------
head -n 150 "$T/docs.jsonl" | $S tokenize char --append-eos -o "$T/h1.tok"
tail -n 150 "$T/docs.jsonl" | $S tokenize char --append-eos -o "$T/h2.tok"
$S shard --seq-len 64 "$T/h1.tok" -o "$T/h1"
$S shard --seq-len 64 "$T/h2.tok" -o "$T/h2"
$S merge "$T/h1" "$T/h2" -o "$T/m"
check "$T/m" "$T/exp.jsonl"
cmp "$T/a/documents.jsonl" "$T/m/documents.jsonl" || fail "merged documents.jsonl differs from one shard of the whole"
cmp "$T/a/documents.idx" "$T/m/documents.idx" || fail "merged documents.idx differs from one shard of the whole"

# --- cat DIR: every piece carries its document's metadata ------------------------------
$S cat "$T/b" >"$T/b.cat"
"$PY" - "$T/b.cat" "$T/exp.jsonl" <<'PY' || fail "cat DIR metadata"
import json, sys
exp = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
n = 0
for l in open(sys.argv[1], encoding="utf-8"):
    p = json.loads(l)
    e = exp[p["doc"]]
    assert p["id"] == e["id"], (p["id"], e["id"])
    assert p.get("meta", {}) == e["meta"] and ("meta" in p) == bool(e["meta"]), (p, e)
    n += 1
assert n > 300, n
PY

# --- older directories (no documents.idx) still open -----------------------------------
cp -r "$T/a" "$T/old"
rm "$T/old/documents.idx"
sed -i 's/, "index": "documents.idx", "index_xxh64": "[0-9a-f]*"//' "$T/old/manifest.json"
grep -q index "$T/old/manifest.json" && fail "index still named in the manifest"
$S cat "$T/old" >"$T/old.cat" || fail "a directory without documents.idx does not open"
$S cat "$T/a" | cmp - "$T/old.cat" || fail "cat of the directory without index differs"

# --- corrupt or truncated documents.idx: a one-line error naming it ----------------------
cp -r "$T/a" "$T/ci"
truncate -s -8 "$T/ci/documents.idx"
expect_fail 1 'documents.idx: size [0-9]+ bytes, the manifest implies' -- $S cat "$T/ci"
[ "$(wc -l <"$T/err")" = 1 ] || fail "not one line: $(cat "$T/err")"
cp "$T/a/documents.idx" "$T/ci/"
printf '\001' | dd of="$T/ci/documents.idx" bs=1 seek=17 conv=notrunc 2>/dev/null
expect_fail 1 'documents.idx: checksum mismatch' -- $S stats "$T/ci"
expect_fail 1 'documents.idx: checksum mismatch' -- $S merge "$T/ci" "$T/a" -o "$T/bad"
no_file "$T/bad"
rm "$T/ci/documents.idx"
expect_fail 1 'documents.idx: No such file' -- $S cat "$T/ci"

# --- duplicate ids: a warning by default, an error with --unique-ids -------------------
printf '%s\n' '{"id":"a","text":"x"}' '{"id":"b","text":"yy"}' '{"id":"c","text":"z"}' \
  '{"id":"b","text":"w"}' '{"id":"a","text":"v"}' | $S tokenize char --append-eos -o "$T/dup.tok"
$S shard --seq-len 8 "$T/dup.tok" -o "$T/dup" 2>"$T/dup.err" || fail "duplicates must not fail by default"
grep -q "warning: 2 document(s) repeat an earlier id; the first is document 3, id 'b'" "$T/dup.err" ||
  fail "duplicate warning: $(cat "$T/dup.err")"
[ "$(grep -c '"id":"b"' "$T/dup/documents.jsonl")" = 2 ] || fail "duplicates are kept"
$S pack --seq-len 8 "$T/dup.tok" 2>"$T/dup.err" >/dev/null
grep -q "the first is document 3, id 'b'" "$T/dup.err" || fail "pack duplicate warning: $(cat "$T/dup.err")"
expect_fail 1 "dup.tok: document 3: duplicate id 'b'" -- $S shard --seq-len 8 --unique-ids "$T/dup.tok" -o "$T/bad"
[ "$(wc -l <"$T/err")" = 1 ] || fail "not one line: $(cat "$T/err")"
no_file "$T/bad"
expect_fail 1 "document 3: duplicate id 'b'" -- $S pack --seq-len 8 --unique-ids "$T/dup.tok" -o "$T/bad.tok"
no_file "$T/bad.tok"
# through a packed stream, shard finds them too
$S pack --seq-len 8 "$T/dup.tok" -o "$T/dup.packed" 2>/dev/null
expect_fail 1 "document 3: duplicate id 'b'" -- $S shard --unique-ids "$T/dup.packed" -o "$T/bad"
no_file "$T/bad"
$S shard --seq-len 64 --unique-ids "$T/in.tok" -o "$T/u" 2>"$T/u.err"
[ ! -s "$T/u.err" ] || fail "unique ids warned: $(cat "$T/u.err")"

# --- Megatron: a sidecar PREFIX.documents.jsonl; import restores ids and metadata ---------
$S export megatron "$T/in.tok" -o "$T/mg/corpus"
"$PY" - "$T/mg/corpus.documents.jsonl" "$T/exp.jsonl" <<'PY' || fail "megatron sidecar"
import json, sys
exp = [e for e in map(json.loads, open(sys.argv[2], encoding="utf-8"))]  # tokens: text bytes + EOS
lines = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
# documents end in the EOS tokenize appended (one, not two); a document of empty
# text is that EOS alone, empty for Megatron, which drops it
exp = [e for e in exp if e["tokens"] > 1]
assert len(lines) == len(exp), (len(lines), len(exp))
for k, (o, e) in enumerate(zip(lines, exp)):
    assert o["doc"] == k and o["id"] == e["id"] and o["split"] == "train", o
    assert o.get("meta", {}) == e["meta"] and ("meta" in o) == bool(e["meta"]), (o, e)
PY
$S import megatron --eos 256 --vocab-size 258 "$T/mg/corpus" | $S cat >"$T/imp.jsonl"
# import strips the EOD: the documents without their EOS, empty ones dropped
$S cat "$T/in.tok" | sed 's/,"src_bytes":[0-9]*//; s/,256\]/]/; /"ids":\[256\]/d' >"$T/in.cat"
cmp "$T/in.cat" "$T/imp.jsonl" || fail "import megatron does not restore ids and metadata"
$S import megatron --no-documents --eos 256 --vocab-size 258 "$T/mg/corpus" | $S cat >"$T/imp0.jsonl"
head -n 1 "$T/imp0.jsonl" | grep -q '^{"id":"0","ids":\[[0-9,]*\]}$' || fail "--no-documents: $(head -n 1 "$T/imp0.jsonl")"
$S merge "$T/mg/corpus" "$T/mg/corpus" -o "$T/mg/twice"
nm=$(wc -l <"$T/mg/corpus.documents.jsonl")
first=$(head -n 1 "$T/mg/corpus.documents.jsonl" | sed 's/^{"doc":0,\("id":"[^"]*",\).*/\1/')
[ "$(wc -l <"$T/mg/twice.documents.jsonl")" = $((2 * nm)) ] || fail "merged sidecar"
sed -n "$((nm + 1))p" "$T/mg/twice.documents.jsonl" | grep -q "^{\"doc\":$nm,$first" || fail "merged sidecar renumbering"
$S export megatron --keep-fields label "$T/in.tok" -o "$T/mg/k"
grep -v '"meta":{"label":[0-9]}}$' "$T/mg/k.documents.jsonl" | grep -q meta && fail "--keep-fields label in the sidecar"
cmp "$T/mg/k.bin" "$T/mg/corpus.bin" && cmp "$T/mg/k.idx" "$T/mg/corpus.idx" || fail "the sidecar changed .bin/.idx"
$S export megatron --no-documents "$T/in.tok" -o "$T/mg/k"
[ ! -e "$T/mg/k.documents.jsonl" ] || fail "--no-documents left a sidecar"
head -n 5 "$T/mg/corpus.documents.jsonl" >"$T/mg/short.documents.jsonl"
cp "$T/mg/corpus.bin" "$T/mg/short.bin"; cp "$T/mg/corpus.idx" "$T/mg/short.idx"
expect_fail 1 "short.documents.jsonl: 5 lines, the index has $nm documents" -- $S import megatron "$T/mg/short"

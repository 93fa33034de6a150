# examples/c/ built as a user builds them: `make install` into a staging
# directory, then examples/c/Makefile through pkg-config, from a copy outside
# the source tree. Each program's output is checked against independent
# evidence: the tokenize example's ids against Hugging Face tokenizers'
# (tests/data/bpe/expected-*.jsonl), the shard round trip against the ids
# that went in, the score example's NLL against mamba_ssm's reference
# (tests/data/model/*/expected.jsonl).
. "$SRC/tests/cli/lib.sh"

bin=$(cd "$(dirname "$SLUICE")" && pwd -P)
build=${bin#"$(cd "$SRC" && pwd -P)"/}
[ "$build" != "$bin" ] || fail "cannot tell the build directory of $SLUICE"
CC=${CC:-cc}; case "$CC" in cc|gcc|clang|gcc-*|clang-*) ;; *) CC=cc;; esac

make -s -C "$SRC" BUILD="$build" install DESTDIR="$T/root" PREFIX=/usr >"$T/install.log" 2>&1 \
  || { cat "$T/install.log"; fail "make install failed"; }
export PKG_CONFIG_PATH=$T/root/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$T/root
mkdir "$T/ex"; cp "$SRC"/examples/c/*.c "$SRC"/examples/c/Makefile "$T/ex/"
# warnings are errors here, and the programs use the stable API only (no SLUICE_UNSTABLE_API)
make -s -C "$T/ex" CC="$CC" CFLAGS="-O1 -Wall -Wextra -Werror -pedantic" >"$T/make.log" 2>&1 \
  || { cat "$T/make.log"; fail "examples/c does not build against the installed library"; }
! grep -rn SLUICE_UNSTABLE_API "$T/ex"/*.c || fail "an example opts into the unstable API"

# 1. tokenize: the ids of corpus texts (every 4th, or 8th: a process each) equal HF
# tokenizers' encode() (special tokens parsed), and decode gives the text back
for fam in neox:4 gpt2:8 qwen2:8; do
  step=${fam#*:}; fam=${fam%:*}
  case $fam in neox) tok=$DATA/bpe/neox-tokenizer.json;; gpt2) tok=$DATA/bpe/gpt2;; qwen2) tok=$DATA/bpe/qwen2-tiny-tokenizer.json;; esac
  python3 - "$DATA/bpe/corpus.jsonl" "$DATA/bpe/expected-$fam.jsonl" "$T/ex/tokenize" "$tok" "$step" <<'PY' || fail "tokenize example ($fam) differs from HF tokenizers"
import json, subprocess, sys
corpus = {d["id"]: d["text"] for d in map(json.loads, open(sys.argv[1], encoding="utf-8"))}
n = 0
for want in list(map(json.loads, open(sys.argv[2], encoding="utf-8")))[:: int(sys.argv[5])]:
    text = corpus[want["id"]]
    if "\0" in text or not text:
        continue  # an argument cannot hold NUL (nor be told from none when empty)
    out = subprocess.run([sys.argv[3], sys.argv[4], text], capture_output=True, check=True).stdout
    ids, decoded = out.split(b"\n", 1)
    got = [int(x) for x in ids.split()]
    if got != want["parse"]:
        sys.exit("%s: %s\n  want %s" % (want["id"], got, want["parse"]))
    if decoded != want["decoded"].encode("utf-8") + b"\n":
        sys.exit("%s: decoded %r, want %r" % (want["id"], decoded, want["decoded"]))
    n += 1
assert n >= 20, n
PY
done

# 2. write_shards then read_shards: documents of random ids (a Python RNG: lengths from 0
# to 3 rows, so some span rows) come back piece by piece, each followed by EOS
python3 -c '
import random
r = random.Random(29)
for _ in range(40):
    print(" ".join(str(r.randrange(3, 1000)) for _ in range(r.randrange(0, 50))))' > "$T/ids.txt"
"$T/ex/write_shards" 1000 2 16 "$T/docs.tok" "$T/shards" < "$T/ids.txt" > "$T/w.out"
[ "$(cat "$T/w.out")" = "40 documents into $T/shards" ] || fail "write_shards: $(cat "$T/w.out")"
"$T/ex/read_shards" "$T/shards" > "$T/pieces.txt" 2>"$T/r.err" || fail "read_shards: $(cat "$T/r.err")"
python3 - "$T/ids.txt" "$T/pieces.txt" <<'PY' || fail "the documents read back from the shards differ from those written"
import sys
want = {"doc%d" % i: [int(x) for x in l.split()] + [2] for i, l in enumerate(open(sys.argv[1]))}
got, rows = {}, set()
for line in open(sys.argv[2]):
    head, toks = line.split(":")
    split, _, row, doc, off = head.split()
    assert split == "train", line
    rows.add(int(row))
    got.setdefault(doc, []).append((int(off), [int(x) for x in toks.split()]))
for doc, pieces in got.items():
    pieces.sort()
    seq = []
    for off, toks in pieces:
        assert off == len(seq), (doc, off, len(seq))
        seq += toks
    got[doc] = seq
assert got == want, [d for d in want if got.get(d) != want[d]][:3]
assert sum(len(v) for v in want.values()) <= 16 * len(rows) and len(rows) > 40, len(rows)
PY
# bad input: an id not below the vocabulary is an error naming the document, and no stream is left
echo "5 1000" | expect_fail 1 'doc0' -- "$T/ex/write_shards" 1000 2 16 "$T/bad.tok" "$T/bad"
no_file "$T/bad.tok"; no_file "$T/bad"

# 3. score: the NLL of every document of two fixture models equals the PyTorch
# reference (mamba_ssm's selective_scan_ref) within float32 accuracy
for m in hf_f32 m2_f32; do
  python3 - "$DATA/model/$m/expected.jsonl" "$T/ex/score" "$DATA/model/$m" <<'PY' || fail "score example ($m) differs from the reference"
import json, subprocess, sys
for d in map(json.loads, open(sys.argv[1])):
    out = subprocess.run([sys.argv[2], sys.argv[3]] + [str(t) for t in d["tokens"]],
                         capture_output=True, text=True, check=True).stdout.split()
    nll, n_pred = float(out[1]), int(out[3])
    assert n_pred == max(len(d["tokens"]) - 1, 0), (d["id"], out)
    assert abs(nll - d["nll"]) <= 1e-4 * max(1.0, abs(d["nll"])), (d["id"], nll, d["nll"])
PY
done
expect_fail 1 'config.json' -- "$T/ex/score" "$T/no-such-model" 1 2

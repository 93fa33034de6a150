# One EOS per document. `tokenize --append-eos` ends every
# document in EOS and records it in the stream header ("doc_eos",
# docs/formats.md); shard, pack and export megatron then append EOS only where
# a document does not end in it, so the README pipeline (tokenize --append-eos,
# then shard / export) gives one EOS per document, and both conventions (EOS from
# the tokenizer, or from the packer) give byte-identical outputs. `--eos
# append|keep|none` overrides. Streams without the key (older ones) read and pack
# as before. Checked with tests/shard/one_eos.py, which reads the files per the
# spec, and against the documents' own token counts.
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
PY=/usr/bin/python3
TOK=$DATA/bpe/neox-tokenizer.json
cd "$T"
for f in "$SRC"/examples/data/text/*.txt; do
  $PY -c 'import json,sys; print(json.dumps({"id": sys.argv[1].rsplit("/",1)[1], "text": open(sys.argv[1]).read()[:4000]}))' "$f"
done >docs.jsonl
printf '{"id":"empty","text":""}\n' >>docs.jsonl
$S tokenize bpe -t "$TOK" --append-eos docs.jsonl -o with.tok
$S tokenize bpe -t "$TOK" docs.jsonl -o without.tok
# the header records it (and only with --append-eos)
$PY - with.tok without.tok <<'PY'
import json, struct, sys
def hdr(p):
    b = open(p, "rb").read(1 << 16)
    j = struct.unpack_from("<I", b, 20)[0]
    return json.loads(b[24:24 + j])
a, b = hdr(sys.argv[1]), hdr(sys.argv[2])
assert a.get("doc_eos") == 0 and a.get("eos") == 0, a
assert "doc_eos" not in b, b
PY

# shard: one EOS per document; the two conventions give the same directory
for spec in "--seq-len 512" "--seq-len 512 --warmup double:128..512 --shuffle --seed 1 --val-fraction 0.3 --max-file-bytes 8k" \
            "--seq-len 256 --no-split --long split" "--seq-len 256 --layout recurrent --batch 3"; do
  rm -rf a b
  $S shard $spec with.tok -o a
  $S shard $spec without.tok -o b
  diff -r a b >/dev/null || fail "shard $spec: --append-eos and appending in shard differ"
  $PY "$SRC/tests/shard/one_eos.py" 0 a >/dev/null || fail "shard $spec: $($PY "$SRC/tests/shard/one_eos.py" 0 a)"
done
# pack | shard, and merge of two halves, the same
$S pack --seq-len 512 with.tok | $S shard -o p
$S shard --seq-len 512 without.tok -o q
diff -r p q >/dev/null || fail "pack | shard differs"
$PY "$SRC/tests/shard/one_eos.py" 0 p >/dev/null || fail "pack | shard: two EOS"
head -n 4 docs.jsonl | $S tokenize bpe -t "$TOK" --append-eos -o h1.tok
tail -n +5 docs.jsonl | $S tokenize bpe -t "$TOK" --append-eos -o h2.tok
$S shard --seq-len 512 h1.tok -o m1
$S shard --seq-len 512 h2.tok -o m2
$S merge m1 m2 -o mm
$PY "$SRC/tests/shard/one_eos.py" 0 mm >/dev/null || fail "merge: $($PY "$SRC/tests/shard/one_eos.py" 0 mm)"
# export megatron: one EOS, byte-identical either way (the empty document dropped)
$S export megatron with.tok -o mw
$S export megatron without.tok -o mo
cmp mw.bin mo.bin && cmp mw.idx mo.idx && cmp mw.documents.jsonl mo.documents.jsonl || fail "export differs"
$PY "$SRC/tests/shard/one_eos.py" 0 mw >/dev/null || fail "export: $($PY "$SRC/tests/shard/one_eos.py" 0 mw)"
n=$(grep -c . mw.documents.jsonl)
[ "$n" = 8 ] || fail "export: $n documents, expected 8 (the empty one dropped)"

# the overrides
rm -rf a; $S shard --seq-len 512 --eos append with.tok -o a
$PY "$SRC/tests/shard/one_eos.py" 0 a >/dev/null && fail "--eos append did not append a second EOS"
rm -rf a; $S shard --seq-len 512 --eos keep with.tok -o a
$PY "$SRC/tests/shard/one_eos.py" 0 a >/dev/null || fail "--eos keep: $($PY "$SRC/tests/shard/one_eos.py" 0 a)"
grep -q '"eos":0' a/manifest.json || fail "--eos keep must record the EOS"
rm -rf b; $S shard --seq-len 512 --eos keep without.tok -o b
$PY "$SRC/tests/shard/one_eos.py" 0 b >/dev/null && fail "--eos keep appended to documents without EOS"
rm -rf c; $S shard --seq-len 512 --eos none with.tok -o c
grep -q '"eos":null' c/manifest.json || fail "--eos none must record no EOS"
rm -rf d; $S shard --seq-len 512 --no-eos with.tok -o d
diff -r c d >/dev/null || fail "--no-eos and --eos none differ"
$S export megatron --eos append with.tok -o ma
$PY "$SRC/tests/shard/one_eos.py" 0 ma >/dev/null && fail "export --eos append: one EOS"
expect_fail 2 "exclude each other" -- $S shard --seq-len 512 --eos keep --no-eos with.tok -o x
expect_fail 2 "exclude each other" -- $S export megatron --eos append --no-eos with.tok -o x
expect_fail 2 "'bogus' is not one of append\|keep\|none" -- $S shard --seq-len 512 --eos bogus with.tok -o x

# old streams (no "doc_eos") read as before: every document gets the EOS, also one
# that ends in it; a concatenation of streams that differ in it names the difference
$S tokenize ids --vocab-size 10 --eos 0 <(printf '{"id":"a","ids":[3,0]}\n{"id":"b","ids":[4]}\n') -o old.tok
$S shard --seq-len 8 old.tok -o o
[ "$(od -An -tu2 -N10 o/train-00000.tokens | tr -s ' ')" = " 3 0 0 4 0" ] || fail "old stream: $(od -An -tu2 o/train-00000.tokens)"
$S tokenize ids --vocab-size 10 --eos 0 --ends-with-eos <(printf '{"id":"a","ids":[3,0]}\n{"id":"b","ids":[4,0]}\n') -o new.tok
rm -rf o; $S shard --seq-len 8 new.tok -o o
[ "$(od -An -tu2 -N8 o/train-00000.tokens | tr -s ' ')" = " 3 0 4 0" ] || fail "recorded: $(od -An -tu2 o/train-00000.tokens)"
expect_fail 1 'documents end in 0 vs none' -- $S shard --seq-len 8 new.tok old.tok -o x

# sluice export/import/merge megatron against datasets written by megatron-core's
# own IndexedDatasetBuilder (tests/shard/make_megatron_fixture.py, SOURCES.md).
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
F=$DATA/shard

# export: byte-identical to Megatron's writer (uint16, code 8; int32, code 4)
$S tokenize ids --vocab-size 50277 --eos 0 "$F/mega_u16.jsonl" | $S export megatron -o "$T/u16"
cmp "$T/u16.idx" "$F/mega_u16.idx" || fail "uint16 .idx differs from megatron-core's"
cmp "$T/u16.bin" "$F/mega_u16.bin" || fail "uint16 .bin differs from megatron-core's"
$S tokenize ids --vocab-size 100000 --eos 0 "$F/mega_i32.jsonl" | $S export megatron -o "$T/i32"
cmp "$T/i32.idx" "$F/mega_i32.idx" || fail "int32 .idx differs from megatron-core's"
cmp "$T/i32.bin" "$F/mega_i32.bin" || fail "int32 .bin differs from megatron-core's"
[ "$(od -An -tu1 -j17 -N1 "$T/i32.idx" | tr -d ' ')" = 4 ] || fail "dtype code of int32 data"
# the other convention: documents that already end in EOS, as the header
# records (`tokenize ... --append-eos`; here `tokenize ids --ends-with-eos`), get no
# second one, and a document that is only that EOS (empty text) is empty for
# Megatron: the same bytes as megatron-core's
for v in u16:50277 i32:100000; do
  n=${v%%:*}
  sed 's/"ids": \[\]/"ids": [0]/; s/\]}$/, 0]}/; s/\[0, 0\]/[0]/' "$F/mega_$n.jsonl" >"$T/eos_$n.jsonl"
  $S tokenize ids --vocab-size "${v#*:}" --eos 0 --ends-with-eos "$T/eos_$n.jsonl" | $S export megatron -o "$T/e$n"
  cmp "$T/e$n.idx" "$F/mega_$n.idx" || fail "$n: documents ending in EOS: .idx differs from megatron-core's"
  cmp "$T/e$n.bin" "$F/mega_$n.bin" || fail "$n: documents ending in EOS: .bin differs from megatron-core's"
  # --eos keep: as they are (no EOS appended); --eos append: a second EOS after each
  $S tokenize ids --vocab-size "${v#*:}" --eos 0 --ends-with-eos "$T/eos_$n.jsonl" -o "$T/eos_$n.tok"
  $S export megatron --eos append "$T/eos_$n.tok" -o "$T/a$n"
  [ $(stat -c %s "$T/a$n.bin") -gt $(stat -c %s "$T/e$n.bin") ] || fail "--eos append added nothing"
  $S export megatron --eos none "$T/eos_$n.tok" -o "$T/k$n"
  $S export megatron --eos keep "$T/eos_$n.tok" -o "$T/k2$n"
  cmp "$T/k$n.bin" "$T/k2$n.bin" || fail "--eos keep and --eos none differ in .bin"
done
expect_fail 1 'does not end in the eos id 0 \(--ends-with-eos\)' -- $S tokenize ids --vocab-size 50277 --eos 0 --ends-with-eos "$F/mega_u16.jsonl"

# import: the documents come back (EOD removed with --eos); export again is identical
$S import megatron --eos 0 --vocab-size 50277 "$F/mega_u16" -o "$T/back.tok"
$S cat "$T/back.tok" | sed 's/^{"id":"[0-9]*",/{/' >"$T/back.jsonl"
grep -v '"ids": \[\]' "$F/mega_u16.jsonl" | sed 's/^{"id": "[^"]*", /{/; s/ //g' >"$T/want.jsonl"
cmp "$T/back.jsonl" "$T/want.jsonl" || fail "imported documents differ from the source documents"
$S export megatron "$T/back.tok" -o "$T/again"
cmp "$T/again.idx" "$F/mega_u16.idx" && cmp "$T/again.bin" "$F/mega_u16.bin" || fail "import+export is not identity"
# a sentence-level dataset: a document's sequences are joined
$S import megatron "$F/mega_sent" | $S cat >"$T/sent.jsonl"
printf '%s\n' '{"id":"0","ids":[11,12,13,14,15]}' '{"id":"1","ids":[21,22,0]}' '{"id":"2","ids":[31,32,33,34]}' |
  cmp - "$T/sent.jsonl" || fail "sentence-level import: $(cat "$T/sent.jsonl")"

# merge: as add_index (megatron-core wrote mega_u16x2 = mega_u16 twice)
$S merge "$F/mega_u16" "$F/mega_u16" -o "$T/m"
cmp "$T/m.idx" "$F/mega_u16x2.idx" && cmp "$T/m.bin" "$F/mega_u16x2.bin" || fail "merge differs from add_index"
expect_fail 1 'dtype code 4 differs' -- $S merge "$F/mega_u16" "$F/mega_i32" -o "$T/bad"
no_file "$T/bad.idx"; no_file "$T/bad.bin"

# bad input
expect_fail 1 'no eos' -- sh -c "$S tokenize ids --vocab-size 50277 '$F/mega_u16.jsonl' | $S export megatron -o '$T/bad'"
no_file "$T/bad.bin"
head -c 100 "$F/mega_u16.idx" >"$T/t.idx"; cp "$F/mega_u16.bin" "$T/t.bin"
expect_fail 1 't.idx: 100 bytes do not match' -- $S import megatron "$T/t"
cp "$F/mega_u16.idx" "$T/t.idx"; head -c 1000 "$F/mega_u16.bin" >"$T/t.bin"
expect_fail 1 't.idx: the .bin has 1000 bytes' -- $S import megatron "$T/t"
printf 'NOTMMIDX' | dd of="$T/t.idx" bs=1 conv=notrunc 2>/dev/null
expect_fail 1 'bad magic' -- $S import megatron "$T/t"
expect_fail 1 'No such file' -- $S import megatron "$T/nothere"
expect_fail 2 'needs -o PREFIX' -- $S export megatron "$T/back.tok"
$S pack --seq-len 64 "$T/back.tok" -o "$T/packed.tok"
expect_fail 1 'export needs a document stream' -- $S export megatron "$T/packed.tok" -o "$T/bad"

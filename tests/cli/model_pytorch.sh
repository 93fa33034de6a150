# pytorch_model.bin checkpoints (torch.save's zip; tests/model/gen_pt_fixtures.py
# saved the safetensors fixtures' tensors with torch): scores equal the
# safetensors model's byte for byte, single file and sharded with an index;
# hostile or broken files are refused with one line naming the file, and a
# pickle that calls os.system runs nothing.
. "$SRC/tests/cli/lib.sh"
M=$DATA/model
"$SLUICE" tokenize ids --vocab-size 64 --field tokens "$M/hf_f32/expected.jsonl" -o "$T/f32.tok"
"$SLUICE" tokenize ids --vocab-size 40 --field tokens "$M/hf_bf16/expected.jsonl" -o "$T/bf16.tok"
for opts in "--per-token" "--long-context 16" "--prepend 3 --max-tokens 50"; do
  # shellcheck disable=SC2086
  "$SLUICE" score -m "$M/pt_f32" $opts "$T/f32.tok" > "$T/a.jsonl"
  # shellcheck disable=SC2086
  "$SLUICE" score -m "$M/hf_f32" $opts "$T/f32.tok" > "$T/b.jsonl"
  cmp -s "$T/a.jsonl" "$T/b.jsonl" || fail "pt_f32 $opts: differs from hf_f32"
done
[ "$(wc -l < "$T/a.jsonl")" = 5 ] || fail "pt_f32: line count"
"$SLUICE" score -m "$M/pt_sharded_bf16" --per-token "$T/bf16.tok" > "$T/c.jsonl"
"$SLUICE" score -m "$M/hf_bf16" --per-token "$T/bf16.tok" > "$T/d.jsonl"
cmp -s "$T/c.jsonl" "$T/d.jsonl" || fail "pt_sharded_bf16 differs from hf_bf16"
rm -f /tmp/sluice-pt-pwned
expect_fail 1 "pt_code/pytorch_model.bin: data.pkl offset [0-9]+: global 'posix.system' is not allowed" -- \
  "$SLUICE" score -m "$M/bad/pt_code" "$T/f32.tok" -o "$T/o1"
[ ! -e /tmp/sluice-pt-pwned ] || fail "the pickle ran code"
no_file "$T/o1"
expect_fail 1 "storage '0': 6 F32 elements need more than its 4 bytes" -- "$SLUICE" score -m "$M/bad/pt_short_storage" "$T/f32.tok"
expect_fail 1 'pt_truncated/pytorch_model.bin: no zip end-of-central-directory record' -- \
  "$SLUICE" score -m "$M/bad/pt_truncated" "$T/f32.tok"
expect_fail 1 'data.pkl is not a dict of tensors' -- "$SLUICE" score -m "$M/bad/pt_not_state_dict" "$T/f32.tok"
# both formats present: safetensors is read (as transformers does)
cp -r "$M/pt_f32" "$T/both"
cp "$M/hf_bf16/model.safetensors" "$T/both/"
expect_fail 1 'both/model.safetensors' -- "$SLUICE" score -m "$T/both" "$T/f32.tok"

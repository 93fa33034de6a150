# sluice score --device cuda|auto on whatever machine runs the tests. Without
# a GPU (or in a build without CUDA): a one-line error naming CUDA, exit 1,
# no output file. With a GPU: the same NLLs as --device cpu within the
# tolerance mamba_ssm uses for reduced precision (TF32 GEMMs here): rtol
# 3e-3, atol 5e-3. --device auto always succeeds and matches cpu.
. "$SRC/tests/cli/lib.sh"
M=$DATA/model/hf_f32

# close A B: |A-B| <= 5e-3 + 3e-3 * |B|
close() { [ -n "$1" ] && [ -n "$2" ] || fail "close: empty value ('$1' vs '$2')"; awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; exit !(d <= 5e-3 + 3e-3 * m) }'; }
same_nll() { # FILE_A FILE_B
  [ "$(wc -l < "$1")" = "$(wc -l < "$2")" ] || fail "$1 and $2 differ in length"
  paste -d'\n' "$1" "$2" | while IFS= read -r a && IFS= read -r b; do
    x=$(printf '%s' "$a" | sed -n 's/.*"nll":\([-0-9.eE+]*\).*/\1/p')
    y=$(printf '%s' "$b" | sed -n 's/.*"nll":\([-0-9.eE+]*\).*/\1/p')
    close "$x" "$y" || fail "nll $x vs $y ($1 vs $2)"
  done || fail "$1 and $2 differ"
}

v=$(sed -n 's/.*"vocab_size": \([0-9]*\).*/\1/p' "$M/config.json")
"$SLUICE" tokenize ids --vocab-size "$v" --field tokens "$M/expected.jsonl" -o "$T/in.tok"
"$SLUICE" score -m "$M" --device cpu "$T/in.tok" -o "$T/cpu.jsonl"

set +e
"$SLUICE" score -m "$M" --device cuda "$T/in.tok" -o "$T/gpu.jsonl" 2> "$T/err"
rc=$?
set -e
if [ $rc -eq 0 ]; then
  echo "cuda_device.sh: a CUDA device is present: comparing with the CPU"
  same_nll "$T/gpu.jsonl" "$T/cpu.jsonl"
else
  [ $rc -eq 1 ] || fail "--device cuda without a device: exit $rc, want 1"
  grep -Eq '^sluice: score: .*cuda: (no CUDA device found|this sluice was built without CUDA)' "$T/err" \
    || fail "unclear error: $(cat "$T/err")"
  [ "$(grep -c . "$T/err")" -eq 1 ] || fail "error is not one line: $(cat "$T/err")"
  no_file "$T/gpu.jsonl"
fi

"$SLUICE" score -m "$M" --device auto "$T/in.tok" -o "$T/auto.jsonl"
same_nll "$T/auto.jsonl" "$T/cpu.jsonl"

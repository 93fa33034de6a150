# One binary for a cluster's CPU and GPU nodes: a sluice built with CUDA starts
# on a machine without any CUDA library, `--device cuda` there fails with one
# line and no output, and `--device auto` scores on the CPU. The CUDA toolkit
# (/usr/local/cuda, and any $CUDA_HOME) is hidden by an empty tmpfs mounted over
# it in a private mount namespace (unshare -m, as root; CI runs as root). Before
# the runtime was linked statically, the binary exited 127 there
# ("libcudart.so.13: cannot open shared object file").
. "$SRC/tests/cli/lib.sh"
M=$DATA/model/hf_f32

! ldd "$SLUICE" | grep -Eq 'libcudart|libcublas|libcuda\.' || fail "sluice links a CUDA library: $(ldd "$SLUICE" | grep -E 'cud|cubl')"
v=$(sed -n 's/.*"vocab_size": \([0-9]*\).*/\1/p' "$M/config.json")
"$SLUICE" tokenize ids --vocab-size "$v" --field tokens "$M/expected.jsonl" -o "$T/in.tok"
"$SLUICE" score -m "$M" --device cpu "$T/in.tok" -o "$T/cpu.jsonl"
set +e
"$SLUICE" score -m "$M" --device cuda "$T/in.tok" -o "$T/probe.jsonl" 2>"$T/probe.err"
set -e
if grep -q 'built without CUDA' "$T/probe.err"; then # CUDA=0 (make check-asan, make fuzz)
  echo "cuda_hidden.sh: this sluice is built without CUDA and links no CUDA library"
  exit 0
fi
[ "$(id -u)" = 0 ] || fail "needs root for unshare -m (CI runs as root)"
command -v unshare >/dev/null || fail "unshare (util-linux) not found"

# hidden: every folder a CUDA library could come from in this build
hide=""
for d in /usr/local/cuda /usr/local/cuda-* ${CUDA_HOME:-}; do [ -d "$d" ] && hide="$hide $d"; done
cat > "$T/hidden.sh" <<SH
set -u
for d in $hide; do mount -t tmpfs none "\$d" || exit 99; done
ls /usr/local/cuda/lib64/libcudart* >/dev/null 2>&1 && exit 98
"$SLUICE" --version >"$T/version" 2>&1 || exit 10
"$SLUICE" score -m "$M" --device cuda "$T/in.tok" -o "$T/gpu.jsonl" 2>"$T/err"
echo \$? >"$T/rc"
"$SLUICE" score -m "$M" --device auto "$T/in.tok" -o "$T/auto.jsonl" 2>"$T/auto.err" || exit 11
SH
set +e
unshare -m bash "$T/hidden.sh"
rc=$?
set -e
[ $rc -ne 99 ] || fail "could not mount a tmpfs over$hide"
[ $rc -ne 98 ] || fail "the CUDA runtime is still visible after hiding$hide"
[ $rc -ne 10 ] || fail "sluice does not start without the CUDA libraries: $(cat "$T/version")"
[ $rc -ne 11 ] || fail "--device auto failed without the CUDA libraries: $(cat "$T/auto.err")"
[ $rc -eq 0 ] || fail "hidden run: exit $rc"
grep -q '^sluice ' "$T/version" || fail "--version: $(cat "$T/version")"
[ "$(cat "$T/rc")" = 1 ] || fail "--device cuda without CUDA: exit $(cat "$T/rc"), want 1 ($(cat "$T/err"))"
[ "$(grep -c . "$T/err")" -eq 1 ] || fail "error is not one line: $(cat "$T/err")"
grep -Eq '^sluice: score: .*cuda: no CUDA device found' "$T/err" || fail "unclear error: $(cat "$T/err")"
no_file "$T/gpu.jsonl"
cmp -s "$T/auto.jsonl" "$T/cpu.jsonl" || fail "--device auto without CUDA differs from --device cpu"

#!/usr/bin/env bash
# Mamba-2 model-eval benchmark: `sluice score` with a random model of mamba2-130m's shape (24 layers,
# d_model 768, d_ssm 1536 = 24 heads of 64, d_state 128, ngroups 1, vocab 50280; BF16 safetensors
# with transformers' names, written by bench/model_bench.c, computed in fp32) on documents of 2048
# random tokens, all cores. Prints tokens/s, the achieved GFLOP/s (forward FLOPs per token x tokens/s:
# 2 x weights incl. lm_head + conv + the SSD counted as its recurrence, 6 d_ssm d_state) and that as a
# fraction of this machine's OpenBLAS SGEMM GFLOP/s measured in the same run (goal: >= 0.5), per
# wall second and per CPU second (the development machine is shared: CPU seconds are what the code
# itself costs), with the load average.
# Peer (when python3 has torch + transformers + safetensors; set PYTHON to choose the interpreter):
# transformers' Mamba2ForCausalLM on the first MODEL_BENCH_PEER_LEN tokens of the first document.
# MODEL_BENCH_DOCS (default 2) and MODEL_BENCH_LEN (2048) change the size.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
S=${SLUICE_BIN:-$SRC/sluice}
ND=${MODEL_BENCH_DOCS:-2}
LEN=${MODEL_BENCH_LEN:-2048}
PEER_LEN=${MODEL_BENCH_PEER_LEN:-256}
PY=${PYTHON:-python3}
NP=$(nproc)
W=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench-mamba2.XXXXXX")
trap 'rm -rf "$W"' EXIT

timed() {
  local name=$1; shift
  local TIMEFORMAT='%R %U %S'
  { time "$@" > "$W/$name.out"; } 2> "$W/$name.time"
  awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' "$W/$name.time" > "$W/$name.t" && mv "$W/$name.t" "$W/$name.time"
}
wall() { cut -d' ' -f1 "$W/$1.time"; }
cpu() { cut -d' ' -f2 "$W/$1.time"; }

echo "mamba2 bench: $(date -u '+%Y-%m-%d %H:%M UTC'), $NP cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1)," \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"
cc -std=c17 -D_GNU_SOURCE -O2 -I/usr/include/openblas -o "$W/mb" "$SRC/bench/model_bench.c" -lopenblas -lm
mkdir "$W/m2"
"$W/mb" gen2 "$W/m2" 24 768 50280
FPT=$("$W/mb" flops2 24 768 50280)
"$W/mb" docs "$ND" "$LEN" 50277 1 > "$W/docs.jsonl"
"$S" tokenize ids --vocab-size 50277 "$W/docs.jsonl" -o "$W/docs.tok"
echo '{"id":"warm","ids":[1,2]}' | "$S" tokenize ids --vocab-size 50277 -o "$W/one.tok"
TOK=$((ND * (LEN - 1)))
echo "model: mamba2-130m shape, $(du -h "$W/m2/model.safetensors" | cut -f1) BF16; $(awk -v f="$FPT" 'BEGIN { printf "%.1f", f / 1e6 }') MFLOP per token;" \
  "input: $ND documents x $LEN tokens ($TOK predicted tokens)"

"$W/mb" sgemm "$NP" > "$W/sgemm.out"
sed 's/^/  /' "$W/sgemm.out" | grep -v ceiling
CEIL=$(awk '/^ceiling/ { print $2 }' "$W/sgemm.out")
CEIL_CPU=$(awk '/^ceiling/ { print $3 }' "$W/sgemm.out")

timed load "$S" score -q -m "$W/m2" --device cpu "$W/one.tok"
timed score "$S" score -q -m "$W/m2" --device cpu "$W/docs.tok"
awk -v t="$TOK" -v f="$FPT" -v w="$(wall score)" -v c="$(cpu score)" -v lw="$(wall load)" -v lc="$(cpu load)" \
    -v ceil="$CEIL" -v ceilc="$CEIL_CPU" -v np="$NP" -v la="$(cut -d' ' -f1-3 /proc/loadavg)" 'BEGIN {
  sw = w - lw; sc = c - lc; if (sw <= 0) sw = w; if (sc <= 0) sc = c
  printf "sluice score (Mamba-2): %.2f s wall (+ %.2f s model load), %.0f tokens/s, %.1f GFLOP/s = %.2f of SGEMM %.1f GFLOP/s\n",
    sw, lw, t / sw, t * f / sw / 1e9, t * f / sw / 1e9 / ceil, ceil
  printf "  per CPU-second: %.0f tokens, %.1f GFLOP = %.2f of SGEMM %.1f GFLOP per CPU-second" \
    " (x %d cores = %.0f tokens/s on an idle machine); load average after: %s\n",
    t / sc, t * f / sc / 1e9, t * f / sc / 1e9 / ceilc, ceilc, np, t / sc * np, la
}'

head -n 1 "$W/docs.jsonl" > "$W/peer_docs.jsonl"
set +e
timeout 900 "$PY" "$SRC/bench/model_peer.py" "$W/m2" "$W/peer_docs.jsonl" "$PEER_LEN" "$NP" Mamba2ForCausalLM > "$W/peer.out" 2> "$W/peer.err"
prc=$?
set -e
if [ $prc -eq 0 ]; then
  "$S" score -q -m "$W/m2" --max-tokens "$PEER_LEN" "$W/docs.tok" | head -n 1 > "$W/ours_short.jsonl"
  timed short "$S" score -q -m "$W/m2" --max-tokens "$PEER_LEN" "$W/docs.tok"
  awk -v ps="$(sed -n 's/.*"peer_seconds": \([0-9.e+-]*\).*/\1/p' "$W/peer.out")" -v pt="$((PEER_LEN - 1))" \
      -v w="$(wall short)" -v lw="$(wall load)" -v nd="$ND" \
      -v pn="$(head -n 1 "$W/peer.out" | sed 's/.*"nll": \([-0-9.e+]*\).*/\1/')" \
      -v on="$(sed 's/.*"nll":\([-0-9.e+]*\).*/\1/' "$W/ours_short.jsonl")" 'BEGIN {
    sw = w - lw; if (sw <= 0) sw = w
    printf "peer HF transformers Mamba2ForCausalLM (PyTorch CPU, %d tokens): %.0f tokens/s; sluice %.0f tokens/s on %d docs of that length; ratio sluice/peer %.1f\n",
      pt + 1, pt / ps, nd * pt / sw, nd, (nd * pt / sw) / (pt / ps)
    d = (on - pn) / pn; if (d < 0) d = -d
    printf "  NLL of the first document: sluice %.6f, peer %.6f (relative difference %.1e)\n", on, pn, d
  }'
else
  echo "peer: skipped ($PY has no torch + transformers + safetensors; exit $prc)"
fi

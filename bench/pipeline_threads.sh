#!/usr/bin/env bash
# Threads in pipelines: a 5-stage pipeline
#   read | tokenize bpe | filter --field tokens --min 16 | pack | shard
# on ~40 MB of JSON Lines built from /usr/share/doc, run three ways in the same
# run: OpenMP's spinning default (OMP_WAIT_POLICY=active is what libgomp does
# for a while before sleeping; SLUICE_NO_REEXEC=1 keeps sluice from changing
# it), the variable set by hand (OMP_WAIT_POLICY=passive), and sluice's own
# default (passive unless the user chose). Prints the median wall time and CPU
# time (user+sys) of 5 runs each, interleaved.
# Env: SLUICE_BIN.
set -euo pipefail
S=${SLUICE_BIN:-$(dirname "$0")/../sluice}
HERE=$(cd "$(dirname "$0")/.." && pwd)
DIR=$(mktemp -d /tmp/sluice-pipe-bench.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
python3 - "$DIR/corpus.jsonl" <<'PY'
import gzip, json, os, sys
out, tot = open(sys.argv[1], "w"), 0
for root, _, files in sorted(os.walk("/usr/share/doc")):
    for f in sorted(files):
        p = os.path.join(root, f)
        try:
            t = (gzip.open(p).read() if f.endswith(".gz") else open(p, "rb").read()).decode("utf-8")
        except Exception:
            continue
        if len(t) >= 50 and tot < 40e6:
            out.write(json.dumps({"text": t, "id": p}) + "\n")
            tot += len(t)
PY
TOK=$HERE/tests/data/bpe/neox-tokenizer.json
run() { # ENV...: prints "wall cpu"
  /usr/bin/time -f "%e %U %S" env "$@" bash -c "'$S' read '$DIR/corpus.jsonl' | '$S' tokenize bpe --tokenizer '$TOK' \
    | '$S' filter -q --field tokens --min 16 | '$S' pack --seq-len 2048 | '$S' shard -o '$DIR/out' --force" 2>&1 >/dev/null \
    | tail -n 1 | awk '{printf "%s %.2f\n", $1, $2 + $3}'
}
for i in 1 2 3 4 5; do
  run -u OMP_WAIT_POLICY SLUICE_NO_REEXEC=1 >>"$DIR/spin"
  run OMP_WAIT_POLICY=passive >>"$DIR/hand"
  run -u OMP_WAIT_POLICY >>"$DIR/default"
done
med() { sort -n -k"$2" "$1" | awk -v k="$2" '{a[NR]=$k} END {print a[int((NR+1)/2)]}'; }
echo "pipeline read|tokenize bpe|filter|pack|shard, $(du -m "$DIR/corpus.jsonl" | cut -f1) MB, $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
printf '%-34s %8s %8s\n' "" "wall s" "CPU s"
printf '%-34s %8s %8s\n' "spinning (libgomp default)" "$(med "$DIR/spin" 1)" "$(med "$DIR/spin" 2)"
printf '%-34s %8s %8s\n' "OMP_WAIT_POLICY=passive by hand" "$(med "$DIR/hand" 1)" "$(med "$DIR/hand" 2)"
printf '%-34s %8s %8s\n' "sluice default" "$(med "$DIR/default" 1)" "$(med "$DIR/default" 2)"

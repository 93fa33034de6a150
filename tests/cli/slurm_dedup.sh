# The MinHash dedup chain of examples/slurm on a real one-node Slurm cluster
# (scripts/slurm-local, as tests/cli/slurm_array.sh): submit.sh dedup runs the
# signatures as a 3-task array, the buckets as a 4-task array, one cluster
# job and the filter as a 3-task array, each --dependency=afterok on the one
# before; the kept parts concatenated, the removed parts and the summary equal
# the one-process `sluice dedup minhash`. Then a signature part and a filter
# part are deleted and the chain is submitted again: only those two tasks run
# (the others say "nothing to do") and the result is the same.
# Without root (slurmd and munged need it here) the test FAILS, saying so.
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
EX=$SRC/examples/slurm
PATH=$PATH:/usr/sbin
[ "$(id -u)" = 0 ] || fail "not root: this test starts slurmctld, slurmd and munged (scripts/slurm-local), which needs root; run make test as root (CI does)"
for b in sbatch squeue scontrol munged slurmctld slurmd; do
  command -v "$b" > /dev/null || fail "$b not found: run scripts/install-deps (slurm-wlm, munge)"
done
C=$T/cluster
export SLURM_LOCAL_PORT=$((20000 + RANDOM % 20000))
trap '"$SRC/scripts/slurm-local" stop "$C" > /dev/null 2>&1 || true' EXIT
"$SRC/scripts/slurm-local" start "$C" > "$T/start.log" 2>&1 || fail "Slurm did not start: $(tail -n 5 "$T/start.log")"
export SLURM_CONF=$C/slurm.conf

D=$DATA/dedup
mkdir "$T/corpus"
for i in 0 1; do sed "s/\"id\": \"d/\"id\": \"c$i-d/" "$D/corpus.jsonl"; done > "$T/corpus/a.jsonl"
sed "s/\"id\": \"d/\"id\": \"z-d/" "$D/corpus.jsonl" | gzip -c > "$T/corpus/b.jsonl.gz"
export SLUICE=$S INPUTS="$T/corpus/*" MINHASH_OPTS="--buckets 10 --rows 6"
export SBATCH_OPTS=--cpus-per-task=1
# shellcheck disable=SC2086
"$S" dedup minhash -q $MINHASH_OPTS $INPUTS -o "$T/want.jsonl" --removed "$T/want.rm" --summary "$T/want.json"

check() {
  local W=$1/dedup
  [ "$(ls "$W/kept" | wc -l)" = 3 ] || fail "expected 3 kept parts: $(ls "$W/kept")"
  cat "$W"/kept/kept-*.jsonl | cmp -s - "$T/want.jsonl" || fail "$2: the kept documents differ from one process"
  cat "$W"/removed/removed-*.jsonl | cmp -s - "$T/want.rm" || fail "$2: the removed lists differ"
  cmp -s "$W/summary.json" "$T/want.json" || fail "$2: the summary differs: $(cat "$W/summary.json")"
  [ -s "$W/summary.svg" ] || fail "$2: no plot"
}
N=3 M=4 OUT=$T/run WAIT=1 "$EX/submit.sh" dedup > "$T/submit1.log" 2>&1 ||
  fail "dedup chain failed: $(cat "$T/submit1.log"; tail -n 3 "$T"/run/logs/*)"
check "$T/run" "first run"
for r in 0 1 2; do
  [ "$(wc -l < "$T/run/dedup/kept/kept-0000$r-of-00003.jsonl")" -gt 10 ] || fail "kept part $r is (nearly) empty: no real split"
done

# ---- resume: two outputs lost, the same chain submitted again
rm "$T/run/dedup/sigs/sig-00001-of-00003.mhsig" "$T/run/dedup/kept/kept-00002-of-00003.jsonl"
N=3 M=4 OUT=$T/run WAIT=1 "$EX/submit.sh" dedup > "$T/submit2.log" 2>&1 ||
  fail "re-submission failed: $(cat "$T/submit2.log")"
check "$T/run" "after the resume"
ids=$(sed -n 's/.*signatures \([0-9]*\) .*buckets \([0-9]*\) .*cluster \([0-9]*\), filter \([0-9]*\).*/\1 \2 \3 \4/p' "$T/submit2.log")
read -r js jb jc jf <<< "$ids"
[ -n "$jf" ] || fail "no job ids in: $(cat "$T/submit2.log")"
L=$T/run/logs
for f in "$L/sluice-dedup-signatures-${js}_0.log" "$L/sluice-dedup-signatures-${js}_2.log" \
  "$L/sluice-dedup-buckets-${jb}_0.log" "$L/sluice-dedup-cluster-${jc}.log" "$L/sluice-dedup-filter-${jf}_0.log"; do
  grep -q 'exists and verifies; nothing to do' "$f" || fail "$(basename "$f") ran again: $(cat "$f")"
done
for f in "$L/sluice-dedup-signatures-${js}_1.log" "$L/sluice-dedup-filter-${jf}_2.log"; do
  grep -q 'nothing to do' "$f" && fail "$(basename "$f"): the lost output was not made again"
  grep -q 'done' "$f" || fail "$(basename "$f") did not finish: $(cat "$f")"
done
echo "slurm_dedup: ok"

# A real one-node Slurm cluster (scripts/slurm-local, Debian's
# slurm-wlm + munge from scripts/install-deps): the examples/slurm text
# pipeline (`read --part slurm | tokenize bpe` per task, then the shard job
# with --dependency=afterok) as a 4-task array gives a shard directory
# byte-identical to the single-process run; with one task cancelled mid-run
# (scancel) and the array re-submitted, only that part runs again and the
# result is the same; a scoring array plus one global `filter --keep-pct`
# keeps exactly the documents the single-process run keeps.
# Without root (slurmd and munged need it here) the test FAILS, saying so.
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
EX=$SRC/examples/slurm
PATH=$PATH:/usr/sbin
[ "$(id -u)" = 0 ] || fail "not root: this test starts slurmctld, slurmd and munged (scripts/slurm-local), which needs root; run make test as root (CI does)"
for b in sbatch squeue scancel munged slurmctld slurmd; do
  command -v "$b" > /dev/null || fail "$b not found: run scripts/install-deps (slurm-wlm, munge)"
done

C=$T/cluster
export SLURM_LOCAL_PORT=$((20000 + RANDOM % 20000))
trap '"$SRC/scripts/slurm-local" stop "$C" > /dev/null 2>&1 || true' EXIT
"$SRC/scripts/slurm-local" start "$C" > "$T/start.log" 2>&1 || fail "Slurm did not start: $(tail -n 5 "$T/start.log")"
export SLURM_CONF=$C/slurm.conf

# wait_job ID: until the job (all its array tasks) has left the queue
wait_job() {
  for _ in $(seq 1 600); do
    [ -z "$(squeue -h -j "$1" 2> /dev/null)" ] && return 0
    sleep 0.2
  done
  fail "job $1 still in the queue after 120 s: $(squeue -j "$1")"
}

# ---- the corpus: JSON Lines with and without ids, compressed, plain text lines
B=$DATA/bpe
mkdir "$T/corpus"
awk 'NR <= 120' "$B/corpus.jsonl" > "$T/corpus/a.jsonl"
sed -n 's/^{"id": "[^"]*", /{/p' "$B/corpus.jsonl" > "$T/corpus/b.jsonl"
awk 'NR > 120' "$B/corpus.jsonl" | gzip -c > "$T/corpus/c.jsonl.gz"
export SLUICE=$S INPUTS="$T/corpus/*" TOKENIZER=$B/neox-tokenizer.json BPE_OPTS=--append-eos
# the examples as typed: no CPU count or GRES given (submit.sh fits them to the node)
export SBATCH_OPTS=
export SHARD_OPTS="--seq-len 64 --shuffle --seed 3 --val-fraction 0.1 --max-file-bytes 8192"
# the single-process run
# shellcheck disable=SC2086
"$S" read $INPUTS | "$S" tokenize bpe -q -t "$TOKENIZER" $BPE_OPTS -o "$T/whole.tok"
# shellcheck disable=SC2086
"$S" shard -q $SHARD_OPTS "$T/whole.tok" -o "$T/want"

# ---- 1. the array and the dependent shard job (submit.sh: sbatch --wait on the shard job)
N=4 OUT=$T/run1 WAIT=1 "$EX/submit.sh" text > "$T/submit1.log" 2>&1 ||
  fail "pipeline failed: $(cat "$T/submit1.log"; tail -n 5 "$T"/run1/logs/*)"
[ "$(ls "$T/run1/tokens" | wc -l)" = 4 ] || fail "expected 4 part files: $(ls "$T/run1/tokens")"
for r in 0 1 2 3; do
  [ -n "$("$S" cat "$T/run1/tokens/tokens-0000$r-of-00004.tok" | head -n 1)" ] || fail "part $r is empty: no real split"
done
diff -r "$T/want" "$T/run1/shards" || fail "the 4-task array's shards differ from the single-process run"
# every task logs its progress (--progress: a summary line at least), so does the shard job
for f in "$T"/run1/logs/sluice-text-*.log; do
  grep -q '^tokenize bpe: .* docs' "$f" || fail "no progress in $f: $(cat "$f")"
done
grep -q '^shard: .* docs' "$T"/run1/logs/sluice-shard-*.log || fail "no progress in the shard job's log"
grep -q 'cpus-per-task=' "$T/submit1.log" || fail "submit.sh did not say what it asked for: $(cat "$T/submit1.log")"

# ---- 2. one task cancelled mid-run, then the array submitted again
# Task 2's read stalls after some output (its tokenize has a temporary open)
# until the test cancels it.
cat > "$T/stall-sluice" << EOF
#!/bin/bash
if [ "\$1" = read ] && [ "\$SLURM_ARRAY_TASK_ID" = 2 ] && [ -e "$T/stall" ]; then
  "$S" "\$@" | head -c 3000
  touch "$T/stalled"
  sleep 300
fi
exec "$S" "\$@"
EOF
chmod +x "$T/stall-sluice"
touch "$T/stall"
mkdir -p "$T/run2/logs"
SLUICE=$T/stall-sluice OUT=$T/run2 sbatch --wait --parsable --export=ALL $SBATCH_OPTS --array=0-3 \
  --output="$T/run2/logs/%x-%A_%a.log" "$EX/text.sh" > "$T/jid" 2> "$T/sbatch2.err" &
waiter=$!
for _ in $(seq 1 300); do [ -e "$T/stalled" ] && break; sleep 0.2; done
[ -e "$T/stalled" ] || fail "task 2 never started: $(cat "$T/sbatch2.err")"
jid=$(cut -d';' -f1 "$T/jid")
for _ in $(seq 1 100); do ls "$T/run2/tokens/" | grep -q 'tokens-00002-of-00004.tok.tmp' && break; sleep 0.1; done
ls "$T/run2/tokens/" | grep -q 'tokens-00002-of-00004.tok.tmp' || fail "task 2 is not mid-run (no temporary output)"
scancel "${jid}_2"
if wait "$waiter"; then fail "sbatch --wait returned 0 with a cancelled task"; fi
wait_job "$jid"
[ ! -e "$T/run2/tokens/tokens-00002-of-00004.tok" ] || fail "the cancelled part has an output"
ls "$T/run2/tokens/" | grep -q tmp && fail "temporaries left: $(ls "$T/run2/tokens")"
for r in 0 1 3; do [ -s "$T/run2/tokens/tokens-0000$r-of-00004.tok" ] || fail "part $r missing after the first run"; done
# the shard job refuses the incomplete directory
"$S" shard -q $SHARD_OPTS "$T/run2/tokens" -o "$T/run2/partial" 2> "$T/err" && fail "shard of 3 of 4 parts succeeded"
grep -q 'part 2 of 4 is missing' "$T/err" || fail "the missing part is not named: $(cat "$T/err")"
stat -c '%i %Y' "$T"/run2/tokens/tokens-0000[013]-of-00004.tok > "$T/before"
rm "$T/stall"
sleep 1 # a re-written file would get a newer mtime
N=4 OUT=$T/run2 WAIT=1 "$EX/submit.sh" text > "$T/submit2.log" 2>&1 ||
  fail "re-submission failed: $(cat "$T/submit2.log")"
stat -c '%i %Y' "$T"/run2/tokens/tokens-0000[013]-of-00004.tok | cmp - "$T/before" || fail "finished parts were rewritten"
jid2=$(sed -n 's/.*array job \([0-9]*\).*/\1/p' "$T/submit2.log")
[ -n "$jid2" ] || fail "no array job id in: $(cat "$T/submit2.log")"
for r in 0 1 3; do
  grep -q 'exists and verifies; nothing to do' "$T/run2/logs/sluice-text-${jid2}_$r.log" ||
    fail "task $r ran again: $(cat "$T/run2/logs/sluice-text-${jid2}_$r.log")"
done
grep -q 'nothing to do' "$T/run2/logs/sluice-text-${jid2}_2.log" && fail "the cancelled part was not re-run"
grep -q 'part 2 of 4' "$T/run2/logs/sluice-text-${jid2}_2.log" || fail "task 2 did not finish"
diff -r "$T/want" "$T/run2/shards" || fail "after the resume, the shards differ from the single-process run"

# ---- 3. scoring as an array (no GPU node here: submit.sh asks for no GRES, and
# the script scores on the CPU), then one filter with global percentile cutoffs
M=$DATA/model/ssm_f32
awk 'BEGIN { srand(5); for (i = 0; i < 60; i++) { n = 2 + int(rand() * 40); printf "{\"id\":\"s%02d\",\"ids\":[", i;
  for (j = 0; j < n; j++) printf "%s%d", j ? "," : "", int(rand() * 77); print "]}" } }' > "$T/ids.jsonl"
mkdir -p "$T/run3/tokens"
"$S" tokenize ids --vocab-size 77 "$T/ids.jsonl" -o "$T/ids.tok"
for r in 0 1 2 3; do
  "$S" tokenize ids --vocab-size 77 --part "$r/4" "$T/ids.jsonl" -o "$T/run3/tokens/ids-$r-of-4.tok"
done
"$S" score -q -m "$M" --device cpu --to-stream "$T/ids.tok" | "$S" filter -q --keep-pct 20:80 --field nll -o "$T/kept.want"
N=4 OUT=$T/run3 MODEL=$M SCORE_OPTS= DEVICE=auto FILTER_OPTS="--keep-pct 20:80 --field nll" WAIT=1 \
  "$EX/submit.sh" score > "$T/submit3.log" 2>&1 || fail "scoring pipeline failed: $(cat "$T/submit3.log" "$T"/run3/logs/*)"
[ "$(ls "$T/run3/scored" | wc -l)" = 4 ] || fail "expected 4 scored parts: $(ls "$T/run3/scored"; cat "$T/submit3.log" "$T"/run3/logs/*)"
# the same documents (ids and tokens; the scores themselves may differ in the
# last digits: a document's float sums depend on what it was batched with)
docs() { "$S" cat "$1" | python3 -c 'import json, sys
for l in sys.stdin: d = json.loads(l); print(d["id"], d["ids"])'; }
docs "$T/kept.want" > "$T/kept.want.docs"
docs "$T/run3/kept.tok" | cmp - "$T/kept.want.docs" || fail "the array + global filter keeps other documents than one process"
# the tasks' score summaries, merged by filter --cutoffs-from (filter.sh
# CUTOFFS=summaries), keep the same documents here: no nll lies within
# relative 2^-10 of the cutoffs (checked by tests/cli/filter_cutoffs.sh in general)
[ "$(ls "$T/run3/summaries" | wc -l)" = 4 ] || fail "expected 4 score summaries: $(ls "$T/run3/summaries")"
SLUICE=$S OUT=$T/run3 FILTER_OPTS="--keep-pct 20:80 --field nll" CUTOFFS=summaries "$EX/filter.sh" > /dev/null 2>&1 ||
  fail "filter.sh CUTOFFS=summaries failed"
docs "$T/run3/kept.tok" | cmp - "$T/kept.want.docs" || fail "--cutoffs-from the tasks' summaries keeps other documents"
kept=$(wc -l < "$T/kept.want.docs")
[ "$kept" -gt 20 ] && [ "$kept" -lt 60 ] || fail "filter kept $kept of 60"
echo "slurm_array: ok"

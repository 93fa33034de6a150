# Kills with the same pid: every run is pid 1 of its
# own pid namespace (unshare -fp), as in a container or a Kubernetes indexed
# job, so the pid in a temporary's name says nothing about whether its
# writer lives. SIGKILL, SIGTERM and SIGINT land while a stage writes a file
# (cat), a directory (shard), replaces a directory (shard --force: the old
# tree is being removed) and spools standard input (filter --keep-pct); then
# the same command runs again, as pid 1 again. It must succeed, give the
# output of an undisturbed run, and nothing else may be left: no NAME.tmp.*,
# no NAME.old.*, nothing in $TMPDIR.
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
cd "$T"
if ! unshare -fp true 2>/dev/null; then
  echo "skipping: cannot make a pid namespace here (unshare -fp needs root or user namespaces)" >&2
  exit 0
fi
export TMPDIR=$T/tmp
mkdir -p "$TMPDIR"

awk 'BEGIN { for (i = 0; i < 3000; i++) { n = 1 + (i * 37) % 150; printf "{\"id\":\"d%d\",\"ppl\":%d.5,\"ids\":[", i, (i * 7919) % 1000;
      for (k = 0; k < n; k++) printf "%s%d", (k ? "," : ""), 2 + (i * 131 + k * 7) % 997; print "]}" } }' > docs.jsonl
$S tokenize ids -q --vocab-size 1000 --eos 1 docs.jsonl -o in.tok
head -c 4000 in.tok > head.tok # a header and some records, no trailer: the reader waits for more
$S cat in.tok -o ref.jsonl
$S shard -q --seq-len 64 in.tok -o ref.shards
$S filter -q --keep-pct 10:90 in.tok -o ref.filtered.tok

# ns CMD...: runs CMD as pid 1 of a new pid namespace (in the background:
# $ns_pid is unshare's pid, $child the stage's pid as seen from here, empty
# when the stage has already ended: a rerun of a small input can end before
# the first look, and the caller's wait sees how). ("|| true": once unshare
# has ended, its /proc entry is gone, and a failed cat in the pipeline would
# end this script under -e -o pipefail without a word.)
ns() {
  unshare -fp --kill-child "$@" & ns_pid=$!
  child=""
  for i in $(seq 200); do
    child=$(cat /proc/$ns_pid/task/$ns_pid/children 2>/dev/null | awk '{print $1}' || true)
    [ -n "$child" ] && break
    kill -0 $ns_pid 2>/dev/null || return 0
    sleep 0.01
  done
  [ -n "$child" ] || fail "no process in the namespace: $*"
}
# ns_live CMD...: ns for a stage held by a FIFO, which cannot have ended
ns_live() {
  ns "$@"
  [ -n "$child" ] || fail "the stage ended at once: $*"
}
debris() { # what no run may leave
  find . -name '*.tmp.*' -o -name '*.old.*' | grep -v '^\./tmp$' || true
  ls -A "$TMPDIR"
}
settle() { # SIG [may-finish]: sends it to the stage, waits, checks the stage is gone
  kill -s "$1" "$child" 2>/dev/null || [ "${2:-}" = may-finish ] || fail "SIG$1: the stage (pid $child) ended before the signal"
  set +e; wait $ns_pid; rc=$?; set -e
  [ $rc -ne 0 ] || [ "${2:-}" = may-finish ] || fail "SIG$1: the stage exited 0"
}

for sig in KILL TERM INT; do
  # a file: cat from a FIFO that holds the stage mid-way
  rm -f fifo out.jsonl; mkfifo fifo
  ns_live "$S" cat fifo -o out.jsonl 2>/dev/null
  exec 7>fifo; cat head.tok >&7
  for i in $(seq 200); do ls out.jsonl.tmp.* >/dev/null 2>&1 && break; sleep 0.02; done
  ls out.jsonl.tmp.1.* >/dev/null 2>&1 || fail "SIG$sig cat: no out.jsonl.tmp.1.* (is the stage pid 1?)"
  settle $sig; exec 7>&-
  [ $sig != KILL ] || ls out.jsonl.tmp.1.* >/dev/null 2>&1 || fail "SIGKILL cannot clean up, yet no temporary is left"
  ns "$S" cat in.tok -o out.jsonl 2>err; set +e; wait $ns_pid; rc=$?; set -e
  [ $rc -eq 0 ] || fail "SIG$sig cat: the rerun as pid 1 failed ($rc): $(cat err)"
  cmp -s out.jsonl ref.jsonl || fail "SIG$sig cat: the rerun differs"
  [ -z "$(debris)" ] || fail "SIG$sig cat: left $(debris)"

  # a directory: shard from a FIFO
  rm -rf fifo out.shards; mkfifo fifo
  ns_live "$S" shard -q --seq-len 64 fifo -o out.shards 2>/dev/null
  exec 7>fifo; cat head.tok >&7
  for i in $(seq 200); do [ -d out.shards.tmp.1 ] && break; sleep 0.02; done
  [ -d out.shards.tmp.1 ] || fail "SIG$sig shard: no out.shards.tmp.1/"
  settle $sig; exec 7>&-
  ns "$S" shard -q --seq-len 64 in.tok -o out.shards 2>err; set +e; wait $ns_pid; rc=$?; set -e
  [ $rc -eq 0 ] || fail "SIG$sig shard: the rerun as pid 1 failed ($rc): $(cat err)"
  diff -r out.shards ref.shards >/dev/null || fail "SIG$sig shard: the rerun differs"
  [ -z "$(debris)" ] || fail "SIG$sig shard: left $(debris)"

  # replacing a directory: the signal comes while the old tree (many files,
  # so that removing it takes a while) is being removed
  rm -rf out.shards; mkdir out.shards
  (cd out.shards && seq 20000 | xargs touch)
  ns "$S" shard -q --force --seq-len 64 in.tok -o out.shards 2>/dev/null
  for i in $(seq 20000); do [ -e out.shards.old.1 ] && break; done
  settle $sig may-finish
  if [ $sig != KILL ]; then # acted on once the replacement is complete
    diff -r out.shards ref.shards >/dev/null || fail "SIG$sig shard --force: out.shards is not the new tree"
    [ -z "$(debris)" ] || fail "SIG$sig shard --force: left $(debris)"
  fi
  ns "$S" shard -q --force --seq-len 64 in.tok -o out.shards 2>err; set +e; wait $ns_pid; rc=$?; set -e
  [ $rc -eq 0 ] || fail "SIG$sig shard --force: the rerun as pid 1 failed ($rc): $(cat err)"
  diff -r out.shards ref.shards >/dev/null || fail "SIG$sig shard --force: the rerun differs"
  [ -z "$(debris)" ] || fail "SIG$sig shard --force: left $(debris)"

  # a spool: filter --keep-pct reads standard input twice
  rm -f fifo; mkfifo fifo
  ns_live sh -c '"$1" filter -q --keep-pct 10:90 < fifo > out.filtered.tok' sh "$S" 2>/dev/null
  exec 7>fifo; cat head.tok >&7
  sh_pid=$child child="" # the stage under sh
  for i in $(seq 200); do
    child=$(cat /proc/$sh_pid/task/$sh_pid/children 2>/dev/null | awk '{print $1}' || true)
    [ -n "$child" ] && break; sleep 0.02
  done
  [ -n "$child" ] || fail "SIG$sig filter: no stage under sh"
  sleep 0.3 # (spooling what it has read)
  settle $sig; exec 7>&-
  [ -z "$(ls -A "$TMPDIR")" ] || fail "SIG$sig filter: the spool is left: $(ls -A "$TMPDIR")"
  ns sh -c '"$1" filter -q --keep-pct 10:90 < in.tok > out.filtered.tok' sh "$S" 2>err; set +e; wait $ns_pid; rc=$?; set -e
  [ $rc -eq 0 ] || fail "SIG$sig filter: the rerun as pid 1 failed ($rc): $(cat err)"
  cmp -s out.filtered.tok ref.filtered.tok || fail "SIG$sig filter: the rerun differs"
  [ -z "$(debris)" ] || fail "SIG$sig filter: left $(debris)"
done

# what a killed --force leaves (DIR.old.<pid>/, unlocked) is removed by the
# next run writing DIR, with or without --force
sh -c 'exit 0' & dead=$!; wait $dead
mkdir out.shards.old.$dead && touch out.shards.old.$dead/x
expect_fail 1 'out.shards: already exists' -- "$S" shard --seq-len 64 in.tok -o out.shards
grep -q "removed stale temporary out.shards.old.$dead/ " "$T/err" || fail "old tree not reported: $(cat "$T/err")"
[ -z "$(debris)" ] || fail "left $(debris)"
echo OK

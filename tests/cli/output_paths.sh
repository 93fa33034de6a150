# Output paths (docs/cli.md "Output"): -o DIR/ equals -o DIR; missing parents are
# created for every output; -o=PATH means PATH; a failed or interrupted stage
# leaves nothing behind (no temporary, no empty directory it created); stale
# temporaries of a dead process are removed by the next run and reported.
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
cd "$T"

awk 'BEGIN { for (i = 0; i < 200; i++) { n = 1 + (i * 37) % 150; printf "{\"id\":\"d%d\",\"ids\":[", i;
      for (k = 0; k < n; k++) printf "%s%d", (k ? "," : ""), 2 + (i * 131 + k * 7) % 997; print "]}" } }' >docs.jsonl
$S tokenize ids --vocab-size 1000 --eos 1 docs.jsonl -o in.tok

# -o DIR/ and -o DIR give the same directory, and nothing else appears beside it
$S shard --seq-len 64 in.tok -o plain
$S shard --seq-len 64 in.tok -o slash/
[ -f slash/manifest.json ] || fail "shard -o slash/ wrote no manifest"
diff -r plain slash >/dev/null || fail "-o DIR/ differs from -o DIR"
$S shard --seq-len 64 --force in.tok -o slash//
diff -r plain slash >/dev/null || fail "--force -o DIR// differs"
$S merge plain slash -o merged/
[ -f merged/manifest.json ] || fail "merge -o merged/ wrote no manifest"
$S merge --force plain slash -o merged/
ls -a | grep -q '\.tmp\.\|\.old\.' && fail "temporaries left beside the outputs: $(ls -a)"
# into missing parents: shard, merge, export megatron, plain files; relative and absolute
$S shard --seq-len 64 in.tok -o a/b/c/
[ -f a/b/c/manifest.json ] || fail "shard did not create parents"
$S export megatron in.tok -o mega/deep/corpus
[ -f mega/deep/corpus.bin ] && [ -f mega/deep/corpus.idx ] || fail "export megatron did not create parents"
$S cat in.tok -o "$T/x/y/in.jsonl"
[ -s x/y/in.jsonl ] || fail "cat -o did not create parents"
# -o=PATH is PATH (no directory named '='), like --output=PATH
$S cat in.tok -o=eq/in.jsonl
cmp eq/in.jsonl x/y/in.jsonl || fail "-o=PATH"
[ ! -e '=eq' ] || fail "-o=PATH created '=eq'"
$S shard --seq-len 64 in.tok -o=eqdir
diff -r plain eqdir >/dev/null || fail "-o=DIR differs"
$S cat in.tok --output=eq2.jsonl && cmp eq2.jsonl x/y/in.jsonl || fail "--output=PATH"
# a file output named like a directory is an error, not a hidden file in it
expect_fail 1 'not a file name' -- $S cat in.tok -o newdir/
[ ! -e newdir ] || fail "newdir/ created by a failed file output"

# failures leave nothing: not the output, not a temporary, not the parents they created
printf 'garbage that is not a token stream\n' >bad.tok
expect_fail 1 'bad.tok' -- $S shard --seq-len 64 bad.tok -o f1/g/h
[ ! -e f1 ] || fail "failed shard left $(find f1)"
expect_fail 1 'bad.tok' -- $S export megatron bad.tok -o f2/g/corpus
[ ! -e f2 ] || fail "failed export left $(find f2)"
expect_fail 1 'bad.tok' -- $S cat bad.tok -o f3/g/out.jsonl
[ ! -e f3 ] || fail "failed cat left $(find f3)"
cp -r plain broken && printf '\377\377' | dd of=broken/train-00000.tokens bs=1 seek=10 conv=notrunc 2>/dev/null
expect_fail 1 'broken' -- $S merge plain broken -o f4/
[ ! -e f4 ] || fail "failed merge left $(find f4)"
mkdir keep && expect_fail 1 'bad.tok' -- $S cat bad.tok -o keep/out.jsonl
[ -d keep ] && [ -z "$(ls -A keep)" ] || fail "an existing directory must stay, and stay empty"
ls -a | grep -q '\.tmp\.' && fail "temporaries left: $(ls -a)"

# signals: a stage killed by SIGINT/SIGTERM/SIGHUP while writing removes its
# temporaries and the directories it created. The input is a FIFO held open,
# so the stage is certainly mid-way (header read, output temporaries open).
head -c 400 in.tok >head.tok   # a header and some records, no trailer
for sig in INT TERM HUP; do
  for stage in shard export cat; do
    rm -f fifo; mkfifo fifo
    case $stage in
      shard) $S shard --seq-len 64 fifo -o "sig$sig$stage/sub/dir" 2>/dev/null & ;;
      export) $S export megatron fifo -o "sig$sig$stage/sub/corpus" 2>/dev/null & ;;
      cat) $S cat fifo -o "sig$sig$stage/sub/out.jsonl" 2>/dev/null & ;;
    esac
    pid=$!
    exec 7>fifo
    cat head.tok >&7
    # wait until the temporary exists (the stage is writing)
    for i in $(seq 100); do
      [ -n "$(find "sig$sig$stage" -name '*.tmp.*' 2>/dev/null)" ] && break; sleep 0.05
    done
    [ -n "$(find "sig$sig$stage" -name '*.tmp.*' 2>/dev/null)" ] || fail "$stage: no temporary appeared"
    kill -s $sig $pid
    set +e; wait $pid; rc=$?; set -e
    exec 7>&-
    [ $rc -ne 0 ] || fail "$stage survived SIG$sig"
    [ ! -e "sig$sig$stage" ] || fail "SIG$sig during $stage left: $(find "sig$sig$stage")"
  done
done

# SIGKILL cannot clean up; the next run writing the same name removes what is
# left and says so; a live writer's temporary (locked) is never touched.
rm -f fifo; mkfifo fifo
$S shard --seq-len 64 fifo -o killed 2>/dev/null & pid=$!
exec 7>fifo; cat head.tok >&7
for i in $(seq 100); do [ -d "killed.tmp.$pid" ] && break; sleep 0.05; done
[ -d "killed.tmp.$pid" ] || fail "no killed.tmp.$pid"
kill -KILL $pid; set +e; wait $pid; set -e; exec 7>&-
[ -d "killed.tmp.$pid" ] || fail "SIGKILL should leave the temporary (nothing can remove it)"
$S shard --seq-len 64 in.tok -o killed 2>err
grep -q "removed stale temporary killed.tmp.$pid/ (left by process $pid" err || fail "stale directory not reported: $(cat err)"
[ ! -e "killed.tmp.$pid" ] || fail "stale directory not removed"
diff -r plain killed >/dev/null || fail "the run after the stale temporary differs"
# a stale file temporary of a dead process (pid of a finished child)
sh -c 'exit 0' & dead=$!; wait $dead
echo junk >"out.jsonl.tmp.$dead.0"
$S cat in.tok -o out.jsonl 2>err
grep -q "removed stale temporary out.jsonl.tmp.$dead.0 (left by process $dead" err || fail "stale file not reported: $(cat err)"
[ ! -e "out.jsonl.tmp.$dead.0" ] || fail "stale file not removed"
# -q silences the report, not the removal
echo junk >"out.jsonl.tmp.$dead.1"
$S cat -q in.tok -o out.jsonl 2>err
[ ! -s err ] || fail "-q printed: $(cat err)"
[ ! -e "out.jsonl.tmp.$dead.1" ] || fail "stale file not removed under -q"
# the lock decides, not the pid (pids repeat, in containers above all): a locked temporary is
# left alone whatever its pid (a live writer, perhaps on another host of a
# shared disk), an unlocked one is removed even when a process of its pid
# runs (this shell here; in a container, the pid 1 of the next run)
echo live >"out.jsonl.tmp.$$.0"
sh -c 'exit 0' & dead2=$!; wait $dead2
echo locked >"out.jsonl.tmp.$dead2.0"
echo locked >"out.jsonl.tmp.$$.7"
flock "out.jsonl.tmp.$dead2.0" flock "out.jsonl.tmp.$$.7" $S cat in.tok -o out.jsonl 2>err
[ ! -e "out.jsonl.tmp.$$.0" ] || fail "an unlocked temporary of a running pid was kept"
grep -q "removed stale temporary out.jsonl.tmp.$$.0 " err || fail "not reported: $(cat err)"
[ -e "out.jsonl.tmp.$dead2.0" ] && [ -e "out.jsonl.tmp.$$.7" ] || fail "a locked temporary was removed"
[ "$(wc -l < err)" -eq 1 ] || fail "unexpected report: $(cat err)"
rm "out.jsonl.tmp.$dead2.0" "out.jsonl.tmp.$$.7"
# names that only look alike stay
echo x >out.jsonl.tmp.notapid; echo y >other.jsonl.tmp.$dead.0
$S cat in.tok -o out.jsonl
[ -e out.jsonl.tmp.notapid ] && [ -e other.jsonl.tmp.$dead.0 ] || fail "unrelated files removed"
echo OK

# Every stage checks its output before it reads its first input byte:
# an existing shard directory without --force, an output whose
# parent cannot be written, a directory where a file goes. The input here is a
# FIFO that is held open and never written: a stage that read first would
# block (the test's timeout says 124); a stage that checks first fails at once.
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
cd "$T"
printf '{"id":"a","ids":[1,2,3]}\n' >d.jsonl
$S tokenize ids --vocab-size 10 --eos 0 d.jsonl -o c.tok
$S shard --seq-len 8 c.tok -o shards
# an output whose parent cannot be written: under a read-only directory, or
# (as root, who may write anywhere) under a regular file
mkdir ro && chmod 555 ro
if [ "$(id -u)" -ne 0 ]; then BAD=ro NW='cannot write into ro'; else BAD=d.jsonl/sub NW='d.jsonl is not a directory'; fi
mkdir adir
mkfifo pipe
exec 3<>pipe # a writer that never writes: reading blocks, opening does not

quick() { # quick PATTERN -- command... (stdin is the silent FIFO)
  local pat=$1; shift 2
  set +e; timeout 10 "$@" <pipe >"$T/out" 2>"$T/err"; local rc=$?; set -e
  [ $rc -ne 124 ] || fail "waited for input before checking its output: $*"
  [ $rc -eq 1 ] || fail "expected exit 1, got $rc: $* ($(cat "$T/err"))"
  grep -Eq -- "$pat" "$T/err" || fail "stderr of '$*' does not match /$pat/: $(cat "$T/err")"
  [ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line: $(cat "$T/err")"
}
quick 'shards: already exists \(--force replaces it\)' -- $S shard --seq-len 8 - -o shards
quick 'shards: already exists' -- $S shard --seq-len 8 -o shards
quick "$NW" -- $S shard --seq-len 8 - -o $BAD/new
quick 'adir: is a directory' -- $S pack --seq-len 8 - -o adir
quick "$NW" -- $S pack --seq-len 8 - -o $BAD/x.tok
quick "$NW" -- $S export megatron - -o $BAD/corpus
quick 'adir.bin: is a directory' -- bash -c "mkdir adir.bin; exec $S export megatron - -o adir"
quick "$NW" -- $S cat - -o $BAD/x.jsonl
quick "$NW" -- $S read - -o $BAD/x.jsonl
quick "$NW" -- $S tokenize ids --vocab-size 10 - -o $BAD/x.tok
quick "$NW" -- $S tokenize char - -o $BAD/x.tok
quick "$NW" -- $S tokenize dna - -o $BAD/x.tok
quick "$NW" -- $S stats - -o $BAD/x.json
quick "$NW" -- $S filter --max 10 - -o $BAD/x.tok
quick "$NW" -- $S detokenize text - -o $BAD/x.txt
quick "$NW" -- $S dedup exact - -o $BAD/x.jsonl
quick "$NW" -- $S dedup lines --summary $BAD/s.json -
quick 'd.jsonl/x.tok: cannot create the file: d.jsonl is not a directory' -- $S pack --seq-len 8 - -o d.jsonl/x.tok
quick 'shards: already exists' -- $S merge shards shards -o shards
# --force and a writable parent: the same stages run
$S shard --seq-len 8 --force c.tok -o shards
[ -f shards/manifest.json ] || fail "--force did not replace the directory"
exec 3>&-

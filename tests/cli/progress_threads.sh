# Progress (docs/cli.md): with stderr not a terminal, --progress writes plain
# newline-terminated lines (no carriage returns, no escape codes) every
# SLUICE_PROGRESS_INTERVAL seconds and a final summary; single-input stages
# show a percentage; token stages count tokens (the totals equal what `stats`
# counts, not bytes of the in-memory representation); -q silences it.
# Threads: the default OpenMP wait policy is passive unless the user set one.
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
# a 6 Mbp random genome -> a token stream of 6M + 6 tokens in 6 documents
/usr/bin/python3 - "$T/g.fa" <<'PY'
import random, sys
r = random.Random(7)
with open(sys.argv[1], "w") as f:
    for k in range(6):
        f.write(f">chr{k}\n")
        s = "".join(r.choice("ACGT") for _ in range(1_000_000))
        for i in range(0, len(s), 80):
            f.write(s[i:i + 80] + "\n")
PY
"$S" tokenize dna --add-eos "$T/g.fa" -o "$T/g.tok"
total=$("$S" stats "$T/g.tok" | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)[\"document_tokens\"])")
[ "$total" = 6000006 ] || fail "stats counts $total tokens, expected 6000006: $("$S" stats "$T/g.tok" | head)"

check_plain() { # FILE STAGE: plain lines only, and a final summary
  if grep -q $'\r' "$1" || grep -q $'\033' "$1"; then fail "$2: terminal control bytes in a non-terminal log: $(od -c "$1" | head)"; fi
  [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] || fail "$2: last progress line not newline-terminated"
  grep -Eq "^$2: [0-9]+ [a-z]+  .* in [0-9.]+ s$" "$1" || fail "$2: no final summary line: $(cat "$1")"
}
export SLUICE_PROGRESS_INTERVAL=0.000001
"$S" cat --progress "$T/g.tok" >/dev/null 2>"$T/cat.err"
check_plain "$T/cat.err" cat
grep -Eq '^cat: [0-9]+ docs  .*  [0-9]+%  ETA [0-9]+:[0-9]{2}$' "$T/cat.err" || fail "cat: no percentage/ETA line: $(head -3 "$T/cat.err")"
"$S" shard --progress --seq-len 4096 "$T/g.tok" -o "$T/sh" 2>"$T/shard.err"
check_plain "$T/shard.err" shard
# 6000006 tokens -> "6.0M tokens" (the bytes of uint32 tokens would be 24 MB)
tail -n 1 "$T/shard.err" | grep -q '^shard: 6 docs  6.0M tokens  ' || fail "shard total: $(tail -n 1 "$T/shard.err")"
"$S" tokenize dna --progress --add-eos "$T/g.fa" -o /dev/null 2>"$T/dna.err"
check_plain "$T/dna.err" "tokenize dna"
tail -n 1 "$T/dna.err" | grep -q '^tokenize dna: 6 docs  6.0M tokens  .*tokens/s' || fail "tokenize dna: $(tail -n 1 "$T/dna.err")"
# multi-file stages that read documents: percent and ETA from the files' sizes
/usr/bin/python3 -c '
import json, random, sys
r = random.Random(3)
with open(sys.argv[1], "w") as f:
    for i in range(6000):
        f.write(json.dumps({"id": i, "text": " ".join(r.choice(["alpha", "beta", "gamma", "delta"]) for _ in range(150))}) + "\n")
' "$T/docs.jsonl"
"$S" read --progress --mem-budget 1M "$T/docs.jsonl" -o /dev/null 2>"$T/read.err"
check_plain "$T/read.err" read
grep -Eq '^read: [0-9]+ docs  .*  [0-9]+%  ETA [0-9]+:[0-9]{2}$' "$T/read.err" || fail "read: no percentage/ETA line: $(head -3 "$T/read.err")"
"$S" tokenize bpe --progress --mem-budget 1M -t "$DATA/bpe/gpt2" "$T/docs.jsonl" -o /dev/null 2>"$T/bpe.err"
check_plain "$T/bpe.err" "tokenize bpe"
grep -Eq '^tokenize bpe: [0-9]+ docs  .* tokens/s  [0-9]+%  ETA [0-9]+:[0-9]{2}$' "$T/bpe.err" || fail "tokenize bpe: no tokens/s with percentage/ETA: $(head -3 "$T/bpe.err")"
"$S" cat -q --progress "$T/g.tok" >/dev/null 2>"$T/q.err"
[ ! -s "$T/q.err" ] || fail "-q printed: $(cat "$T/q.err")"
unset SLUICE_PROGRESS_INTERVAL
# with the default interval (5 s) a short run prints only the summary
"$S" cat --progress "$T/g.tok" >/dev/null 2>"$T/one.err"
[ "$(wc -l <"$T/one.err")" = 1 ] || fail "default interval: $(cat "$T/one.err")"

# OpenMP waiting: passive by default (sluice starts again with it set: libgomp
# shows its settings at each start, the spin count 0 for passive, 300000 for its
# default), none needed on one thread, the user's choice otherwise
omp_starts_of() { # COMMAND INPUT ARGS...: the starts libgomp showed, and the last spin count
  local cmd=$1 input=$2
  shift 2
  # shellcheck disable=SC2086
  env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT OMP_DISPLAY_ENV=verbose "$S" $cmd -q "$@" "$input" -o /dev/null 2>"$T/omp.err"
  echo "$(grep -c 'OPENMP DISPLAY ENVIRONMENT BEGIN' "$T/omp.err") $(grep GOMP_SPINCOUNT "$T/omp.err" | tail -n 1 | tr -dc 0-9)"
}
omp_starts() { omp_starts_of "dedup exact" "$T/docs.jsonl" "$@"; }
# commands whose default is one thread (read; those with no parallel work)
# start once without -@, and again with -@ 2
for c in "read $T/docs.jsonl" "cat $T/g.tok" "stats $T/g.tok" "head $T/g.tok"; do
  # shellcheck disable=SC2086
  set -- $c
  [ "$(omp_starts_of "$1" "$2")" = "1 300000" ] || fail "$1 started again: $(omp_starts_of "$1" "$2")"
  [ "$(omp_starts_of "$1" "$2" -@ 2)" = "2 0" ] || fail "$1 -@ 2: $(omp_starts_of "$1" "$2" -@ 2)"
done
# read's one thread is its default only: -@ 2 gives it two (same output)
"$S" read -q "$T/docs.jsonl" -o "$T/r1.jsonl"
"$S" read -q -@ 2 "$T/docs.jsonl" -o "$T/r2.jsonl"
cmp -s "$T/r1.jsonl" "$T/r2.jsonl" || fail "read -@ 2 differs from read"
"$S" read --help | grep -q 'threads N .*default: 1 for this command' || fail "read --help: the default of -@"
"$S" tokenize text --help | grep -q 'threads N .*default: all cores' || fail "tokenize text --help: the default of -@"
[ "$(omp_starts)" = "2 0" ] || fail "default wait policy: $(omp_starts)"
[ "$(omp_starts -@ 2)" = "2 0" ] || fail "-@ 2: $(omp_starts -@ 2)"
for one in "-@ 1" -@1 "--threads 1" --threads=1 "-@ 2 -@ 1"; do
  # shellcheck disable=SC2086
  [ "$(omp_starts $one)" = "1 300000" ] || fail "$one started again: $(omp_starts $one)"
done
[ "$(omp_starts -@ 1 -@ 2)" = "2 0" ] || fail "-@ 1 -@ 2: the last one counts: $(omp_starts -@ 1 -@ 2)"
env OMP_WAIT_POLICY=active OMP_DISPLAY_ENV=true "$S" dedup exact -q "$T/docs.jsonl" 2>"$T/omp.err" >/dev/null
[ "$(grep -c "OMP_WAIT_POLICY = 'ACTIVE'" "$T/omp.err")" = 1 ] || fail "OMP_WAIT_POLICY=active: $(grep WAIT "$T/omp.err")"
# a re-executed run keeps its arguments, stdin and exit code
echo '{"id":"x","ids":[1,2]}' | env -u OMP_WAIT_POLICY "$S" tokenize ids --vocab-size 4 | "$S" cat | grep -q '"ids":\[1,2\]' || fail "stdin through the re-exec"
set +e; env -u OMP_WAIT_POLICY "$S" dedup exact "$T/missing.jsonl" 2>/dev/null; rc=$?; set -e
[ $rc = 1 ] || fail "exit code through the re-exec: $rc"
echo "progress and threads OK"

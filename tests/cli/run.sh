#!/usr/bin/env bash
# Runs end-to-end CLI tests. Each tests/cli/*.sh (except run.sh and lib.sh) is a
# bash script that exits non-zero on failure. Environment given to each:
#   SLUICE  the binary under test      SRC   the repository root
#   DATA    $SRC/tests/data            T     a fresh private temporary directory
# Tests run SLUICE_TEST_JOBS at a time (default: the number of CPUs, at most 4),
# except those that measure memory or time, kill processes or start the local
# Slurm daemons: they run afterwards, one at a time, on an otherwise idle run.
set -u
: "${SLUICE_BIN:?SLUICE_BIN must point at the sluice binary}"
: "${SLUICE_SRC:?SLUICE_SRC must point at the repository}"
jobs=${SLUICE_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
[ "$jobs" -gt 4 ] && jobs=4
[ "$jobs" -ge 1 ] || jobs=1
serial='^(memory_.*|shard_memory|kill_matrix|reliability|progress_threads|slurm_.*|cuda_.*|scale_skip|install_.*|examples_.*)\.sh$'
pass=0; fail=0; failed=()
res=$(mktemp -d "${TMPDIR:-/tmp}/sluice-tests.XXXXXX")

# one NAME_INDEX SCRIPT: runs one test, leaves its status and log in $res
one() {
  local i=$1 t=$2 tmp
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-test.XXXXXX")
  SLUICE="$SLUICE_BIN" SRC="$SLUICE_SRC" DATA="$SLUICE_SRC/tests/data" T="$tmp" \
    bash -eu -o pipefail "$t" >"$res/$i.log" 2>&1
  echo $? >"$res/$i.rc"
  rm -rf "$tmp"
}
# report I SCRIPT: prints the result of test I
report() {
  local i=$1 t=$2
  if [ "$(cat "$res/$i.rc")" = 0 ]; then
    pass=$((pass + 1)); echo "[  PASSED  ] $(basename "$t")"
  else
    fail=$((fail + 1)); failed+=("$(basename "$t")"); echo "[  FAILED  ] $(basename "$t")"
    sed 's/^/    | /' "$res/$i.log" | tail -n 40
  fi
}

par=() ser=()
for t in "$@"; do
  case "$(basename "$t")" in run.sh|lib.sh) continue;; esac
  if [[ "$(basename "$t")" =~ $serial ]] || [ "$jobs" -eq 1 ]; then ser+=("$t"); else par+=("$t"); fi
done

# the parallel ones, reported in the order given once each has finished
running=0 next=0
for i in "${!par[@]}"; do
  one "p$i" "${par[$i]}" &
  running=$((running + 1))
  if [ $running -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
  while [ $next -le "$i" ] && [ -e "$res/p$next.rc" ]; do report "p$next" "${par[$next]}"; next=$((next + 1)); done
done
wait
while [ $next -lt ${#par[@]} ]; do report "p$next" "${par[$next]}"; next=$((next + 1)); done
for i in "${!ser[@]}"; do one "s$i" "${ser[$i]}"; report "s$i" "${ser[$i]}"; done
rm -rf "$res"

echo "[==========] cli: $((pass+fail)) test script(s) run ($jobs at a time, ${#ser[@]} alone)."
echo "[  PASSED  ] $pass test script(s)."
if [ $fail -ne 0 ]; then echo "[  FAILED  ] $fail test script(s): ${failed[*]}"; exit 1; fi

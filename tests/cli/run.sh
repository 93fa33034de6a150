#!/usr/bin/env bash
# Runs end-to-end CLI tests. Each tests/cli/*.sh (except run.sh and lib.sh) is a
# bash script that exits non-zero on failure. Environment given to each:
#   SLUICE  the binary under test      SRC   the repository root
#   DATA    $SRC/tests/data            T     a fresh private temporary directory
set -u
: "${SLUICE_BIN:?SLUICE_BIN must point at the sluice binary}"
: "${SLUICE_SRC:?SLUICE_SRC must point at the repository}"
pass=0; fail=0; failed=()
for t in "$@"; do
  case "$(basename "$t")" in run.sh|lib.sh) continue;; esac
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-test.XXXXXX")
  if SLUICE="$SLUICE_BIN" SRC="$SLUICE_SRC" DATA="$SLUICE_SRC/tests/data" T="$tmp" \
       bash -eu -o pipefail "$t" >"$tmp.log" 2>&1; then
    pass=$((pass+1)); echo "[  PASSED  ] $(basename "$t")"
  else
    fail=$((fail+1)); failed+=("$(basename "$t")"); echo "[  FAILED  ] $(basename "$t")"
    sed 's/^/    | /' "$tmp.log" | tail -n 40
  fi
  rm -rf "$tmp" "$tmp.log"
done
echo "[==========] cli: $((pass+fail)) test script(s) run."
echo "[  PASSED  ] $pass test script(s)."
if [ $fail -ne 0 ]; then echo "[  FAILED  ] $fail test script(s): ${failed[*]}"; exit 1; fi

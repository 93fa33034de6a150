# Helpers for CLI tests: `. "$SRC/tests/cli/lib.sh"`.
fail() { echo "FAIL: $*" >&2; exit 1; }
# A command that stops a test under `set -e` without a FAIL line of its own
# (a tool's non-zero exit, a writer killed by a closed pipe) names its line.
trap '_lib_rc=$?; case $- in *e*) echo "FAIL: line $LINENO: a command exited $_lib_rc" >&2 ;; esac' ERR
# expect_fail EXPECTED_STATUS PATTERN -- command...: the command must exit with
# EXPECTED_STATUS ("nz" = any non-zero) and print a one-line error matching PATTERN
# (grep -E) on stderr; stdout is kept in $T/out, stderr in $T/err.
expect_fail() {
  local want=$1 pat=$2; shift 3
  set +e; "$@" >"$T/out" 2>"$T/err"; local rc=$?; set -e
  if [ "$want" = nz ]; then [ $rc -ne 0 ] || fail "expected failure, got 0: $*"
  else [ $rc -eq "$want" ] || fail "expected exit $want, got $rc: $* (stderr: $(cat "$T/err"))"; fi
  grep -Eq -- "$pat" "$T/err" || fail "stderr of '$*' does not match /$pat/: $(cat "$T/err")"
  [ "$(grep -c . "$T/err")" -ge 1 ] || fail "no error message: $*"
  grep -q 'Sanitizer\|Segmentation\|core dumped' "$T/err" && fail "crash: $(cat "$T/err")" || true
}
# no_file PATH: the output (and any temporary beside it) must not exist.
no_file() { [ ! -e "$1" ] || fail "$1 exists after a failed run"; ! ls "$1".tmp.* >/dev/null 2>&1 || fail "temporary $1.tmp.* left behind"; }

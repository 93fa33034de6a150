# The committed man pages are the binary's current help (regenerate with scripts/gen-man).
. "$SRC/tests/cli/lib.sh"
MAN_OUT="$T/man" "$SRC/scripts/gen-man" "$SLUICE" >/dev/null
diff -r "$SRC/docs/man" "$T/man" >/dev/null || fail "docs/man is stale: run scripts/gen-man ($(diff -rq "$SRC/docs/man" "$T/man" | head -3))"
# every subcommand has its page and its help exits 0
for p in "$T"/man/sluice-*.1; do n=$(basename "$p" .1); n=${n#sluice-}; "$SLUICE" help ${n//-/ } >/dev/null || fail "help $n"; done

# `make demo` (examples/demo.sh) runs and shows one <|endoftext|> per document in
# its text shards and Megatron dataset.
. "$SRC/tests/cli/lib.sh"
cd "$SRC"
SLUICE=$SLUICE DEMO_OUT="$T/demo" examples/demo.sh >"$T/demo.log" 2>&1 || fail "demo failed: $(tail -n 5 "$T/demo.log")"
grep -q "shards-text: 8 documents, each ends in one EOS 0" "$T/demo.log" || fail "demo: $(grep -A2 endoftext "$T/demo.log")"
grep -q "megatron-text: 8 documents, each ends in one EOS 0" "$T/demo.log" || fail "demo: $(grep -A2 endoftext "$T/demo.log")"

# Typos get a "did you mean": an unknown subcommand or
# long option names the nearest one (edit distance), and nothing when none is
# near; the exit status stays 2 (usage).
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
expect_fail 2 "unknown subcommand 'shrad'; did you mean 'shard'\?" -- $S shrad
expect_fail 2 "unknown subcommand 'tokenise'; did you mean 'tokenize'\?" -- $S tokenise bpe
expect_fail 2 "tokenize: unknown subcommand 'bep'; did you mean 'bpe'\?" -- $S tokenize bep
expect_fail 2 "did you mean 'megatron'\?" -- $S export megatorn
expect_fail 2 "help: unknown subcommand 'mearge'; did you mean 'merge'\?" -- $S help mearge
expect_fail 2 "unknown subcommand 'zzzzzz' \(see" -- $S zzzzzz
expect_fail 2 "'--seq-lenn'; did you mean '--seq-len'\?" -- $S shard --seq-lenn 8 -o x
expect_fail 2 "'--sufle'; did you mean '--shuffle'\?" -- $S shard --sufle -o x
expect_fail 2 "did you mean '--val-fraction'\?" -- $S shard --val-fration=0.1 -o x
expect_fail 2 "did you mean '--no-eos'\?" -- $S export megatron --no-eoss -o x
expect_fail 2 "did you mean '--append-eos'\?" -- $S tokenize bpe --apend-eos -t t.json
expect_fail 2 "did you mean '--split'\?" -- $S tokenize audio --splt 8:1:1
expect_fail 2 "did you mean '--progress'\?" -- $S read --progrss
expect_fail 2 "'--zzzzzzzz' \(see 'sluice help shard'\)" -- $S shard --zzzzzzzz
# no far-fetched hint: 3 letters of 5 changed ('--rows')
expect_fail 2 "unknown option or missing value: '--bogus' \(see 'sluice help dedup minhash'\)" -- $S dedup minhash --bogus
# every subcommand's own long options: one letter dropped is still found
for cmd in read "tokenize bpe" "tokenize dna" pack shard mix "export megatron" merge score filter; do
  opts=$($S help $cmd | grep -oE -- '--[a-z][a-z0-9-]{5,}' | sort -u)
  for o in $opts; do
    typo="${o:0:3}${o:4}" # the second letter dropped
    set +e; $S $cmd "$typo" >/dev/null 2>"$T/err"; set -e
    grep -q "did you mean '--" "$T/err" || fail "$cmd $typo: no suggestion: $(cat "$T/err")"
  done
done

# Conventions shared by every subcommand (docs/cli.md): `SUBCOMMAND --version`
# prints the version; usage errors exit 2 with the usage line, including the
# ones only known after the input's header is read (shard/pack without
# --seq-len); decoded audio files are named <index>-<id without its audio
# extension>.wav.
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
want="sluice $("$S" --version | awk '{print $2}')"
[ "$want" != "sluice " ] || fail "sluice --version printed nothing"
# --version -v: the same first line, then the CPU kernels' ISA (as this CPU's flags say it
# must be for a GCC x86-64 build), the thread count (-v obeys OMP_NUM_THREADS) and the BLAS
OMP_NUM_THREADS=3 "$S" --version -v >"$T/vv" || fail "--version -v exited $?"
[ "$(head -n 1 "$T/vv")" = "$want" ] || fail "--version -v first line: $(head -n 1 "$T/vv")"
grep -q '^cpu kernels: .*; 3 threads; BLAS: ' "$T/vv" || fail "--version -v: $(cat "$T/vv")"
if [ "$(uname -m)" = x86_64 ] && "$S" --version -v | grep -q 'x86-64-v'; then
  if grep -qw avx512bw /proc/cpuinfo && grep -qw avx512vl /proc/cpuinfo && grep -qw avx512dq /proc/cpuinfo; then
    grep -q 'x86-64-v4' "$T/vv" || fail "AVX-512 CPU, kernels not x86-64-v4: $(cat "$T/vv")"
  elif grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
    grep -q 'x86-64-v3' "$T/vv" || fail "AVX2 CPU, kernels not x86-64-v3: $(cat "$T/vv")"
  fi
fi
# every subcommand and sub-subcommand listed by `sluice --help`
"$S" --help | awk '/^subcommands:/{on=1;next} /^$/{on=0} on && /^  [a-z]/ && !/^    /{print $1} on && /^    [a-z]/{print $1" "$2}' >"$T/cmds"
[ "$(wc -l <"$T/cmds")" -ge 20 ] || fail "expected 20+ subcommands: $(cat "$T/cmds")"
while read -r c; do
  # shellcheck disable=SC2086
  out=$("$S" $c --version) || fail "'$c --version' exited $?"
  [ "$out" = "$want" ] || fail "'$c --version' printed '$out'"
done <"$T/cmds"

echo '{"id":"a","ids":[1,2,3]}' | "$S" tokenize ids --vocab-size 10 -o "$T/a.tok"
expect_fail 2 'seq-len L is required' -- "$S" shard "$T/a.tok" -o "$T/x"
grep -q '^usage: sluice shard' "$T/err" || fail "no usage line: $(cat "$T/err")"
no_file "$T/x"
expect_fail 2 'seq-len L is required' -- "$S" pack "$T/a.tok" -o "$T/p.tok"
no_file "$T/p.tok"
expect_fail 2 'needs --batch' -- "$S" shard --layout recurrent --seq-len 8 "$T/a.tok" -o "$T/x"
expect_fail 2 'only with --no-split' -- "$S" pack --long drop --seq-len 8 "$T/a.tok" -o "$T/p.tok"
expect_fail 2 'unknown option' -- "$S" read --no-such-option
expect_fail 2 'seq-len' -- "$S" shard --seq-len 12 "$T/a.tok" -o "$T/x"

# audio file names: the clip offset stays, the source's .wav does not repeat
"$S" tokenize audio --clip-len 8000 "$DATA/audio/alsa_Front_Center_16k.wav" -o "$T/c.tok"
"$S" detokenize audio "$T/c.tok" -o "$T/wav/"
ls "$T/wav" >"$T/names"
grep -q '^000001-.*alsa_Front_Center_16k@8000\.wav$' "$T/names" || fail "names: $(cat "$T/names")"
grep -q '\.wav@\|\.wav\.wav' "$T/names" && fail "doubled extension: $(cat "$T/names")" || true
# a failed decode into a new directory leaves no directory
head -c 300 "$T/c.tok" >"$T/cut.tok"
expect_fail 1 'cut.tok' -- "$S" detokenize audio "$T/cut.tok" -o "$T/wav2"
[ ! -e "$T/wav2" ] || fail "failed detokenize audio left $(ls -a "$T/wav2")"
echo OK

# library messages name fields (`seq_len`); the CLI says them as its flags
expect_fail 1 "^sluice: shard: --warmup 'double:100..512': offset 7: length 100 must be a positive multiple of 8$" -- "$S" shard --warmup double:100..512 "$T/a.tok" -o "$T/x"
expect_fail 1 '^sluice: shard: --seq-len 256 differs from the longest --warmup stage 512$' -- "$S" shard --warmup double:128..512 --seq-len 256 "$T/a.tok" -o "$T/x"
expect_fail 1 '^sluice: pack: --pad 50: not below the vocab size 10$' -- "$S" pack --seq-len 8 --pad 50 "$T/a.tok" -o "$T/p.tok"
expect_fail 2 'sluice: shard: --batch applies to --layout recurrent \(use --warmup \.\.\.,batch=B' -- "$S" shard --seq-len 8 --batch 2 "$T/a.tok" -o "$T/x"
no_file "$T/x"

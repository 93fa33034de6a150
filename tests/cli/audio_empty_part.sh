# A split/part selection that yields no documents is said, not silent:
# `tokenize audio --split 88:6:6 --part valid` of 4 files (the
# SaShiMi rule gives valid int(4*6/100) = 0 files) warns on stderr, still
# writes a valid empty stream and exits 0; -q silences the warning; a part
# with documents gives no warning.
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
cd "$T"
mkdir au
for f in eight_espeak five_espeak four_espeak one_espeak; do cp "$DATA/audio/sc09_like_espeak/$f.wav" au/; done
$S tokenize audio --split 88:6:6 --part valid au -o v.tok 2>err
grep -q "warning: --part valid: no documents written (0 of the 4 input files are in valid)" err \
  || fail "no warning for an empty selection: $(cat err)"
[ "$(grep -c . err)" -eq 1 ] || fail "one line expected: $(cat err)"
[ "$($S stats v.tok | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["documents"])')" = 0 ] \
  || fail "the output is not an empty stream"
$S tokenize audio -q --split 88:6:6 --part valid au -o v.tok 2>err
[ ! -s err ] || fail "-q must silence it: $(cat err)"
$S tokenize audio --split 88:6:6 --part train au -o t.tok 2>err
[ ! -s err ] || fail "a part with documents warned: $(cat err)"
[ "$($S cat t.tok | grep -c .)" = 3 ] || fail "train: 3 documents expected"

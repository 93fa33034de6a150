# Bad audio input and bad options: one clear error line, exit 1 (input) or 2 (usage),
# no output file left behind, never a crash or a hang.
. "$SRC/tests/cli/lib.sh"
A=$DATA/audio
le32() { printf "\\x$(printf %02x $(($1 & 255)))\\x$(printf %02x $(($1 >> 8 & 255)))\\x$(printf %02x $(($1 >> 16 & 255)))\\x$(printf %02x $(($1 >> 24 & 255)))"; }
le16() { printf "\\x$(printf %02x $(($1 & 255)))\\x$(printf %02x $(($1 >> 8 & 255)))"; }
# wav FILE CHANNELS RATE DATA_BYTES DECLARED_DATA_SIZE
wav() {
  { printf 'RIFF'; le32 $((36 + $4)); printf 'WAVEfmt '; le32 16; le16 1; le16 "$2"; le32 "$3"; le32 $(($3 * 2)); le16 2; le16 16
    printf 'data'; le32 "$5"; head -c "$4" /dev/zero | tr '\0' '\1'; } > "$1"
}
wav "$T/ok.wav" 1 16000 400 400
"$SLUICE" tokenize audio "$T/ok.wav" | "$SLUICE" cat --no-ids | grep -q '"samples":200' || fail "generator sanity"

wav "$T/past_end.wav" 1 16000 200 100000
expect_fail 1 "past_end.wav:36: chunk 'data' declares 100000 bytes but only 200 remain" -- "$SLUICE" tokenize audio "$T/past_end.wav" -o "$T/out.tok"
no_file "$T/out.tok"
wav "$T/empty_data.wav" 1 16000 0 0
expect_fail 1 'empty_data.wav:44: no audio' -- "$SLUICE" tokenize audio "$T/empty_data.wav" -o "$T/out.tok"
no_file "$T/out.tok"
wav "$T/zero_ch.wav" 0 16000 200 200
expect_fail 1 "zero_ch.wav:22: the 'fmt ' chunk declares 0 channels" -- "$SLUICE" tokenize audio "$T/zero_ch.wav" -o "$T/out.tok"
wav "$T/giga.wav" 1 1000000000 200 200
expect_fail 1 'giga.wav:0: sample rate 1000000000 Hz is outside the supported range' -- "$SLUICE" tokenize audio "$T/giga.wav" -o "$T/out.tok"
head -c 30 "$T/ok.wav" > "$T/cut.wav"
expect_fail 1 "cut.wav:12: chunk 'fmt ' declares 16 bytes" -- "$SLUICE" tokenize audio "$T/cut.wav" -o "$T/out.tok"
: > "$T/empty.wav"
expect_fail 1 'empty.wav:0: empty file' -- "$SLUICE" tokenize audio "$T/empty.wav" -o "$T/out.tok"
head -c 5000 /dev/urandom > "$T/noise.bin"
expect_fail 1 'noise.bin:0: not a recognised audio file' -- "$SLUICE" tokenize audio "$T/noise.bin" -o "$T/out.tok"
# MPEG-like garbage under a .wav name: our one line only (no libmpg123 chatter on stderr)
{ printf '\377\373\220\104'; head -c 3000 /dev/zero; } > "$T/mpeg_like.wav"
expect_fail 1 'mpeg_like.wav:0: not a recognised audio file' -- "$SLUICE" tokenize audio "$T/mpeg_like.wav" -o "$T/out.tok"
[ "$(wc -l < "$T/err")" -eq 1 ] || fail "more than one line on stderr: $(cat "$T/err")"
expect_fail 1 'missing.wav: cannot open' -- "$SLUICE" tokenize audio "$T/missing.wav" -o "$T/out.tok"
no_file "$T/out.tok"
# a bad file among good ones: nothing is written ...
expect_fail 1 'past_end.wav:36' -- "$SLUICE" tokenize audio "$A/alsa_Noise_16k.wav" "$T/past_end.wav" -o "$T/out.tok"
no_file "$T/out.tok"
# ... unless --skip-bad, which warns and goes on
"$SLUICE" tokenize audio --skip-bad "$A/alsa_Noise_16k.wav" "$T/past_end.wav" -o "$T/out.tok" 2> "$T/warn"
grep -q 'warning: skipping .*past_end.wav:36' "$T/warn" || fail "no warning: $(cat "$T/warn")"
[ "$("$SLUICE" cat --no-ids "$T/out.tok" | wc -l)" -eq 1 ] || fail "--skip-bad output"
mkdir "$T/nothing"
expect_fail 1 'no audio files found' -- "$SLUICE" tokenize audio "$T/nothing" -o "$T/out2.tok"
no_file "$T/out2.tok"

# usage errors exit 2
expect_fail 2 'bits 16 is not valid for --quantizer g711' -- "$SLUICE" tokenize audio --quantizer g711 --bits 16 "$T/ok.wav"
expect_fail 2 "quantizer: 'alaw' is not one of" -- "$SLUICE" tokenize audio --quantizer alaw "$T/ok.wav"
expect_fail 2 'overlap must be smaller' -- "$SLUICE" tokenize audio --clip-len 10 --overlap 10 "$T/ok.wav"
expect_fail 1 'nolist.txt: cannot open' -- "$SLUICE" tokenize audio --valid-list "$T/nolist.txt" "$T/ok.wav" -o "$T/out3.tok"
no_file "$T/out3.tok"
expect_fail 2 'exclude each other' -- "$SLUICE" tokenize audio --split 8:1:1 --test-list "$T/ok.wav" "$T/ok.wav"
expect_fail 2 'part needs --split' -- "$SLUICE" tokenize audio --part test "$T/ok.wav"
expect_fail 2 'split' -- "$SLUICE" tokenize audio --split 1:2 "$T/ok.wav"
expect_fail 2 'clip-len 20 is longer than --pad-to 10' -- "$SLUICE" tokenize audio --clip-len 20 --pad-to 10 "$T/ok.wav"
expect_fail 2 'pad-id 256 is outside' -- "$SLUICE" tokenize audio --pad-id 256 "$T/ok.wav"
expect_fail 2 'rate' -- "$SLUICE" tokenize audio --rate 0 "$T/ok.wav"

# detokenize: needs a directory, rejects non-audio and corrupt streams without leaving files
"$SLUICE" tokenize audio "$T/ok.wav" -o "$T/a.tok"
expect_fail 2 'needs an output directory' -- "$SLUICE" detokenize audio "$T/a.tok"
head -c 60 "$T/a.tok" > "$T/trunc.tok"
expect_fail 1 'trunc.tok' -- "$SLUICE" detokenize audio "$T/trunc.tok" -o "$T/wavs"
[ ! -e "$T/wavs" ] || [ -z "$(ls -A "$T/wavs")" ] || fail "files left after a failed detokenize"
# a stream cut after its first document: the WAV already written is removed again
"$SLUICE" tokenize audio "$T/ok.wav" "$A/alsa_Noise_16k.wav" -o "$T/two.tok"
head -c $(( $(stat -c %s "$T/two.tok") - 100 )) "$T/two.tok" > "$T/cut2.tok"
expect_fail 1 'cut2.tok' -- "$SLUICE" detokenize audio "$T/cut2.tok" -o "$T/wavs2"
[ -z "$(ls -A "$T/wavs2")" ] || fail "partial output left: $(ls "$T/wavs2")"

# tokenize -> detokenize -> tokenize: WaveNet mu-law and G.711 codes survive the trip
# through 16-bit WAV files; padding is cut off again; the WAVs are valid and named after the ids.
. "$SRC/tests/cli/lib.sh"
A=$DATA/audio
ids() { "$SLUICE" cat "$1" | grep -o '"ids":\[[0-9,]*\]'; }

# mulaw (WaveNet): decode(code) re-encodes to the same code, for every clip
"$SLUICE" tokenize audio --quantizer mulaw --clip-len 8000 "$A/alsa_Front_Center_16k.wav" "$A/freedesktop_complete_16k.wav" -o "$T/m.tok"
"$SLUICE" detokenize audio "$T/m.tok" -o "$T/wav"
[ "$(ls "$T/wav" | wc -l)" -eq 6 ] || fail "expected 6 WAV files: $(ls "$T/wav")"
ls "$T/wav" | grep -q '^000003-.*alsa_Front_Center_16k@24000.wav$' && fail "unexpected clip" || true
ls "$T/wav" | grep -q '^000002-.*alsa_Front_Center_16k@16000.wav$' || fail "names: $(ls "$T/wav")"
"$SLUICE" tokenize audio --quantizer mulaw "$T/wav" -o "$T/m2.tok"
[ "$(ids "$T/m.tok")" = "$(ids "$T/m2.tok")" ] || fail "mulaw codes changed in the round trip"

# g711: the same, except negative zero (0x7F = 127) which comes back as positive zero (0xFF = 255)
"$SLUICE" tokenize audio --quantizer g711 "$A/alsa_Noise_16k.wav" -o "$T/g.tok"
"$SLUICE" detokenize audio "$T/g.tok" -o "$T/gw"
"$SLUICE" tokenize audio --quantizer g711 "$T/gw" -o "$T/g2.tok"
[ "$(ids "$T/g.tok" | sed 's/\b127\b/255/g')" = "$(ids "$T/g2.tok")" ] || fail "g711 round trip"

# padding: SC09 clips padded to 16000 come back at their real length
"$SLUICE" tokenize audio --quantizer mulaw --pad-to 16000 "$A/sc09_like_espeak/eight_espeak_short_9240.wav" -o "$T/p.tok"
"$SLUICE" detokenize audio "$T/p.tok" -o "$T/pw"
f=$(ls "$T/pw"/*.wav)
[ "$(stat -c %s "$f")" -eq $((44 + 2 * 9240)) ] || fail "padded clip not cut back to 9240 samples"
"$SLUICE" detokenize audio --keep-pad --float "$T/p.tok" -o "$T/pw2"
[ "$(stat -c %s "$(ls "$T/pw2"/*.wav)")" -eq $((58 + 4 * 16000)) ] || fail "--keep-pad --float size"
"$SLUICE" tokenize audio --quantizer mulaw "$T/pw" | "$SLUICE" cat --no-ids | grep -q '"samples":9240' || fail "re-read"

# the quantizer and rate come from the header; overriding the rate changes the WAV header only
"$SLUICE" detokenize audio --rate 8000 "$T/p.tok" -o "$T/r8"
"$SLUICE" tokenize audio --rate 8000 --quantizer mulaw "$T/r8" | "$SLUICE" cat --no-ids | grep -q '"samples":9240,"sample_rate":8000' || fail "--rate"

# sluice tokenize audio end to end: reference codes for every quantizer, clips,
# SC09 padding, splits, resampling, stdin, thread-count independence.
. "$SRC/tests/cli/lib.sh"
A=$DATA/audio
ids_of() { "$SLUICE" cat "$1" | sed -n "${2:-1}p" | grep -o '"ids":\[[0-9,]*\]'; }
ref_ids() { printf '"ids":[%s]' "$(od -An -v -tu1 "$1" | tr -s ' \n' '  ' | sed 's/^ *//; s/ *$//; s/ /,/g')"; }

# 1. every quantizer reproduces the reference codes (computed from the s4/WaveNet/G.711 formulas)
for q in mulaw-s4:s4_mulaw mulaw:wavenet linear:s4_linear g711:g711_ulaw; do
  "$SLUICE" tokenize audio --quantizer "${q%%:*}" "$A/alsa_Front_Center_16k.wav" -o "$T/q.tok"
  [ "$(ids_of "$T/q.tok")" = "$(ref_ids "$A/reference/front_center_16k.${q#*:}.u8")" ] \
    || fail "quantizer ${q%%:*} differs from reference/front_center_16k.${q#*:}.u8"
done
# the default is mulaw-s4, and the header records what was done
"$SLUICE" tokenize audio "$A/alsa_Front_Center_16k.wav" -o "$T/d.tok"
[ "$(ids_of "$T/d.tok")" = "$(ref_ids "$A/reference/front_center_16k.s4_mulaw.u8")" ] || fail "default quantizer"
"$SLUICE" cat --header "$T/d.tok" > "$T/h.json"
for k in '"modality":"audio"' '"vocab_size":256' '"sample_rate":16000' '"quantizer":"mulaw-s4"' '"bits":8' '"start_token":128' '"pad":null'; do
  grep -q "$k" "$T/h.json" || fail "header lacks $k: $(cat "$T/h.json")"
done
# the same file through stdin and in its other lossless layouts gives the same codes
"$SLUICE" tokenize audio < "$A/edge_cases/streamed_sizes_0xFFFFFFFF_16k.wav" -o "$T/s.tok"
[ "$(ids_of "$T/s.tok")" = "$(ids_of "$T/d.tok")" ] || fail "stdin / streamed sizes"
"$SLUICE" tokenize audio "$A/edge_cases/list_chunk_before_data_and_trailing_chunk_16k.wav" -o "$T/l.tok"
[ "$(ids_of "$T/l.tok")" = "$(ids_of "$T/d.tok")" ] || fail "LIST chunk layout"

# 2. YouTubeMix-style clips: 320000 samples -> 131072, 131072, 57856 (or 2 with --drop-last)
"$SLUICE" tokenize audio --clip-len 131072 "$A/synthetic_pluck_melody_16k.wav" -o "$T/c.tok"
"$SLUICE" cat --no-ids "$T/c.tok" > "$T/c.jsonl"
[ "$(wc -l < "$T/c.jsonl")" -eq 3 ] || fail "expected 3 clips"
grep -q 'melody_16k.wav@262144".*"offset":262144,"samples":57856' "$T/c.jsonl" || fail "last clip: $(cat "$T/c.jsonl")"
[ "$("$SLUICE" tokenize audio --clip-len 131072 --drop-last "$A/synthetic_pluck_melody_16k.wav" | "$SLUICE" cat --no-ids | wc -l)" -eq 2 ] \
  || fail "--drop-last"
# overlap: hop 100000 - 31072 = 68928 -> starts 0, 68928, 137856 (full), 206784 (+131072 > 320000: short tail)
"$SLUICE" tokenize audio --clip-len 100000 --overlap 31072 "$A/synthetic_pluck_melody_16k.wav" | "$SLUICE" cat --no-ids > "$T/o.jsonl"
grep -o '"offset":[0-9]*' "$T/o.jsonl" | tr '\n' ' ' | grep -qx '"offset":0 "offset":68928 "offset":137856 "offset":206784 "offset":275712 ' \
  || fail "overlap offsets: $(grep -o '"offset":[0-9]*' "$T/o.jsonl" | tr '\n' ' ')"
# each clip is min-max scaled on its own (SaShiMi): every clip holds a 0 code and a high code
"$SLUICE" cat "$T/c.tok" | while read -r line; do
  echo "$line" | grep -q '\[0,\|,0,\|,0\]' || fail "a clip without code 0"
done

# 3. SC09: 1 s clips padded with 128 (q_zero); the short file keeps its real length in metadata
"$SLUICE" tokenize audio --pad-to 16000 "$A/sc09_like_espeak" -o "$T/sc.tok"
"$SLUICE" cat "$T/sc.tok" > "$T/sc.jsonl"
[ "$(wc -l < "$T/sc.jsonl")" -eq 11 ] || fail "11 SC09 clips"
"$SLUICE" cat --header "$T/sc.tok" | grep -q '"pad":128' || fail "pad id in header"
short=$(grep 'short_9240' "$T/sc.jsonl")
echo "$short" | grep -q '"samples":9240' || fail "short clip samples"
n=$(echo "$short" | grep -o '"ids":\[[0-9,]*\]' | tr -cd ',' | wc -c)
[ "$n" -eq 15999 ] || fail "short clip not padded to 16000 ($((n+1)))"
tail_ok=$(echo "$short" | grep -o '"ids":\[[0-9,]*\]' | tr -d '"ids:[]' | tr ',' '\n' | tail -n 6760 | sort -u)
[ "$tail_ok" = 128 ] || fail "padding is not 128"
"$SLUICE" tokenize audio --pad-to 16000 --pad-id 7 "$A/sc09_like_espeak/eight_espeak_short_9240.wav" | "$SLUICE" cat --header | grep -q '"pad":7' || fail "--pad-id"

# 4. file-level split by natural-sorted index: 11 files at 88:6:6 -> 9 train, 1 valid (two), 1 test (zero)
"$SLUICE" tokenize audio --split 88:6:6 "$A/sc09_like_espeak" | "$SLUICE" cat --no-ids > "$T/sp.jsonl"
[ "$(grep -c '"split":"train"' "$T/sp.jsonl")" -eq 9 ] || fail "train count"
grep '"split":"valid"' "$T/sp.jsonl" | grep -q two_espeak || fail "valid part"
grep '"split":"test"' "$T/sp.jsonl" | grep -q zero_espeak || fail "test part"
"$SLUICE" tokenize audio --split 88:6:6 --part test "$A/sc09_like_espeak" | "$SLUICE" cat --no-ids > "$T/pt.jsonl"
[ "$(wc -l < "$T/pt.jsonl")" -eq 1 ] && grep -q zero_espeak "$T/pt.jsonl" || fail "--part test"
# argument order does not change the index split
"$SLUICE" tokenize audio --split 88:6:6 --part test $(ls -r "$A"/sc09_like_espeak/*.wav) | "$SLUICE" cat --no-ids | grep -q zero_espeak || fail "order"
# SC09-style list split: entries are matched against the end of each path (CRLF and blank lines ok)
printf 'sc09_like_espeak/two_espeak.wav\r\n\nsix_espeak.wav\n' > "$T/valid.txt"
echo 'sc09_like_espeak/nine_espeak.wav' > "$T/test.txt"
"$SLUICE" tokenize audio --valid-list "$T/valid.txt" --test-list "$T/test.txt" "$A/sc09_like_espeak" | "$SLUICE" cat --no-ids > "$T/ls.jsonl"
[ "$(grep -c '"split":"train"' "$T/ls.jsonl")" -eq 8 ] || fail "list split train count"
[ "$(grep '"split":"valid"' "$T/ls.jsonl" | grep -o '[a-z]*_espeak.wav@' | tr '\n' ' ')" = "six_espeak.wav@ two_espeak.wav@ " ] || fail "list split valid"
grep '"split":"test"' "$T/ls.jsonl" | grep -q nine_espeak || fail "list split test"
"$SLUICE" tokenize audio --test-list "$T/test.txt" --part test "$A/sc09_like_espeak" | "$SLUICE" cat --no-ids | grep -c . | grep -qx 1 || fail "--part with a list"
# hash split: deterministic per seed, every file gets a part
"$SLUICE" tokenize audio --split 50:25:25 --split-by hash --seed 3 "$A/sc09_like_espeak" -o "$T/h1.tok"
"$SLUICE" tokenize audio --split 50:25:25 --split-by hash --seed 3 "$A/sc09_like_espeak" -o "$T/h2.tok"
cmp -s "$T/h1.tok" "$T/h2.tok" || fail "hash split not deterministic"
[ "$("$SLUICE" cat --no-ids "$T/h1.tok" | grep -c '"split":"')" -eq 11 ] || fail "hash split tags"

# 5. resampling and mixdown: 44.1 kHz stereo and 48 kHz 24-bit give 22848 samples at 16 kHz
for f in front_center_stereo_s16_44k1.wav front_center_s24_48k.wav front_center_g711ulaw_8k.wav front_center_16k.flac; do
  "$SLUICE" tokenize audio "$A/format_variants/$f" | "$SLUICE" cat --no-ids | grep -q '"samples":22848,"sample_rate":16000' || fail "$f"
done
"$SLUICE" tokenize audio --rate 8000 "$A/original/freedesktop_complete.oga" | "$SLUICE" cat --no-ids | grep -q '"samples":8711,"sample_rate":8000' \
  || fail "ogg at 8 kHz"

# 6. output independent of the thread count
"$SLUICE" tokenize audio -@ 1 --clip-len 4000 "$A" -o "$T/t1.tok"
"$SLUICE" tokenize audio -@ 2 --clip-len 4000 "$A" -o "$T/t2.tok"
cmp -s "$T/t1.tok" "$T/t2.tok" || fail "thread count changes the output"

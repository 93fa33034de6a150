#!/usr/bin/env bash
# Audio tokenization benchmark: 1 hour of generated 44.1 kHz stereo 16-bit audio (60 files of
# 60 s, piano-like) tokenized to 16 kHz 8-bit SaShiMi mu-law, with resampling, by sluice and by
# peers doing the same steps on the same files in the same run:
#   numpy  bench/audio_peer.py: WAV read, channel mean, torchaudio-style windowed-sinc resampling
#          (numpy/BLAS, float32), s4 mu_law_encode (needs python3 with numpy; install-deps has it)
#   sox    `sox -D IN -r 16000 -c 1 -e mu-law -b 8 -t raw` per file, all cores (xargs -P), when
#          sox is installed (G.711 codes rather than s4's, otherwise the same steps)
# Prints audio-seconds per second (= times real time) and the ratio sluice / peer.
# AUDIO_BENCH_FILES and AUDIO_BENCH_SECONDS change the size.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
S=${SLUICE_BIN:-$SRC/sluice}
NF=${AUDIO_BENCH_FILES:-60}
SECS=${AUDIO_BENCH_SECONDS:-60}
W=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench-audio.XXXXXX")
trap 'rm -rf "$W"' EXIT

now() { date +%s.%N; }
rate() { awk -v a="$1" -v t0="$2" -v t1="$3" 'BEGIN { printf "%.0f", a / (t1 - t0) }'; }
secs() { awk -v t0="$1" -v t1="$2" 'BEGIN { printf "%.2f", t1 - t0 }'; }

echo "audio bench: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
cc -O2 -o "$W/gen" "$SRC/bench/audio_gen.c" -lm
mkdir "$W/in"
"$W/gen" "$W/in" "$NF" "$SECS"
TOTAL=$((NF * SECS))
echo "input: $NF files x ${SECS} s = ${TOTAL} s of 44.1 kHz stereo s16 ($(du -sh "$W/in" | cut -f1))"
cat "$W"/in/*.wav > /dev/null # page cache warm for every contender

t0=$(now)
"$S" tokenize audio -q --rate 16000 --quantizer mulaw-s4 "$W/in" -o "$W/sluice.tok"
t1=$(now)
SL=$(rate "$TOTAL" "$t0" "$t1")
docs=$("$S" cat --no-ids "$W/sluice.tok" | grep -c "\"samples\":$((SECS * 16000)),\"sample_rate\":16000" || true)
[ "$docs" -eq "$NF" ] || { echo "audio bench: sluice output has $docs complete documents, want $NF" >&2; exit 1; }
echo "sluice tokenize audio: $(secs "$t0" "$t1") s, ${SL} audio-s/s (${SL}x real time; goal >= 500x)"

PY=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import numpy' 2>/dev/null; then PY=$p; break; fi
done
if [ -n "$PY" ]; then
  t0=$(now)
  "$PY" "$SRC/bench/audio_peer.py" "$W/peer.u8" "$W"/in/*.wav > /dev/null
  t1=$(now)
  PR=$(rate "$TOTAL" "$t0" "$t1")
  echo "numpy SaShiMi-style peer: $(secs "$t0" "$t1") s, ${PR} audio-s/s; ratio sluice/numpy = $(awk -v a="$SL" -v b="$PR" 'BEGIN{printf "%.2f", a/b}')"
  # Same steps, different resampling filters: the codes should mostly agree within one step.
  "$S" tokenize audio -q --rate 16000 "$W/in/bench_000.wav" | "$S" cat | grep -o '"ids":\[[0-9,]*\]' | tr -d '"ids:[]' | tr ',' '\n' > "$W/a.txt"
  head -c $((SECS * 16000)) "$W/peer.u8" | od -An -v -tu1 | tr -s ' \n' '\n\n' | sed '/^$/d' > "$W/b.txt"
  paste "$W/a.txt" "$W/b.txt" | awk '{ d = $1 - $2; if (d < 0) d = -d; n++; if (d == 0) e++; if (d <= 1) o++ }
    END { printf "codes vs numpy peer (first file): %.1f%% equal, %.1f%% within 1\n", 100 * e / n, 100 * o / n }'
else
  echo "numpy peer: skipped (no python3 with numpy; scripts/install-deps installs python3-numpy)"
fi

if command -v sox >/dev/null; then
  t0=$(now)
  ls "$W"/in/*.wav | xargs -P "$(nproc)" -I{} sox -D {} -r 16000 -c 1 -e mu-law -b 8 -t raw {}.ulaw
  t1=$(now)
  XR=$(rate "$TOTAL" "$t0" "$t1")
  echo "sox (G.711, $(nproc) processes): $(secs "$t0" "$t1") s, ${XR} audio-s/s; ratio sluice/sox = $(awk -v a="$SL" -v b="$XR" 'BEGIN{printf "%.2f", a/b}')"
else
  echo "sox peer: skipped (sox not installed)"
fi

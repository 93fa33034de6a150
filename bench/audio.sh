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

# timed NAME CMD...: runs CMD, leaves "wall user+sys" seconds in $W/NAME.time. CPU time is shown
# too because the development machine is shared: wall time there depends on the load.
timed() {
  local name=$1; shift
  local TIMEFORMAT='%R %U %S'
  { time "$@" > /dev/null; } 2> "$W/$name.time"
  awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' "$W/$name.time" > "$W/$name.t" && mv "$W/$name.t" "$W/$name.time"
}
wall() { cut -d' ' -f1 "$W/$1.time"; }
cpu() { cut -d' ' -f2 "$W/$1.time"; }
rate() { awk -v a="$TOTAL" -v t="$1" 'BEGIN { printf "%.0f", a / t }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b / a }'; }
report() { echo "$1: wall $(wall "$2") s = $(rate "$(wall "$2")") audio-s/s; CPU $(cpu "$2") s = $(rate "$(cpu "$2")") audio-s per CPU-s$3"; }

echo "audio bench: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
cc -O2 -o "$W/gen" "$SRC/bench/audio_gen.c" -lm
mkdir "$W/in"
"$W/gen" "$W/in" "$NF" "$SECS"
TOTAL=$((NF * SECS))
echo "input: $NF files x ${SECS} s = ${TOTAL} s of 44.1 kHz stereo s16 ($(du -sh "$W/in" | cut -f1))"
cat "$W"/in/*.wav > /dev/null # page cache warm for every contender

echo "load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
timed sluice "$S" tokenize audio -q --rate 16000 --quantizer mulaw-s4 "$W/in" -o "$W/sluice.tok"
docs=$("$S" cat --no-ids "$W/sluice.tok" | grep -c "\"samples\":$((SECS * 16000)),\"sample_rate\":16000" || true)
[ "$docs" -eq "$NF" ] || { echo "audio bench: sluice output has $docs complete documents, want $NF" >&2; exit 1; }
report "sluice tokenize audio" sluice " (goal >= 500x real time)"

PY=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import numpy' 2>/dev/null; then PY=$p; break; fi
done
if [ -n "$PY" ]; then
  timed numpy "$PY" "$SRC/bench/audio_peer.py" "$W/peer.u8" "$W"/in/*.wav
  report "numpy SaShiMi-style peer" numpy ""
  echo "ratio sluice/numpy: wall $(ratio "$(wall sluice)" "$(wall numpy)")x, CPU $(ratio "$(cpu sluice)" "$(cpu numpy)")x"
  # Same steps, different resampling filters: the codes should mostly agree within one step.
  "$S" tokenize audio -q --rate 16000 "$W/in/bench_000.wav" | "$S" cat | grep -o '"ids":\[[0-9,]*\]' | tr -d '"ids:[]' | tr ',' '\n' > "$W/a.txt"
  head -c $((SECS * 16000)) "$W/peer.u8" | od -An -v -tu1 | tr -s ' \n' '\n\n' | sed '/^$/d' > "$W/b.txt"
  paste "$W/a.txt" "$W/b.txt" | awk '{ d = $1 - $2; if (d < 0) d = -d; n++; if (d == 0) e++; if (d <= 1) o++ }
    END { printf "codes vs numpy peer (first file): %.1f%% equal, %.1f%% within 1\n", 100 * e / n, 100 * o / n }'
else
  echo "numpy peer: skipped (no python3 with numpy; scripts/install-deps installs python3-numpy)"
fi

if command -v sox >/dev/null; then
  sox_all() { ls "$W"/in/*.wav | xargs -P "$(nproc)" -I{} sox -D {} -r 16000 -c 1 -e mu-law -b 8 -t raw {}.ulaw; }
  timed sox sox_all
  report "sox (G.711, $(nproc) processes)" sox ""
  echo "ratio sluice/sox: wall $(ratio "$(wall sluice)" "$(wall sox)")x, CPU $(ratio "$(cpu sluice)" "$(cpu sox)")x"
else
  echo "sox peer: skipped (sox not installed)"
fi

#!/usr/bin/env python3
"""Peer for bench/audio.sh: a SaShiMi-style audio tokenizer in numpy, doing the same steps as
`sluice tokenize audio --rate 16000` on each file:

  read the WAV (int16 / 32768, as torchaudio.load returns it), average the channels
  (seq.mean(dim=0)), resample to 16 kHz with a windowed-sinc filter written after
  torchaudio.functional.resample's defaults (lowpass_filter_width 6, rolloff 0.99, Hann
  window), then SaShiMi's mu_law_encode (state-spaces/s4 src/dataloaders/audio.py:
  per-clip min-max to [-1, 1], mu = 255, floor(v * 255.99 + 0.005)), and write the codes.

The resampler is a numpy re-derivation (polyphase: one matrix product per block of
`orig` input samples), computed in float32 like torch. Usage: audio_peer.py OUT FILES...
Prints the number of input audio seconds processed."""
import math
import sys
import wave

import numpy as np


def sinc_kernel(orig, new, width_zc=6, rolloff=0.99):
    g = math.gcd(orig, new)
    orig, new = orig // g, new // g
    base = min(orig, new) * rolloff
    width = math.ceil(width_zc * orig / base)
    idx = np.arange(-width, width + orig, dtype=np.float64) / orig
    t = np.arange(0, -new, -1, dtype=np.float64)[:, None] / new + idx[None, :]
    t *= base
    t = np.clip(t, -width_zc, width_zc)
    window = np.cos(t * math.pi / width_zc / 2) ** 2
    t *= math.pi
    with np.errstate(invalid="ignore", divide="ignore"):
        k = np.where(t == 0, 1.0, np.sin(t) / t)
    k *= window * (base / orig)
    return k.astype(np.float32), orig, new, width


def resample(x, kern):
    k, orig, new, width = kern
    xp = np.pad(x, (width, width + orig))
    klen = k.shape[1]
    nblk = (len(xp) - klen) // orig + 1
    frames = np.lib.stride_tricks.as_strided(xp, shape=(nblk, klen), strides=(orig * xp.strides[0], xp.strides[0]))
    y = (frames @ k.T).reshape(-1)
    return y[: math.ceil(new * len(x) / orig)]


def mu_law_s4(x, bits=8):
    mu = (1 << bits) - 1
    lo, hi = x.min(), x.max()
    x = -1 + 2 * (x - lo) / (hi - lo + 1e-6)
    e = np.sign(x) * np.log1p(mu * np.abs(x + 1e-8)) / np.log1p(mu)
    v = (e + 1) / 2
    return np.floor(v * ((1 << bits) - 0.01) + 0.005).astype(np.uint8)


def main():
    out, files = sys.argv[1], sys.argv[2:]
    kern_cache = {}
    seconds = 0.0
    with open(out, "wb") as o:
        for f in files:
            with wave.open(f, "rb") as w:
                ch, sr, n = w.getnchannels(), w.getframerate(), w.getnframes()
                assert w.getsampwidth() == 2
                pcm = np.frombuffer(w.readframes(n), dtype="<i2").reshape(-1, ch)
            x = (pcm.astype(np.float32) / 32768.0).mean(axis=1, dtype=np.float32)
            if sr != 16000:
                if sr not in kern_cache:
                    kern_cache[sr] = sinc_kernel(sr, 16000)
                x = resample(x, kern_cache[sr])
            o.write(mu_law_s4(x).tobytes())
            seconds += n / sr
    print("%.3f" % seconds)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""More expected codes for tests/unit/test_audio_quantize.c: other bit widths and SaShiMi's
per-clip scaling, in float64, written line by line after state-spaces/s4
src/dataloaders/audio.py (minmax_scale, quantize, mu_law_encode, linear_encode, create_examples)
and torchaudio's mu_law_encoding (WaveNet), independently of sluice's C code.

  short9240.<scheme>.b<bits>.u16.gz   eight_espeak_short_9240.wav as one clip, bits 4, 12, 16
                                      (little-endian u16 per sample, gzip)
  melody.s4_mulaw.clips131072.u8.gz   synthetic_pluck_melody_16k.wav cut as s4's create_examples
                                      does with sample_len 131072, drop_last False (3 clips,
                                      each min-max scaled on its own), codes concatenated

Input floats are int16 / 32768 (torchaudio.load). Run from anywhere: python3 make_extra_codes.py
"""
import gzip
import math
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
AUDIO = os.path.dirname(HERE)


def read_pcm16_mono(path):
    b = open(path, 'rb').read()
    p, fmt = 12, None
    while p + 8 <= len(b):
        cid, sz = b[p:p + 4], struct.unpack_from('<I', b, p + 4)[0]
        if cid == b'fmt ':
            fmt = struct.unpack_from('<HHIIHH', b, p + 8)
        if cid == b'data':
            assert fmt[0] == 1 and fmt[1] == 1 and fmt[5] == 16
            return [s / 32768.0 for s in struct.unpack_from('<%dh' % (sz // 2), b, p + 8)]
        p += 8 + sz + (sz & 1)
    raise ValueError('no data chunk')


def quantize(v, bits):  # s4 quantize(): v * (q - eps) + eps / 2, then .long()
    return int(math.floor(v * ((1 << bits) - 0.01) + 0.01 / 2))


def s4_mulaw(xs, bits):
    mu = (1 << bits) - 1
    lo, hi = min(xs), max(xs)
    out = []
    for x in xs:
        a = -1 + 2 * (x - lo) / (hi - lo + 1e-6)  # minmax_scale(-1, 1)
        e = math.copysign(1, a) * math.log1p(mu * abs(a + 1e-8)) / math.log1p(mu) if a != 0 else 0.0
        out.append(quantize((e + 1) / 2, bits))
    return out


def s4_linear(xs, bits):
    lo, hi = min(xs), max(xs)
    return [quantize((x - lo) / (hi - lo + 1e-6), bits) for x in xs]


def wavenet(xs, bits):
    mu = (1 << bits) - 1
    out = []
    for x in xs:
        m = math.log1p(mu * min(abs(x), 1.0)) / math.log1p(mu)
        s = math.copysign(m, x) if x != 0 else 0.0
        out.append(int(math.floor((s + 1) / 2 * mu + 0.5)))
    return out


def main():
    short = read_pcm16_mono(os.path.join(AUDIO, 'sc09_like_espeak', 'eight_espeak_short_9240.wav'))
    for name, fn in (('s4_mulaw', s4_mulaw), ('s4_linear', s4_linear), ('wavenet', wavenet)):
        for bits in (4, 12, 16):
            codes = fn(short, bits)
            assert all(0 <= c < (1 << bits) for c in codes)
            with gzip.GzipFile(os.path.join(HERE, 'short9240.%s.b%d.u16.gz' % (name, bits)), 'wb', mtime=0) as f:
                f.write(struct.pack('<%dH' % len(codes), *codes))
    melody = read_pcm16_mono(os.path.join(AUDIO, 'synthetic_pluck_melody_16k.wav'))
    n, L = len(melody), 131072
    margin = n % L
    starts = [(s, L) for s in range(0, n - margin, L)] + ([(n - margin, margin)] if margin else [])
    codes = []
    for s, l in starts:
        codes += s4_mulaw(melody[s:s + l], 8)
    with gzip.GzipFile(os.path.join(HERE, 'melody.s4_mulaw.clips131072.u8.gz'), 'wb', mtime=0) as f:
        f.write(bytes(codes))
    print('clips', starts)


if __name__ == '__main__':
    main()

/* Generates synthetic piano-like test audio for bench/audio.sh: NFILES WAV
 * files of SECONDS each, 44.1 kHz stereo 16-bit PCM. Plucked notes (decaying
 * harmonics at random pitches) with a little noise, panned differently per
 * channel so the mixdown is not trivial. Deterministic (fixed LCG seed).
 *   cc -O2 -o audio_gen bench/audio_gen.c -lm && ./audio_gen DIR NFILES SECONDS */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint32_t lcg = 12345;
static double rnd(void)
{
    lcg = lcg * 1664525u + 1013904223u;
    return (lcg >> 8) / 16777216.0;
}

static void le(FILE *f, uint32_t v, int n)
{
    for (int i = 0; i < n; i++)
        fputc((int)(v >> (8 * i)) & 255, f);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: audio_gen DIR NFILES SECONDS\n");
        return 2;
    }
    int nfiles = atoi(argv[2]), rate = 44100;
    long frames = (long)atoi(argv[3]) * rate;
    int16_t *buf = malloc((size_t)frames * 4);
    for (int k = 0; k < nfiles; k++) {
        double f0 = 0, amp = 0, pan = 0.5, ph = 0;
        for (long i = 0; i < frames; i++) {
            if (i % (rate / 4) == 0) { /* a new note every 250 ms */
                f0 = 110 * pow(2, (int)(rnd() * 36) / 12.0);
                amp = 0.3 + 0.3 * rnd();
                pan = rnd();
            }
            ph += 2 * M_PI * f0 / rate;
            double env = amp * exp(-(double)(i % (rate / 4)) / (rate * 0.08));
            double s = env * (sin(ph) + 0.4 * sin(2 * ph) + 0.2 * sin(3 * ph)) / 1.6 + 0.002 * (rnd() - 0.5);
            buf[2 * i] = (int16_t)lrint(32767 * s * (1 - 0.5 * pan));
            buf[2 * i + 1] = (int16_t)lrint(32767 * s * (0.5 + 0.5 * pan));
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/bench_%03d.wav", argv[1], k);
        FILE *f = fopen(path, "wb");
        if (!f) {
            perror(path);
            return 1;
        }
        uint32_t data = (uint32_t)(frames * 4);
        fwrite("RIFF", 1, 4, f);
        le(f, 36 + data, 4);
        fwrite("WAVEfmt ", 1, 8, f);
        le(f, 16, 4);
        le(f, 1, 2);
        le(f, 2, 2);
        le(f, (uint32_t)rate, 4);
        le(f, (uint32_t)rate * 4, 4);
        le(f, 4, 2);
        le(f, 16, 2);
        fwrite("data", 1, 4, f);
        le(f, data, 4);
        fwrite(buf, 4, (size_t)frames, f);
        if (fclose(f)) {
            perror(path);
            return 1;
        }
    }
    free(buf);
    return 0;
}

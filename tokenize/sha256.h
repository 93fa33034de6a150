/* SHA-256 (FIPS 180-4), used for tokenizer fingerprints ("sha256:<hex>")
 * written into token-stream headers so later stages can check that they
 * use the same tokenizer. */
#ifndef SLUICE_TOKENIZE_SHA256_H
#define SLUICE_TOKENIZE_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct sl_sha256 {
    uint32_t h[8];
    uint64_t total; /* bytes hashed so far */
    uint8_t block[64];
    size_t used; /* bytes in block */
} sl_sha256;

void sl_sha256_init(sl_sha256 *s);
void sl_sha256_update(sl_sha256 *s, const void *data, size_t n);
void sl_sha256_final(sl_sha256 *s, uint8_t digest[32]);
/* 1 when the SHA extensions of x86-64 do the work (detected once);
 * sl_sha256_set_hw(0) forces the portable code, (1) the detected choice
 * again (tests compare the two). */
int sl_sha256_hw(void);
void sl_sha256_set_hw(int on);
/* Writes "sha256:" and the 64 lowercase hex digits of digest plus NUL (72
 * bytes) to out: the form of tokenizer fingerprints. */
void sl_sha256_hex(const uint8_t digest[32], char out[72]);
/* Writes "sha256:" and 64 lowercase hex digits plus NUL (72 bytes) to out. */
void sl_sha256_fingerprint(const void *data, size_t n, char out[72]);

#endif

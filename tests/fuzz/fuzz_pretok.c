/* libFuzzer target: the hand-written pre-tokenizers (GPT-2, Llama-3, Qwen2,
 * o200k, tekken), whose scan_many forms split ASCII 64 bytes at a time with
 * bit operations (tokenize/pre_tokenizers/pretok_scan.h). On any valid
 * UTF-8 input, for each pattern:
 *  - scan_many with a cap taken from the first byte (1..256, a call
 *    starting anew where the last ended) gives the same piece ends as the
 *    one-piece scanner, every end after the last and the last at the end;
 *  - on ASCII input (every character known to PCRE2), both give the
 *    pattern's matches through PCRE2 (UTF mode);
 *  - the same for the widest scan_many form this CPU runs (the AVX-512BW
 *    window load, sl_pretok_many_isa) where it is another.
 * Invalid UTF-8 is skipped: callers pass valid UTF-8 only. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "tokenize/models/bpe_internal.h"

typedef size_t (*many_fn)(const uint8_t *, size_t, size_t, size_t *, size_t);
typedef size_t (*one_fn)(const uint8_t *, size_t, size_t);

static struct {
    many_fn many;
    one_fn one;
    const char *pat;
    pcre2_code *re;
} sc[] = {
    {sl_pretok_many_gpt2, sl_pretok_scan, sl_pretok_gpt2_pcre2, NULL},
    {sl_pretok_many_llama3, sl_pretok_scan_llama3, sl_pretok_llama3_pcre2, NULL},
    {sl_pretok_many_qwen2, sl_pretok_scan_qwen2, sl_pretok_qwen2_pcre2, NULL},
    {sl_pretok_many_o200k, sl_pretok_scan_o200k, sl_pretok_o200k_pcre2, NULL},
    {sl_pretok_many_tekken, sl_pretok_scan_tekken, sl_pretok_tekken_pcre2, NULL},
};
enum { NS = sizeof sc / sizeof *sc };
static pcre2_match_data *md;

static void init(void)
{
    sl_pretok_class('a');
    sl_pretok_o200k_init();
    for (int s = 0; s < NS; s++) {
        int ec;
        PCRE2_SIZE eo;
        sc[s].re = pcre2_compile((PCRE2_SPTR)sc[s].pat, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &ec, &eo, NULL);
        if (!sc[s].re)
            abort();
    }
    md = pcre2_match_data_create(4, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!md)
        init();
    if (size == 0 || size > 4096 || sl_utf8_check((const char *)data, size) != size)
        return 0;
    size_t cap = 1 + data[0], ascii = 1;
    for (size_t i = 0; i < size; i++)
        ascii &= data[i] < 0x80;
    size_t *ends = malloc((size + 256) * sizeof *ends);
    for (int f = 0; f < 2 * NS; f++) {
        int s = f % NS;
        many_fn many = f < NS ? sc[s].many : sl_pretok_many_isa(s, -1);
        if (f >= NS && many == sc[s].many)
            continue;
        size_t k = 0, pos = 0;
        while (pos < size) {
            size_t m = many(data, size, pos, ends + k, cap);
            if (m < 1 || m > cap)
                abort();
            for (size_t i = 0; i < m; i++)
                if (ends[k + i] <= (i ? ends[k + i - 1] : pos) || ends[k + i] > size)
                    abort();
            k += m;
            pos = ends[k - 1];
        }
        for (size_t i = 0, at = 0; i < k; i++) {
            size_t e = sc[s].one(data, size, at);
            if (e != ends[i]) {
                fprintf(stderr, "pattern %d: piece %zu ends at %zu, the one-piece scanner %zu\n", s, i, ends[i], e);
                abort();
            }
            if (ascii) {
                int rc = pcre2_match(sc[s].re, (PCRE2_SPTR)data, size, at, 0, md, NULL);
                PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
                if (rc < 0 || ov[0] != at || ov[1] != e) {
                    fprintf(stderr, "pattern %d: piece %zu ends at %zu, PCRE2 %zu\n", s, i, e, (size_t)ov[1]);
                    abort();
                }
            }
            at = e;
        }
    }
    free(ends);
    return 0;
}

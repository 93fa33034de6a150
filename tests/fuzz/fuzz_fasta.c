/* libFuzzer target: the FASTA/FASTQ parser and the .fai builder on arbitrary
 * bytes. Must never crash, hang or leak; errors are fine. The first byte picks
 * the read chunk size so short and long reads both get exercised. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "dna/faidx.h"
#include "dna/fastx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t chunk = 1 + data[0] % 64;
    data++;
    size--;
    sl_err err;
    dna_fx *r = dna_fx_open_mem(data, size, "fuzz");
    char buf[64];
    int rc;
    while ((rc = dna_fx_next(r, &err)) == 1) {
        long n;
        while ((n = dna_fx_read(r, buf, chunk, &err)) > 0)
            ;
        if (n < 0)
            break;
    }
    dna_fx_close(r);
    r = dna_fx_open_mem(data, size, "fuzz");
    dna_fai fai = {0};
    if (dna_fai_build(r, &fai, &err) == 0) {
        sl_buf b = {0};
        dna_fai_format(&fai, &b);
        dna_fai parsed = {0};
        if (dna_fai_parse(b.data ? b.data : "", b.len, "fuzz.fai", &parsed, &err) != 0)
            abort(); /* what we write we must read back */
        dna_fai_free(&parsed);
        sl_buf_free(&b);
    }
    dna_fai_free(&fai);
    dna_fx_close(r);
    return 0;
}

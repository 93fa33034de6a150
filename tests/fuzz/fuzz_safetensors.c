/* libFuzzer target: the safetensors header parser and validator, plus the
 * fp32 conversion of every float tensor it accepts (which must stay inside
 * the buffer); and the same bytes as a Mamba config.json (both schemas)
 * and as a Mamba-2 one (n_groups, dt limits, d_intermediate included).
 * Seeds: tests/fuzz/corpus/safetensors (safetensors files and configs). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/mamba.h"
#include "model/model_impl.h"
#include "model/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a private copy so reads past the end are caught by ASan */
    uint8_t *copy = malloc(size ? size : 1);
    if (size)
        memcpy(copy, data, size);
    sl_err err;
    sl_st_file *f = sl_st_parse(copy, size, "fuzz", &err);
    if (f) {
        for (size_t i = 0; i < sl_st_count(f); i++) {
            const sl_st_tensor *t = sl_st_tensor_at(f, i);
            if (sl_st_find(f, t->name) != t)
                abort();
            if (t->numel > (1u << 20))
                continue;
            float *out = malloc((size_t)(t->numel ? t->numel : 1) * sizeof(float));
            sl_st_to_f32(f, t, out, &err);
            free(out);
        }
        sl_st_close(f);
    }
    sl_mamba_config cfg;
    if (sl_mamba_config_parse((const char *)copy, size, "config.json", &cfg, &err) == 0 &&
        (cfg.vocab < cfg.vocab_size || cfg.vocab % cfg.pad_multiple || cfg.dt_rank < 1 || cfg.d_inner < 1))
        abort(); /* an accepted config must be consistent */
    sl_mamba2_config c2;
    int tie;
    if (sl_mamba2_config_parse((const char *)copy, size, "config.json", &c2, &tie, &err) == 0 &&
        (c2.vocab < c2.vocab_size || c2.vocab % c2.pad_multiple || c2.nheads * c2.headdim != c2.d_ssm ||
         c2.ngroups < 1 || c2.nheads % c2.ngroups || c2.conv_dim != c2.d_ssm + 2 * c2.ngroups * c2.d_state ||
         c2.d_mlp < 0 || c2.d_mlp % 128 || !(c2.dt_min >= 0 && c2.dt_min <= c2.dt_max)))
        abort();
    free(copy);
    return 0;
}

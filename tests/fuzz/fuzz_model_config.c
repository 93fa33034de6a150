/* libFuzzer target: model config.json parsing: the Mamba-1 parser
 * (model/mamba_config.c: mamba_ssm's MambaConfig, transformers' MambaConfig
 * and FalconMambaConfig, Infinity/NaN values, alias keys that must agree),
 * checked for a usable shape, and every architecture's parser as loading
 * picks it (sl_model_config_check: Mamba-2's ngroups, headdim, d_ssm,
 * d_intermediate, time_step_limit, ...). Seeds: tests/fuzz/corpus/model_config
 * (the config.json files of tests/data/model). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/mamba.h"
#include "model/model_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a private copy without a terminator, so reads past the end are caught by ASan */
    char *copy = malloc(size ? size : 1);
    if (size)
        memcpy(copy, data, size);
    sl_err err;
    sl_mamba_config c;
    if (sl_mamba_config_parse(copy, size, "fuzz", &c, &err) == 0) {
        if (c.n_layer <= 0 || c.d_model <= 0 || c.d_inner <= 0 || c.d_state <= 0 || c.d_conv <= 0 || c.dt_rank <= 0 ||
            c.vocab_size <= 0)
            abort(); /* the parser promised a usable shape */
    } else if (!err.msg[0]) {
        abort(); /* a refusal always says why */
    }
    err.msg[0] = 0;
    if (sl_model_config_check(copy, size, "fuzz", &err) != 0 && !err.msg[0])
        abort();
    free(copy);
    return 0;
}

#!/usr/bin/env python3
"""Writes the config.json of Mamba-1, Falcon-Mamba and Mamba-2 checkpoints
as transformers 5 saves them (tests/data/model/hf_tf5, falcon_tf5, m2_tf5).

transformers 5 writes a non-finite float as an object, so Mamba2Config's
default "time_step_limit" (0.0, inf) becomes

    "time_step_limit": [0.0, {"__float__": "Infinity"}]

(PreTrainedConfig._encode_special_floats; "-Infinity" and "NaN" likewise),
where transformers 4 wrote the bare JSON extension `Infinity`. Its key set
also differs from 4.x (no generation defaults; `use_associative_scan`).

Each config is made by the config class itself, `cls(**hyperparameters)`,
with the hyperparameters of an existing fixture (hf_f32, falcon_f32,
m2_f32: read from its config.json), and saved with `save_pretrained`, as a
user of transformers 5 saving such a model would get it. The weights are
that fixture's (the tensor names of Mamba/FalconMamba/Mamba2ForCausalLM are
unchanged in transformers 5), so the directory holds symbolic links to its
model.safetensors and expected.jsonl, and the scores must equal the
fixture's reference values. The script checks that transformers reads the
saved file back to the same hyperparameters.

Needs only transformers (no torch):
    python3 -m venv /tmp/v && /tmp/v/bin/pip install transformers
    /tmp/v/bin/python tests/model/gen_tf5_configs.py
(made with transformers 5.24.0; the output is deterministic)
"""
import json
import math
import os

import transformers
from transformers import FalconMambaConfig, Mamba2Config, MambaConfig

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "model")

COMMON = ["hidden_size", "num_hidden_layers", "vocab_size", "state_size", "conv_kernel", "expand",
          "time_step_rank", "layer_norm_epsilon", "use_bias", "use_conv_bias", "tie_word_embeddings",
          "bos_token_id", "eos_token_id", "pad_token_id", "residual_in_fp32", "time_step_min",
          "time_step_max", "time_step_floor", "initializer_range"]
MODELS = [
    (MambaConfig, "hf_f32", "hf_tf5", COMMON + ["intermediate_size"]),
    (FalconMambaConfig, "falcon_f32", "falcon_tf5", COMMON + ["intermediate_size", "mixer_rms_eps"]),
    (Mamba2Config, "m2_f32", "m2_tf5",
     COMMON + ["num_heads", "head_dim", "n_groups", "chunk_size", "rms_norm", "time_step_limit"]),
]


def same(a, b):
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def main():
    print("transformers", transformers.__version__)
    for cls, src, dst, keys in MODELS:
        with open(os.path.join(DATA, src, "config.json")) as f:
            ref = json.load(f)  # Python's json reads transformers 4's Infinity
        kw = {k: ref[k] for k in keys}
        out = os.path.join(DATA, dst)
        os.makedirs(out, exist_ok=True)
        cls(**kw).save_pretrained(out)
        back = cls.from_pretrained(out)
        for k in keys:
            got = getattr(back, k)
            assert same(got, kw[k]), (dst, k, got, kw[k])
        for name in ("model.safetensors", "expected.jsonl"):
            link = os.path.join(out, name)
            if os.path.lexists(link):
                os.remove(link)
            os.symlink(os.path.join("..", src, name), link)
        text = open(os.path.join(out, "config.json")).read()
        print(dst, "<-", src, "| __float__ objects:", text.count('"__float__"'))


if __name__ == "__main__":
    main()

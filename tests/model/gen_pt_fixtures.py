#!/usr/bin/env python3
"""PyTorch-format (torch.save zip) copies of the safetensors fixtures, for
the pytorch_model.bin reader (model/tensors_pt.c), plus broken files.

  pt_f32/           hf_f32's tensors saved with torch.save as a state dict
                    (OrderedDict with _metadata, as Module.state_dict()
                    returns it) and its config.json. The file exercises what
                    real checkpoints contain: lm_head.weight sharing the
                    embedding's storage (tied), a non-contiguous tensor
                    (layer 0's x_proj stored transposed), and a tensor at a
                    storage offset (layer 1's D inside a larger storage).
  pt_sharded_bf16/  hf_bf16's tensors in two shards
                    (pytorch_model-0000N-of-00002.bin) with
                    pytorch_model.bin.index.json.
  bad/pt_*/         a pickle calling os.system, a storage entry cut short, a
                    truncated file, a zip whose pickle is not a state dict.

The values are the safetensors fixtures' bit for bit, so sluice must score
these directories exactly as it scores hf_f32/ and hf_bf16/.

Run (Debian's python3-torch, safetensors in a venv with system packages):
  /work/venv-model/bin/python tests/model/gen_pt_fixtures.py
"""
import collections
import io
import json
import os
import shutil
import zipfile

import torch
from safetensors.torch import load_file

M = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "model")


def state_dict(tensors):
    sd = collections.OrderedDict(sorted(tensors.items()))
    sd._metadata = collections.OrderedDict({"": {"version": 1}})
    return sd


def fresh(d):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)


def pt_f32():
    src = os.path.join(M, "hf_f32")
    t = load_file(os.path.join(src, "model.safetensors"))
    t["lm_head.weight"] = t["backbone.embeddings.weight"]  # tied: one storage, two tensors
    x = t["backbone.layers.0.mixer.x_proj.weight"]
    t["backbone.layers.0.mixer.x_proj.weight"] = x.t().contiguous().t()  # same values, column-major
    assert not t["backbone.layers.0.mixer.x_proj.weight"].is_contiguous()
    dd = t["backbone.layers.1.mixer.D"]
    t["backbone.layers.1.mixer.D"] = torch.cat([torch.full((3,), 7.0), dd])[3:]  # storage offset 3
    d = os.path.join(M, "pt_f32")
    fresh(d)
    shutil.copy(os.path.join(src, "config.json"), d)
    torch.save(state_dict(t), os.path.join(d, "pytorch_model.bin"))


def pt_sharded_bf16():
    src = os.path.join(M, "hf_bf16")
    t = load_file(os.path.join(src, "model.safetensors"))
    d = os.path.join(M, "pt_sharded_bf16")
    fresh(d)
    shutil.copy(os.path.join(src, "config.json"), d)
    keys = sorted(t)
    parts = [keys[: len(keys) // 2], keys[len(keys) // 2:]]
    wm = {}
    for i, part in enumerate(parts):
        fn = "pytorch_model-%05d-of-%05d.bin" % (i + 1, len(parts))
        torch.save(state_dict({k: t[k] for k in part}), os.path.join(d, fn))
        wm.update({k: fn for k in part})
    with open(os.path.join(d, "pytorch_model.bin.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": sum(v.numel() * v.element_size() for v in t.values())},
                   "weight_map": wm}, f, indent=2)


class Evil:
    def __reduce__(self):
        return (os.system, ("echo sluice-ran-code > /tmp/sluice-pt-pwned",))


def bad():
    root = os.path.join(M, "bad")
    small = state_dict({"a": torch.arange(6, dtype=torch.float32).reshape(2, 3), "b": torch.ones(4)})

    def save(name, obj=None, raw=None):
        d = os.path.join(root, name)
        fresh(d)
        shutil.copy(os.path.join(root, "missing_tensor", "config.json"), d)
        p = os.path.join(d, "pytorch_model.bin")
        if raw is not None:
            open(p, "wb").write(raw)
        else:
            torch.save(obj, p)
        return p

    save("pt_code", {"a": torch.ones(2), "x": Evil()})
    buf = io.BytesIO()
    torch.save(small, buf)
    good = buf.getvalue()
    # a storage entry shorter than its elements: rewrite the zip with data/0 cut to 4 bytes
    zin = zipfile.ZipFile(io.BytesIO(good))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename.endswith("/data/0"):
                data = data[:4]
            zout.writestr(info.filename, data)
    save("pt_short_storage", raw=out.getvalue())
    save("pt_truncated", raw=good[: len(good) // 2])
    save("pt_not_state_dict", [torch.ones(2)])


if __name__ == "__main__":
    pt_f32()
    pt_sharded_bf16()
    bad()
    for n in ("pt_f32", "pt_sharded_bf16"):
        d = os.path.join(M, n)
        print(n, sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)), "bytes")

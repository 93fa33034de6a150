#!/usr/bin/env python3
"""Generates the model-eval test fixtures in tests/data/model/.

Each fixture is a tiny Mamba-1 checkpoint with random weights, written with
the `safetensors` library (independent of sluice's reader), plus
expected.jsonl: for each test document its token ids and the per-token
log-probabilities computed by an independent implementation:

  * Hugging Face transformers' MambaForCausalLM (its pure-PyTorch
    `slow_forward`, the path used on CPU), run in float64; and
  * a second pure-PyTorch float64 reference written here from mamba_ssm's
    `selective_scan_ref` / `Mamba.forward` (function `ref_logprobs`).
The two must agree to 1e-4 relative (observed: 1e-6..2e-5) (HF casts A and RMSNorm to float32
internally, so it is not exact); `logp` holds the float64 reference values,
`hf_logp` HF's. The reference also gives the variants HF does not offer
(state reset every W tokens, for --long-context).

bf16/f16 checkpoints: the expected values are computed from the rounded
weights in float64, since sluice computes in fp32 from the stored values.

Falcon-Mamba fixtures (falcon_*) come from transformers'
FalconMambaForCausalLM (its `slow_forward`) and the same reference with the
weightless RMSNorms on dt, B and C (`mixer_rms_eps`).

Run (developer machine; `make test` only reads the committed outputs):
  python3 -m venv --system-site-packages /work/venv-model   # python3-torch from Debian
  /work/venv-model/bin/pip install transformers==4.44.2 safetensors
  /work/venv-model/bin/python tests/model/gen_fixtures.py
The Mamba fixtures were made with transformers 4.44.2; the Falcon-Mamba ones
need >= 4.45 (made with 4.45.2 and Debian's torch 1.13):
  /work/venv-model/bin/python tests/model/gen_fixtures.py --only falcon_f32,falcon_bf16
"""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F
from safetensors.torch import save_file
from transformers import MambaConfig, MambaForCausalLM

try:
    from transformers import FalconMambaConfig, FalconMambaForCausalLM
except ImportError:  # transformers < 4.45
    FalconMambaConfig = FalconMambaForCausalLM = None
from transformers import Mamba2Config, Mamba2ForCausalLM

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "model")


def randomize(model, gen, emb_std):
    """Moves every parameter away from its tidy init so each one matters."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("embeddings.weight"):
                p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype) * emb_std)
            elif "norm" in name:
                p.copy_(1.0 + 0.3 * torch.randn(p.shape, generator=gen, dtype=p.dtype))
            elif name.endswith("A_log"):
                p.add_(0.5 * torch.randn(p.shape, generator=gen, dtype=p.dtype))
            elif name.endswith(".D"):
                p.copy_(1.0 + 0.5 * torch.randn(p.shape, generator=gen, dtype=p.dtype))
            elif name.endswith("dt_proj.bias"):
                p.add_(0.4 * torch.randn(p.shape, generator=gen, dtype=p.dtype))
            elif name.endswith("conv1d.bias"):
                p.copy_(0.3 * torch.randn(p.shape, generator=gen, dtype=p.dtype))
            elif name.endswith("lm_head.weight"):
                p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype) * emb_std)
            else:
                p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype) * (1.0 / math.sqrt(p.shape[-1])))


def ref_logprobs(sd, cfg, ids, reset_every=0):
    """Independent float64 Mamba-1 forward following mamba_ssm's reference.

    sd: HF-named state dict (float64). Returns log p(ids[t+1] | ids[..t]) for
    t = 0..n-2. With reset_every = W the state (conv and scan) is zeroed
    before every token t with t % W == 0."""
    d, nl = cfg["d_model"], cfg["n_layer"]
    di, N, K, R, eps = cfg["d_inner"], cfg["d_state"], cfg["d_conv"], cfg["dt_rank"], cfg["eps"]
    n = len(ids)
    x = sd["backbone.embeddings.weight"][torch.tensor(ids)]
    resid = None
    hidden = x
    for i in range(nl):
        p = lambda s: sd["backbone.layers.%d.%s" % (i, s)]
        resid = hidden if resid is None else resid + hidden
        h = resid * torch.rsqrt(resid.pow(2).mean(-1, keepdim=True) + eps) * p("norm.weight")
        xz = h @ p("mixer.in_proj.weight").T
        if cfg.get("use_bias"):
            xz = xz + p("mixer.in_proj.bias")
        xs, z = xz[:, :di], xz[:, di:]
        w = p("mixer.conv1d.weight")[:, 0, :]  # [di, K]
        cb = p("mixer.conv1d.bias")
        u = torch.zeros(n, di, dtype=torch.float64)
        for t in range(n):
            seg0 = (t // reset_every) * reset_every if reset_every else 0
            acc = cb.clone()
            for k in range(K):
                pos = t - (K - 1) + k
                if pos >= seg0:
                    acc = acc + w[:, k] * xs[pos]
            u[t] = acc
        u = F.silu(u)
        xdbl = u @ p("mixer.x_proj.weight").T
        dt, B, C = xdbl[:, :R], xdbl[:, R:R + N], xdbl[:, R + N:]
        if cfg.get("mixer_rms_eps"):  # Falcon-Mamba: weightless RMSNorm of each
            reps = cfg["mixer_rms_eps"]
            dt, B, C = [v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + reps) for v in (dt, B, C)]
        delta = F.softplus(dt @ p("mixer.dt_proj.weight").T + p("mixer.dt_proj.bias"))
        A = -torch.exp(p("mixer.A_log"))
        st = torch.zeros(di, N, dtype=torch.float64)
        y = torch.zeros(n, di, dtype=torch.float64)
        for t in range(n):
            if reset_every and t % reset_every == 0:
                st = torch.zeros(di, N, dtype=torch.float64)
            st = torch.exp(delta[t][:, None] * A) * st + (delta[t] * u[t])[:, None] * B[t][None, :]
            y[t] = st @ C[t]
        y = (y + u * p("mixer.D")) * F.silu(z)
        hidden = y @ p("mixer.out_proj.weight").T
        if cfg.get("use_bias"):
            hidden = hidden + p("mixer.out_proj.bias")
    resid = resid + hidden
    h = resid * torch.rsqrt(resid.pow(2).mean(-1, keepdim=True) + eps) * sd["backbone.norm_f.weight"]
    head = sd.get("lm_head.weight", sd["backbone.embeddings.weight"])
    logits = h @ head.T
    lp = torch.log_softmax(logits, dim=-1)
    return [float(lp[t, ids[t + 1]]) for t in range(n - 1)]


def hf_logprobs(model, ids):
    with torch.no_grad():
        out = model(torch.tensor([ids]), use_cache=False)
        lp = torch.log_softmax(out.logits[0].double(), dim=-1)
    return [float(lp[t, ids[t + 1]]) for t in range(len(ids) - 1)]


def build(name, hf_kwargs, dtype, naming, config_schema, docs_lens, seed, tokens_below, emb_std=1.0,
          shard=False, long_context=0, extra_cfg=None, falcon=False):
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    if falcon and FalconMambaConfig is None:
        sys.exit("%s: Falcon-Mamba needs transformers >= 4.45" % name)
    hcfg = (FalconMambaConfig if falcon else MambaConfig)(**hf_kwargs)
    model = (FalconMambaForCausalLM if falcon else MambaForCausalLM)(hcfg).double().eval()
    randomize(model, gen, emb_std)
    # round weights to the storage dtype, then compute the reference from the rounded values
    store = {}
    with torch.no_grad():
        for k, v in model.state_dict().items():
            r = v.to(dtype)
            store[k] = r
            v.copy_(r.double())
    sd = {k: v.double() for k, v in model.state_dict().items()}
    tied = hcfg.tie_word_embeddings
    if tied:
        sd.pop("lm_head.weight", None)
    cfg = dict(d_model=hcfg.hidden_size, n_layer=hcfg.num_hidden_layers, d_inner=hcfg.intermediate_size,
               d_state=hcfg.state_size, d_conv=hcfg.conv_kernel, dt_rank=hcfg.time_step_rank,
               eps=hcfg.layer_norm_epsilon, use_bias=hcfg.use_bias,
               mixer_rms_eps=hcfg.mixer_rms_eps if falcon else 0)

    # tensors as written
    tensors = {}
    for k, v in store.items():
        if k == "lm_head.weight" and tied and naming == "hf":
            continue  # HF's save_pretrained drops the tied duplicate
        key = k
        if naming == "mamba_ssm" and k == "backbone.embeddings.weight":
            key = "backbone.embedding.weight"
        tensors[key] = v.contiguous().clone()

    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    if shard:
        keys = sorted(tensors)
        parts = [keys[: len(keys) // 2], keys[len(keys) // 2:]]
        wm = {}
        for i, part in enumerate(parts):
            fn = "model-%05d-of-%05d.safetensors" % (i + 1, len(parts))
            save_file({k: tensors[k] for k in part}, os.path.join(d, fn), metadata={"format": "pt"})
            for k in part:
                wm[k] = fn
        total = sum(t.numel() * t.element_size() for t in tensors.values())
        with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": wm}, f, indent=2)
    else:
        save_file(tensors, os.path.join(d, "model.safetensors"), metadata={"format": "pt"})

    if config_schema == "hf":
        conf = hcfg.to_dict()
    else:
        conf = {"d_model": hcfg.hidden_size, "n_layer": hcfg.num_hidden_layers,
                "vocab_size": extra_cfg.pop("vocab_size"),
                "ssm_cfg": {"d_state": hcfg.state_size, "d_conv": hcfg.conv_kernel, "expand": hcfg.expand},
                "rms_norm": True, "residual_in_fp32": True, "fused_add_norm": True,
                "pad_vocab_size_multiple": 8, "norm_epsilon": hcfg.layer_norm_epsilon}
    if extra_cfg:
        conf.update(extra_cfg)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(conf, f, indent=2, sort_keys=True)

    rng = torch.Generator().manual_seed(seed + 1)
    worst_all = 0.0
    with open(os.path.join(d, "expected.jsonl"), "w") as f:
        for j, n in enumerate(docs_lens):
            ids = torch.randint(0, tokens_below, (n,), generator=rng).tolist()
            hf = hf_logprobs(model, ids) if n > 1 else []
            ref = ref_logprobs(sd, cfg, ids) if n > 1 else []
            # HF keeps A and RMSNorm in float32 even in a float64 model, so it
            # is ~1e-7 relative off the exact values; ours is float64 throughout.
            worst = max([abs(a - b) / max(1.0, abs(b)) for a, b in zip(hf, ref)] + [0.0])
            worst_all = max(worst_all, worst)
            if worst > 1e-4:
                sys.exit("%s doc %d: HF and the reference disagree by %g" % (name, j, worst))
            rec = {"id": "d%d" % j, "tokens": ids, "logp": ref, "nll": -sum(ref), "hf_logp": hf}
            if long_context and n > long_context:
                lc = ref_logprobs(sd, cfg, ids, reset_every=long_context)
                rec["reset_every"] = long_context
                rec["logp_reset"] = lc
                rec["nll_reset"] = -sum(lc)
            f.write(json.dumps(rec) + "\n")
    size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
    print("%-14s %7d bytes  params %d  HF vs reference worst %.2e" % (name, size, sum(v.numel() for v in tensors.values()), worst_all))


def ref_m2_logprobs(sd, cfg, ids, reset_every=0):
    """Independent float64 Mamba-2 forward (mamba_ssm's Mamba2 module with
    ngroups = 1, as a per-token recurrence): in_proj -> z | xBC | dt, causal
    conv + SiLU on xBC, dt = softplus(dt + dt_bias) per head, A = -exp(A_log)
    per head, h = exp(dt A) h + dt x B^T, y = h C + D x, y = RMSNorm(y *
    silu(z)) * norm.weight, out_proj. reset_every as in ref_logprobs."""
    d, nl, ds, N, K = cfg["d_model"], cfg["n_layer"], cfg["d_ssm"], cfg["d_state"], cfg["d_conv"]
    nh, hd, eps, neps = cfg["nheads"], cfg["headdim"], cfg["eps"], cfg["norm_eps"]
    cd = ds + 2 * N
    n = len(ids)
    hidden = sd[cfg["emb"]][torch.tensor(ids)]
    resid = None
    for i in range(nl):
        p = lambda s: sd["backbone.layers.%d.%s" % (i, s)]
        resid = hidden if resid is None else resid + hidden
        h = resid * torch.rsqrt(resid.pow(2).mean(-1, keepdim=True) + eps) * p("norm.weight")
        zx = h @ p("mixer.in_proj.weight").T
        if cfg.get("use_bias"):
            zx = zx + p("mixer.in_proj.bias")
        z, xbc, dt = zx[:, :ds], zx[:, ds:ds + cd], zx[:, ds + cd:]
        w = p("mixer.conv1d.weight")[:, 0, :]
        cb = p("mixer.conv1d.bias")
        u = torch.zeros(n, cd, dtype=torch.float64)
        for t in range(n):
            seg0 = (t // reset_every) * reset_every if reset_every else 0
            acc = cb.clone()
            for k in range(K):
                pos = t - (K - 1) + k
                if pos >= seg0:
                    acc = acc + w[:, k] * xbc[pos]
            u[t] = acc
        u = F.silu(u)
        x, B, C = u[:, :ds], u[:, ds:ds + N], u[:, ds + N:]
        dt = F.softplus(dt + p("mixer.dt_bias"))  # [n, nh]
        A = -torch.exp(p("mixer.A_log"))  # [nh]
        Dh = p("mixer.D").repeat_interleave(hd)  # [ds]
        st = torch.zeros(nh, hd, N, dtype=torch.float64)
        y = torch.zeros(n, ds, dtype=torch.float64)
        for t in range(n):
            if reset_every and t % reset_every == 0:
                st = torch.zeros(nh, hd, N, dtype=torch.float64)
            st = torch.exp(dt[t] * A)[:, None, None] * st + \
                dt[t][:, None, None] * x[t].view(nh, hd)[:, :, None] * B[t][None, None, :]
            y[t] = (st @ C[t]).reshape(ds) + Dh * x[t]
        y = y * F.silu(z)
        y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + neps) * p("mixer.norm.weight")
        hidden = y @ p("mixer.out_proj.weight").T
        if cfg.get("use_bias"):
            hidden = hidden + p("mixer.out_proj.bias")
    resid = resid + hidden
    h = resid * torch.rsqrt(resid.pow(2).mean(-1, keepdim=True) + eps) * sd["backbone.norm_f.weight"]
    head = sd.get("lm_head.weight", sd[cfg["emb"]])
    lp = torch.log_softmax(h @ head.T, dim=-1)
    return [float(lp[t, ids[t + 1]]) for t in range(n - 1)]


def build_m2(name, kw, dtype, naming, lens, seed, tokens_below, long_context=0, ssm_vocab=None):
    """A Mamba-2 fixture: transformers' Mamba2ForCausalLM (torch_forward,
    float64) against ref_m2_logprobs. naming "hf": HF names and Mamba2Config;
    "mamba_ssm": backbone.embedding and mamba_ssm's config with ssm_cfg.layer
    Mamba2 (vocab_size ssm_vocab, padded to 8)."""
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    # time_step_min ~ 0: transformers' torch_forward clamps dt to it (mamba_ssm does not)
    hcfg = Mamba2Config(n_groups=1, time_step_min=1e-12, layer_norm_epsilon=1e-5, **kw)
    model = Mamba2ForCausalLM(hcfg).double().eval()
    randomize(model, gen, 1.0)
    with torch.no_grad():
        for k, v in model.named_parameters():
            if k.endswith("dt_bias"):
                v.copy_(0.5 * torch.randn(v.shape, generator=gen, dtype=v.dtype) - 1.0)
    store = {}
    with torch.no_grad():
        for k, v in model.state_dict().items():
            store[k] = v.to(dtype)
            v.copy_(store[k].double())
    sd = {k: v.double() for k, v in model.state_dict().items()}
    tied = hcfg.tie_word_embeddings
    if tied:
        sd.pop("lm_head.weight", None)
    ds = int(hcfg.expand * hcfg.hidden_size)
    emb = "backbone.embeddings.weight" if naming == "hf" else "backbone.embedding.weight"
    if naming != "hf":
        sd[emb] = sd.pop("backbone.embeddings.weight")
    cfg = dict(d_model=hcfg.hidden_size, n_layer=hcfg.num_hidden_layers, d_ssm=ds, d_state=hcfg.state_size,
               d_conv=hcfg.conv_kernel, nheads=hcfg.num_heads, headdim=hcfg.head_dim, eps=1e-5, norm_eps=1e-5,
               use_bias=hcfg.use_bias, emb=emb)
    tensors = {}
    for k, v in store.items():
        if k == "lm_head.weight" and tied:
            continue
        key = emb if k == "backbone.embeddings.weight" else k
        tensors[key] = v.contiguous().clone()
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    save_file(tensors, os.path.join(d, "model.safetensors"), metadata={"format": "pt"})
    if naming == "hf":
        conf = hcfg.to_dict()
    else:
        conf = {"d_model": hcfg.hidden_size, "n_layer": hcfg.num_hidden_layers, "d_intermediate": 0,
                "vocab_size": ssm_vocab, "pad_vocab_size_multiple": 8, "rms_norm": True, "residual_in_fp32": True,
                "fused_add_norm": True, "tie_embeddings": tied, "attn_layer_idx": [], "attn_cfg": {},
                "ssm_cfg": {"layer": "Mamba2", "d_state": hcfg.state_size, "d_conv": hcfg.conv_kernel,
                            "expand": hcfg.expand, "headdim": hcfg.head_dim, "ngroups": 1,
                            "bias": hcfg.use_bias, "conv_bias": hcfg.use_conv_bias,
                            "chunk_size": hcfg.chunk_size}}
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(conf, f, indent=2, sort_keys=True)
    rng = torch.Generator().manual_seed(seed + 1)
    worst_all = 0.0
    with open(os.path.join(d, "expected.jsonl"), "w") as f:
        for j, n in enumerate(lens):
            ids = torch.randint(0, tokens_below, (n,), generator=rng).tolist()
            hf = hf_logprobs(model, ids) if n > 1 else []
            ref = ref_m2_logprobs(sd, cfg, ids) if n > 1 else []
            worst = max([abs(a - b) / max(1.0, abs(b)) for a, b in zip(hf, ref)] + [0.0])
            worst_all = max(worst_all, worst)
            if worst > 1e-4:
                sys.exit("%s doc %d: HF and the reference disagree by %g" % (name, j, worst))
            rec = {"id": "d%d" % j, "tokens": ids, "logp": ref, "nll": -sum(ref), "hf_logp": hf}
            if long_context and n > long_context:
                lc = ref_m2_logprobs(sd, cfg, ids, reset_every=long_context)
                rec["reset_every"] = long_context
                rec["logp_reset"] = lc
                rec["nll_reset"] = -sum(lc)
            f.write(json.dumps(rec) + "\n")
    size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
    print("%-14s %7d bytes  HF vs reference worst %.2e" % (name, size, worst_all))


def main(only=None):
    if only is not None:
        global build, build_m2
        full, full_m2 = build, build_m2
        build = lambda name, *a, **k: full(name, *a, **k) if name in only else None
        build_m2 = lambda name, *a, **k: full_m2(name, *a, **k) if name in only else None
    lens = [1, 2, 5, 37, 300]
    # 1: HF names and config, f32, tied, d_state 8
    build("hf_f32", dict(vocab_size=64, hidden_size=32, state_size=8, num_hidden_layers=2, conv_kernel=4, expand=2,
                         time_step_rank="auto", layer_norm_epsilon=1e-5, use_bias=False, tie_word_embeddings=True),
          torch.float32, "hf", "hf", lens, seed=1, tokens_below=64, long_context=16)
    # 2: mamba_ssm names and config: vocab 77 padded to 80, lm_head stored too, eps 1e-6
    build("ssm_f32", dict(vocab_size=80, hidden_size=48, state_size=16, num_hidden_layers=3, conv_kernel=4, expand=2,
                          time_step_rank="auto", layer_norm_epsilon=1e-6, use_bias=False, tie_word_embeddings=False),
          torch.float32, "mamba_ssm", "mamba_ssm", lens + [700], seed=2, tokens_below=77,
          extra_cfg={"vocab_size": 77})
    # 3: bf16, untied lm_head, d_state 4, kernel 3, rank 5, biases in in_proj/out_proj
    build("hf_bf16", dict(vocab_size=40, hidden_size=32, state_size=4, num_hidden_layers=2, conv_kernel=3, expand=2,
                          time_step_rank=5, layer_norm_epsilon=1e-5, use_bias=True, tie_word_embeddings=False),
          torch.bfloat16, "hf", "hf", lens, seed=3, tokens_below=40)
    # 4: f16, sharded with an index
    build("sharded_f16", dict(vocab_size=48, hidden_size=24, state_size=16, num_hidden_layers=2, conv_kernel=4,
                              expand=2, time_step_rank="auto", layer_norm_epsilon=1e-5, use_bias=False,
                              tie_word_embeddings=True),
          torch.float16, "hf", "hf", lens, seed=4, tokens_below=48, shard=True)
    # 5: Falcon-Mamba, f32, tied, default mixer_rms_eps (1e-6), long-context reference
    build("falcon_f32", dict(vocab_size=56, hidden_size=32, state_size=8, num_hidden_layers=2, conv_kernel=4, expand=2,
                             time_step_rank="auto", layer_norm_epsilon=1e-5, use_bias=False,
                             tie_word_embeddings=True),
          torch.float32, "hf", "hf", lens, seed=5, tokens_below=56, long_context=16, falcon=True)
    # 6: Falcon-Mamba, bf16, untied, biases, dt rank 5 (normalized over 5 values), mixer_rms_eps 1e-3
    build("falcon_bf16", dict(vocab_size=40, hidden_size=32, state_size=4, num_hidden_layers=2, conv_kernel=3,
                              expand=2, time_step_rank=5, layer_norm_epsilon=1e-5, use_bias=True,
                              tie_word_embeddings=False, mixer_rms_eps=1e-3),
          torch.bfloat16, "hf", "hf", lens, seed=6, tokens_below=40, falcon=True)
    # 7: Mamba-2, HF names and config, f32, tied, 4 heads of 16, long-context reference.
    # chunk_size 512 (one chunk): transformers 4.45.2's torch_forward gives other numbers when a
    # sequence spans several chunks (2e-2 off its own one-chunk result and the recurrence here).
    build_m2("m2_f32", dict(vocab_size=64, hidden_size=32, state_size=16, num_heads=4, head_dim=16, expand=2,
                            num_hidden_layers=2, conv_kernel=4, use_bias=False, chunk_size=512,
                            tie_word_embeddings=True),
             torch.float32, "hf", lens, seed=7, tokens_below=64, long_context=16)
    # 8: Mamba-2, mamba_ssm names and config (ssm_cfg.layer Mamba2), bf16, untied, biases,
    # 8 heads of 8, d_state 8, conv 3, vocab 77 padded to 80
    build_m2("m2_ssm_bf16", dict(vocab_size=80, hidden_size=32, state_size=8, num_heads=8, head_dim=8, expand=2,
                                 num_hidden_layers=2, conv_kernel=3, use_bias=True, chunk_size=512,
                                 tie_word_embeddings=False),
             torch.bfloat16, "mamba_ssm", lens, seed=8, tokens_below=77, ssm_vocab=77)


def bad_models():
    """Broken model directories for the error tests (tests/data/model/bad/)."""
    kw = dict(vocab_size=16, hidden_size=8, state_size=4, num_hidden_layers=2, conv_kernel=4, expand=2,
              time_step_rank="auto", use_bias=False, tie_word_embeddings=True)
    torch.manual_seed(9)
    model = MambaForCausalLM(MambaConfig(**kw))
    good = {k: v.float().contiguous().clone() for k, v in model.state_dict().items() if k != "lm_head.weight"}
    conf = MambaConfig(**kw).to_dict()
    root = os.path.join(OUT, "bad")

    def write(name, tensors, config, raw_config=None, index=None):
        d = os.path.join(root, name)
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            os.remove(os.path.join(d, f))
        with open(os.path.join(d, "config.json"), "w") as f:
            f.write(raw_config if raw_config is not None else json.dumps(config, indent=1))
        if index:
            files = {fn: names for fn, names in index.items() if fn != "extra_map"}
            for fn, names in files.items():
                save_file({k: tensors[k] for k in names}, os.path.join(d, fn))
            wm = {k: fn for fn, names in files.items() for k in names}
            wm.update(index.get("extra_map", {}))
            with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
                json.dump({"metadata": {}, "weight_map": wm}, f)
        elif tensors is not None:
            save_file(tensors, os.path.join(d, "model.safetensors"))

    t = dict(good); del t["backbone.layers.1.mixer.D"]
    write("missing_tensor", t, conf)
    write("more_layers_in_config", good, dict(conf, num_hidden_layers=3, n_layer=3))
    write("fewer_layers_in_config", good, dict(conf, num_hidden_layers=1, n_layer=1))
    write("state_size_mismatch", good, dict(conf, state_size=8))
    t = dict(good); t["backbone.layers.0.mixer.A_log"] = t["backbone.layers.0.mixer.A_log"].to(torch.int32)
    write("int_dtype", t, conf)
    t = dict(good); t["backbone.layers.0.mixer.dt_bias"] = torch.zeros(2)
    write("mamba2_tensor", t, conf)
    write("no_weights", None, conf)
    write("bad_config_json", good, None, raw_config='{"hidden_size": 8, "num_hidden_layers": ')
    write("config_missing_width", good, {"num_hidden_layers": 2, "vocab_size": 16})
    t = dict(good); t["backbone.embeddings.weight"] = torch.zeros(20, 8)
    write("vocab_mismatch", t, conf)
    names = sorted(good)
    write("index_wrong_file", good, conf, index={"model-00001-of-00002.safetensors": names[:5],
                                                 "model-00002-of-00002.safetensors": names[5:],
                                                 "extra_map": {names[0]: "model-00002-of-00002.safetensors"}})
    print("bad models in", root)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--only":
        main(only=set(sys.argv[2].split(",")))
    else:
        main()
        bad_models()

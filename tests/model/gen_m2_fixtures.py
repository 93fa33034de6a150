#!/usr/bin/env python3
"""Generates the Mamba-2 fixtures that transformers cannot make
(tests/data/model/m2g_f16, m2_mlp_bf16): n_groups > 1, gated-MLP blocks
(mamba_ssm's d_intermediate > 0), dt limits, f16 and bf16 weights.

transformers' Mamba2ForCausalLM has no MLP blocks, and its torch_forward up
to at least 4.46 pairs heads with groups by `repeat` instead of
`repeat_interleave` and normalizes the gated RMSNorm over all of d_ssm
instead of per group, so the references here are two float64
implementations written from mamba_ssm's Mamba2 module and Block:

  * `forward(..., ssd="recurrence")`: the SSD token by token
    (mamba_ssm's Mamba2.step: S = exp(dt A) S + dt x B^T, y = S C + D x);
  * `forward(..., ssd="chunked")`: the SSD as ssd_minimal_discrete of the
    Mamba-2 paper (Dao & Gu 2024, listing 1): segsum decays within chunks of
    the config's chunk_size, chunk states, the recurrence across chunks,
    state-to-output; written here from the paper's equations.

They must agree to 1e-9 relative; `logp` holds the recurrence's values. The
weights are random (seeded) and rounded to the storage dtype before the
reference runs, so the expected values are exact for the stored weights.
Needs only torch (Debian's python3-torch); the safetensors files are
written directly (8-byte header length, JSON header, raw little-endian data).

Run: /usr/bin/python3 tests/model/gen_m2_fixtures.py   (output is deterministic)
"""
import json
import math
import os
import struct

import torch
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "model")
DT_NAMES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16"}


def save_safetensors(tensors, path):
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for k in sorted(tensors):
        t = tensors[k].contiguous()
        raw = (t.view(torch.int16) if t.dtype in (torch.float16, torch.bfloat16) else t).numpy().tobytes()
        header[k] = {"dtype": DT_NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def rms(v, eps):
    return v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + eps)


def ssd_recurrence(x, dt, A, B, C, D, heads_per_group, state=None):
    """x [n, H, P], dt [n, H] (after softplus/clamp), A [H], B, C [n, G, N]."""
    n, H, P = x.shape
    N = B.shape[-1]
    Bh, Ch = B.repeat_interleave(heads_per_group, dim=1), C.repeat_interleave(heads_per_group, dim=1)  # [n, H, N]
    S = torch.zeros(H, P, N, dtype=torch.float64) if state is None else state
    y = torch.zeros(n, H, P, dtype=torch.float64)
    for t in range(n):
        S = torch.exp(dt[t] * A)[:, None, None] * S + (dt[t][:, None] * x[t])[:, :, None] * Bh[t][:, None, :]
        y[t] = torch.einsum("hpn,hn->hp", S, Ch[t]) + D[:, None] * x[t]
    return y


def segsum(a):
    """a [..., T] -> [..., T, T]: sum of a[s+1..t] for s <= t, -inf above the diagonal."""
    T = a.shape[-1]
    cs = torch.cumsum(a, dim=-1)
    out = cs[..., :, None] - cs[..., None, :]
    return out.masked_fill(~torch.tril(torch.ones(T, T, dtype=torch.bool)), -math.inf)


def ssd_chunked(x, dt, A, B, C, D, heads_per_group, Q):
    """The same function as ssd_recurrence (zero initial state) in the chunked form."""
    n, H, P = x.shape
    pad = -n % Q
    Bh, Ch = B.repeat_interleave(heads_per_group, dim=1), C.repeat_interleave(heads_per_group, dim=1)
    X = F.pad(x * dt[:, :, None], (0, 0, 0, 0, 0, pad))  # zero tokens after the end change nothing before it
    a = F.pad(dt * A, (0, 0, 0, pad))
    Bp, Cp = F.pad(Bh, (0, 0, 0, 0, 0, pad)), F.pad(Ch, (0, 0, 0, 0, 0, pad))
    c = (n + pad) // Q
    X, a, Bp, Cp = X.view(c, Q, H, P), a.view(c, Q, H).permute(2, 0, 1), Bp.view(c, Q, H, -1), Cp.view(c, Q, H, -1)
    acs = torch.cumsum(a, dim=-1)  # [H, c, Q]
    L = torch.exp(segsum(a))  # [H, c, Q, Q]
    y_diag = torch.einsum("clhn,cshn,hcls,cshp->clhp", Cp, Bp, L, X)
    decay = torch.exp(acs[:, :, -1:] - acs)  # [H, c, Q]
    states = torch.einsum("clhn,hcl,clhp->chpn", Bp, decay, X)
    states = torch.cat([torch.zeros_like(states[:1]), states], dim=0)
    chunk_decay = torch.exp(segsum(F.pad(acs[:, :, -1], (1, 0))))  # [H, c+1, c+1]
    states = torch.einsum("hzc,chpn->zhpn", chunk_decay, states)[:-1]  # state entering each chunk
    y_off = torch.einsum("clhn,chpn,hcl->clhp", Cp, states, torch.exp(acs))
    y = (y_diag + y_off).reshape(c * Q, H, P)[:n]
    return y + D[:, None] * x


def forward(sd, cfg, ids, reset_every=0, ssd="recurrence"):
    """log p(ids[t+1] | ids[..t]) in float64; reset_every W: every state zeroed before t % W == 0."""
    d, ds, N, K, G = cfg["d_model"], cfg["d_ssm"], cfg["d_state"], cfg["d_conv"], cfg["ngroups"]
    H, P, eps, geps = cfg["nheads"], cfg["headdim"], cfg["eps"], cfg["gnorm_eps"]
    cd, n = ds + 2 * G * N, len(ids)
    segs = [(s, min(n, s + reset_every)) for s in range(0, n, reset_every)] if reset_every else [(0, n)]
    hidden, resid = sd[cfg["emb"]][torch.tensor(ids)], None
    for i in range(cfg["n_layer"]):
        p = lambda s: sd["backbone.layers.%d.%s" % (i, s)]
        resid = hidden if resid is None else resid + hidden
        zx = rms(resid, eps) * p("norm.weight") @ p("mixer.in_proj.weight").T
        if cfg["bias"]:
            zx = zx + p("mixer.in_proj.bias")
        z, xbc, dtr = zx[:, :ds], zx[:, ds:ds + cd], zx[:, ds + cd:]
        w, cb = p("mixer.conv1d.weight")[:, 0, :], p("mixer.conv1d.bias")
        u = torch.zeros(n, cd, dtype=torch.float64)
        for s0, s1 in segs:
            for t in range(s0, s1):
                u[t] = cb + sum(w[:, k] * xbc[t - (K - 1) + k] for k in range(K) if t - (K - 1) + k >= s0)
        u = F.silu(u)
        x, B, C = u[:, :ds].view(n, H, P), u[:, ds:ds + G * N].view(n, G, N), u[:, ds + G * N:].view(n, G, N)
        dt = F.softplus(dtr + p("mixer.dt_bias")).clamp(cfg["dt_min"], cfg["dt_max"])
        A, D = -torch.exp(p("mixer.A_log")), p("mixer.D")
        y = torch.zeros(n, H, P, dtype=torch.float64)
        for s0, s1 in segs:
            args = (x[s0:s1], dt[s0:s1], A, B[s0:s1], C[s0:s1], D, H // G)
            y[s0:s1] = ssd_recurrence(*args) if ssd == "recurrence" else ssd_chunked(*args, cfg["chunk_size"])
        y = y.reshape(n, ds) * F.silu(z)
        y = rms(y.view(n, G, ds // G), geps).reshape(n, ds) * p("mixer.norm.weight")  # RMSNormGated, group_size ds/G
        hidden = y @ p("mixer.out_proj.weight").T
        if cfg["bias"]:
            hidden = hidden + p("mixer.out_proj.bias")
        if cfg["d_mlp"]:  # Block with GatedMLP: residual += hidden; fc2(y * silu(gate)), [y | gate] = fc1(norm2(residual))
            resid = resid + hidden
            h1 = rms(resid, eps) * p("norm2.weight") @ p("mlp.fc1.weight").T
            hidden = (h1[:, :cfg["d_mlp"]] * F.silu(h1[:, cfg["d_mlp"]:])) @ p("mlp.fc2.weight").T
    resid = resid + hidden
    logits = rms(resid, eps) * sd["backbone.norm_f.weight"] @ sd.get("lm_head.weight", sd[cfg["emb"]]).T
    lp = torch.log_softmax(logits, dim=-1)
    return [float(lp[t, ids[t + 1]]) for t in range(n - 1)]


def build(name, naming, dtype, seed, d_model, n_layer, vocab_size, vocab_rows, d_state, headdim, ngroups, d_conv,
          bias, tied, d_intermediate, eps, dt_limit, chunk_size, lens, long_context=0):
    gen = torch.Generator().manual_seed(seed)
    rnd = lambda *shape: torch.randn(*shape, generator=gen, dtype=torch.float64)
    ds = 2 * d_model
    H, N, G = ds // headdim, d_state, ngroups
    cd = ds + 2 * G * N
    dip = ds + cd + H
    d_mlp = (d_intermediate + 127) // 128 * 128 if d_intermediate else 0
    emb = "backbone.embeddings.weight" if naming == "hf" else "backbone.embedding.weight"
    sd = {emb: rnd(vocab_rows, d_model), "backbone.norm_f.weight": 1 + 0.3 * rnd(d_model)}
    if not tied:
        sd["lm_head.weight"] = rnd(vocab_rows, d_model)
    for i in range(n_layer):
        L = "backbone.layers.%d." % i
        sd[L + "norm.weight"] = 1 + 0.3 * rnd(d_model)
        sd[L + "mixer.in_proj.weight"] = rnd(dip, d_model) / math.sqrt(d_model)
        sd[L + "mixer.conv1d.weight"] = rnd(cd, 1, d_conv) / math.sqrt(d_conv)
        sd[L + "mixer.conv1d.bias"] = 0.3 * rnd(cd)
        sd[L + "mixer.dt_bias"] = 0.5 * rnd(H) - 1.0
        sd[L + "mixer.A_log"] = torch.log(torch.arange(1, H + 1, dtype=torch.float64)) + 0.5 * rnd(H)
        sd[L + "mixer.D"] = 1 + 0.5 * rnd(H)
        sd[L + "mixer.norm.weight"] = 1 + 0.3 * rnd(ds)
        sd[L + "mixer.out_proj.weight"] = rnd(d_model, ds) / math.sqrt(ds)
        if bias:
            sd[L + "mixer.in_proj.bias"] = 0.2 * rnd(dip)
            sd[L + "mixer.out_proj.bias"] = 0.2 * rnd(d_model)
        if d_mlp:
            sd[L + "norm2.weight"] = 1 + 0.3 * rnd(d_model)
            sd[L + "mlp.fc1.weight"] = rnd(2 * d_mlp, d_model) / math.sqrt(d_model)
            sd[L + "mlp.fc2.weight"] = rnd(d_model, d_mlp) / math.sqrt(d_mlp)
    store = {k: v.to(dtype) for k, v in sd.items()}
    sd = {k: v.double() for k, v in store.items()}  # the reference sees the stored values
    cfg = dict(d_model=d_model, n_layer=n_layer, d_ssm=ds, d_state=N, d_conv=d_conv, ngroups=G, nheads=H,
               headdim=headdim, eps=eps, gnorm_eps=eps if naming == "hf" else 1e-5, bias=bias, emb=emb, d_mlp=d_mlp,
               dt_min=dt_limit[0], dt_max=dt_limit[1], chunk_size=chunk_size)

    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    save_safetensors(store, os.path.join(d, "model.safetensors"))
    if naming == "hf":
        conf = {"model_type": "mamba2", "architectures": ["Mamba2ForCausalLM"], "hidden_size": d_model,
                "num_hidden_layers": n_layer, "vocab_size": vocab_size, "state_size": N, "num_heads": H,
                "head_dim": headdim, "expand": 2, "n_groups": G, "conv_kernel": d_conv, "use_bias": bias,
                "use_conv_bias": True, "layer_norm_epsilon": eps, "time_step_limit": list(dt_limit),
                "tie_word_embeddings": tied, "chunk_size": chunk_size, "rms_norm": True, "residual_in_fp32": True,
                "eos_token_id": 2, "pad_token_id": 1, "bos_token_id": 0}
    else:
        conf = {"d_model": d_model, "n_layer": n_layer, "d_intermediate": d_intermediate, "vocab_size": vocab_size,
                "pad_vocab_size_multiple": 8, "rms_norm": True, "residual_in_fp32": True, "fused_add_norm": True,
                "tie_embeddings": tied, "attn_layer_idx": [], "attn_cfg": {}, "norm_epsilon": eps,
                "ssm_cfg": {"layer": "Mamba2", "d_state": N, "d_conv": d_conv, "expand": 2, "headdim": headdim,
                            "ngroups": G, "bias": bias, "conv_bias": True, "chunk_size": chunk_size,
                            "dt_limit": list(dt_limit)}}
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(conf, f, indent=2, sort_keys=True)  # Infinity as Python writes it

    rng = torch.Generator().manual_seed(seed + 1)
    worst = 0.0
    with open(os.path.join(d, "expected.jsonl"), "w") as f:
        for j, n in enumerate(lens):
            ids = torch.randint(0, vocab_size, (n,), generator=rng).tolist()
            ref = forward(sd, cfg, ids) if n > 1 else []
            chk = forward(sd, cfg, ids, ssd="chunked") if n > 1 else []
            worst = max([worst] + [abs(a - b) / max(1.0, abs(b)) for a, b in zip(chk, ref)])
            rec = {"id": "d%d" % j, "tokens": ids, "logp": ref, "nll": -sum(ref), "chunked_logp": chk}
            if long_context and n > long_context:
                lc = forward(sd, cfg, ids, reset_every=long_context)
                lc2 = forward(sd, cfg, ids, reset_every=long_context, ssd="chunked")
                worst = max([worst] + [abs(a - b) / max(1.0, abs(b)) for a, b in zip(lc2, lc)])
                rec.update(reset_every=long_context, logp_reset=lc, nll_reset=-sum(lc))
            f.write(json.dumps(rec) + "\n")
    assert worst < 1e-9, "%s: recurrence and chunked SSD disagree by %g" % (name, worst)
    size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
    print("%-12s %7d bytes  recurrence vs chunked worst %.1e" % (name, size, worst))


def main():
    lens = [1, 2, 5, 37, 64, 300]
    # transformers' names and config: 8 heads of 8 in 2 groups, f16, tied, dt clamped to [0, 0.6],
    # chunk_size 16 (the chunked reference crosses many chunks), long-context reference
    build("m2g_f16", "hf", torch.float16, seed=21, d_model=32, n_layer=2, vocab_size=64, vocab_rows=64, d_state=16,
          headdim=8, ngroups=2, d_conv=4, bias=False, tied=True, d_intermediate=0, eps=1e-5,
          dt_limit=(0.0, 0.6), chunk_size=16, lens=lens, long_context=16)
    # mamba_ssm's names and config: gated-MLP blocks (d_intermediate 40 -> 128), 8 heads of 8 in 4 groups,
    # bf16, untied, biases, conv 3, norm_epsilon 1e-6 (the gated norm keeps 1e-5), vocab 77 padded to 80
    build("m2_mlp_bf16", "mamba_ssm", torch.bfloat16, seed=22, d_model=32, n_layer=2, vocab_size=77, vocab_rows=80,
          d_state=8, headdim=8, ngroups=4, d_conv=3, bias=True, tied=False, d_intermediate=40, eps=1e-6,
          dt_limit=(0.0, float("inf")), chunk_size=16, lens=lens)


if __name__ == "__main__":
    main()

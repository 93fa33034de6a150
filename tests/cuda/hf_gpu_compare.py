#!/usr/bin/env python3
"""sluice's CUDA forward pass against Hugging Face transformers' on the same GPU.

Run by scripts/device-check on a machine with a GPU, PyTorch and transformers
(no network needed): for each committed checkpoint fixture that transformers
can load (tests/data/model: Mamba-1, Falcon-Mamba, Mamba-2; F32, BF16, sharded
F16) and for random checkpoints at mamba-130m's and mamba2-130m's shapes
(written here by transformers' own initialisation and save_pretrained), the
per-token log-probabilities of the same documents from

  * transformers' MambaForCausalLM / FalconMambaForCausalLM / Mamba2ForCausalLM
    on the GPU in float32 (its pure-PyTorch path; TF32 off, PyTorch's default),
  * sluice's CUDA backend (tests/cuda/score_dump, packed scoring) with TF32
    off, so both sides compute in fp32 (bf16 checkpoints: sluice rounds the
    GEMM activations to bf16 as its docs say; transformers upcasts to fp32),

and prints the worst |diff| / (atol + rtol |hf|) with mamba_ssm's fp32
tolerances (rtol 6e-4, atol 2e-3). Exit status 1 when an fp32 comparison
exceeds 1; bf16 checkpoints are reported, bounded by mamba_ssm's bf16
tolerances (rtol 3e-2, atol 5e-2).

usage: hf_gpu_compare.py SCORE_DUMP SRC_DIR OUT_JSON
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import torch
import transformers as tf

DEV = os.environ.get("HF_COMPARE_DEVICE", "cuda")  # cpu: a dry run of this script without a GPU
SMALL = os.environ.get("HF_COMPARE_SMALL") == "1"  # fixtures only
F32_TOL = (6e-4, 2e-3)
BF16_TOL = (3e-2, 5e-2)


def hf_logp(model, docs):
    out = []
    with torch.no_grad():
        for toks in docs:
            if len(toks) < 2:
                out.append([])
                continue
            ids = torch.tensor([toks], device=DEV)
            logits = model(ids, use_cache=False).logits[0, :-1].float()
            lp = torch.log_softmax(logits, dim=-1).gather(1, ids[0, 1:, None])[:, 0]
            out.append(lp.double().cpu().tolist())
    return out


def sluice_logp(score_dump, model_dir, docs):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for i, t in enumerate(docs):
            f.write(json.dumps({"id": f"d{i}", "tokens": t}) + "\n")
        path = f.name
    try:
        r = subprocess.run([score_dump, "--device", DEV, "--tf32", "0", model_dir, path],
                           capture_output=True, text=True, check=False)
    finally:
        os.unlink(path)
    if r.returncode != 0:
        raise RuntimeError(f"score_dump {model_dir}: {r.stderr.strip()}")
    return [json.loads(line)["logp"] for line in r.stdout.splitlines()]


def worst(got, want, tol):
    rtol, atol = tol
    w, m = 0.0, 0.0
    for g, h in zip(got, want):
        assert len(g) == len(h), (len(g), len(h))
        for a, b in zip(g, h):
            d = abs(a - b)
            m = max(m, d)
            w = max(w, d / (atol + rtol * abs(b)))
    return w, m


def load(cls, path, dtype=torch.float32):
    try:
        return cls.from_pretrained(path, dtype=dtype).to(DEV).eval()
    except TypeError:  # transformers < 4.56 names it torch_dtype
        return cls.from_pretrained(path, torch_dtype=dtype).to(DEV).eval()


def main():
    score_dump, src, out_json = sys.argv[1:4]
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    results, failed = [], False
    where = torch.cuda.get_device_name() if DEV == "cuda" else "cpu (dry run)"
    print(f"transformers {tf.__version__}, torch {torch.__version__}, {where}")

    def report(name, kind, got, want):
        nonlocal failed
        tol = BF16_TOL if kind == "bf16" else F32_TOL
        w, m = worst(got, want, tol)
        ok = w <= 1.0
        failed |= not ok
        n = sum(len(x) for x in want)
        print(f"  {name:28s} {kind}: {n:6d} predictions, max |diff| {m:.3e}, "
              f"worst |diff|/tol {w:.3e} ({'rtol %g atol %g' % tol}) {'ok' if ok else 'EXCEEDS'}")
        results.append({"model": name, "precision": kind, "predictions": n, "max_abs_diff": m,
                        "worst_over_tol": w, "ok": ok})

    fixtures = [("hf_f32", tf.MambaForCausalLM, "f32"), ("hf_bf16", tf.MambaForCausalLM, "bf16"),
                ("sharded_f16", tf.MambaForCausalLM, "f32"),
                ("falcon_f32", tf.FalconMambaForCausalLM, "f32"),
                ("falcon_bf16", tf.FalconMambaForCausalLM, "bf16"),
                ("m2_f32", tf.Mamba2ForCausalLM, "f32")]
    for name, cls, kind in fixtures:
        d = os.path.join(src, "tests/data/model", name)
        docs = [json.loads(line)["tokens"] for line in open(os.path.join(d, "expected.jsonl"))]
        try:
            want = hf_logp(load(cls, d), docs)
        except Exception as e:  # a fixture this transformers cannot load: say so
            print(f"  {name:28s} transformers cannot run it: {type(e).__name__}: {e}")
            results.append({"model": name, "error": str(e)})
            continue
        try:
            got = sluice_logp(score_dump, d, docs)
        except RuntimeError as e:
            print(f"  {name:28s} sluice: {e}")
            results.append({"model": name, "error": str(e)})
            failed = True
            continue
        report(name, kind, got, want)

    # mamba-130m and mamba2-130m shapes, random weights from transformers' own init
    g = torch.Generator().manual_seed(0)
    lens = [1000, 517, 64, 2]
    shapes = [("mamba-130m shape", tf.MambaConfig, tf.MambaForCausalLM,
               dict(hidden_size=768, num_hidden_layers=24, vocab_size=50280, state_size=16, expand=2,
                    conv_kernel=4, time_step_rank=48, tie_word_embeddings=True)),
              ("mamba2-130m shape", tf.Mamba2Config, tf.Mamba2ForCausalLM,
               dict(hidden_size=768, num_hidden_layers=24, vocab_size=50280, state_size=128, expand=2,
                    conv_kernel=4, num_heads=24, head_dim=64, n_groups=1, chunk_size=256,
                    tie_word_embeddings=True))]
    for name, ccls, mcls, kw in [] if SMALL else shapes:
        torch.manual_seed(0)
        docs = [torch.randint(0, 50280, (n,), generator=g).tolist() for n in lens]
        with tempfile.TemporaryDirectory() as d:
            t0 = time.time()
            model = mcls(ccls(**kw)).to(DEV).eval()
            model.save_pretrained(d, safe_serialization=True)
            want = hf_logp(model, docs)
            del model
            if DEV == "cuda":
                torch.cuda.empty_cache()
            try:
                got = sluice_logp(score_dump, d, docs)
                report(f"{name} ({sum(lens)} tok)", "f32", got, want)
            except RuntimeError as e:
                print(f"  {name:28s} sluice: {e}")
                results.append({"model": name, "error": str(e)})
                failed = True
            print(f"    ({time.time() - t0:.1f} s)")
    with open(out_json, "w") as f:
        json.dump(results, f, indent=1)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

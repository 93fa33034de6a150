#!/usr/bin/env python3
"""Peer for bench/model.sh and bench/model_mamba2.sh: Hugging Face transformers'
MambaForCausalLM (PyTorch, CPU: its pure-PyTorch slow_forward) or, with CLASS
Mamba2ForCausalLM, its Mamba-2 (torch_forward) scoring the same documents as
`sluice score`.

usage: model_peer.py MODEL_DIR DOCS.jsonl MAX_TOKENS THREADS [CLASS]
Prints one line per document {"id", "tokens", "nll"} and a last line
{"peer_seconds": wall seconds of the forward passes, "tokens": N}.
Exits 3 when torch/transformers/safetensors are not importable (the bench then
skips the peer)."""
import json
import sys
import time

try:
    import torch
    import transformers

    CLASS = getattr(transformers, sys.argv[5] if len(sys.argv) > 5 else "MambaForCausalLM")
except Exception:  # noqa: BLE001 - any import problem means "no peer here"
    sys.exit(3)


def main():
    model_dir, docs, max_tokens, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    torch.set_num_threads(threads)
    model = CLASS.from_pretrained(model_dir, torch_dtype=torch.float32).eval()
    total_t, total_n = 0.0, 0
    for line in open(docs):
        d = json.loads(line)
        ids = d["ids"][:max_tokens]
        x = torch.tensor([ids])
        t0 = time.perf_counter()
        with torch.no_grad():
            logits = model(x, use_cache=False).logits[0].float()
            lp = torch.log_softmax(logits, dim=-1)
            nll = -float(lp[torch.arange(len(ids) - 1), x[0, 1:]].double().sum())
        total_t += time.perf_counter() - t0
        total_n += len(ids) - 1
        print(json.dumps({"id": d["id"], "tokens": len(ids) - 1, "nll": nll}))
    print(json.dumps({"peer_seconds": total_t, "tokens": total_n}))


if __name__ == "__main__":
    main()

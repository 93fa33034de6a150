#!/usr/bin/env python3
"""Peers of `sluice dedup minhash` for bench/dedup.sh (run in a venv with
datatrove[processing]==0.10.1, spacy, rensa, datasketch).

  dedup_peer.py sign-datatrove CORPUS WORK   MinhashDedupSignature, 1 task, 1 worker
  dedup_peer.py sign-rensa CORPUS            rensa RMinHash(num_perm=112, seed=1)
  dedup_peer.py sign-datasketch CORPUS       datasketch MinHash(num_perm=112, seed=1)
  dedup_peer.py dedup-datatrove CORPUS WORK WORKERS STAGE
                                             one of datatrove's four stages
                                             (signature|buckets|cluster|filter)
                                             with WORKERS tasks/workers

The sign-* peers print "docs N cpu_s X": the CPU time of reading the JSON
Lines and signing every document (rensa and datasketch get the text lowered
and split at whitespace into word 5-grams, which is cheaper than the
simplify_text + spaCy tokenizer that datatrove and sluice run: favourable to
them). Parameters: 5-grams, 14 x 8 = 112 permutations, seed 1."""
import json
import os
import sys
import time


def shingles(text, n=5):
    w = text.lower().split()
    return [" ".join(w[i:i + n]) for i in range(len(w) - n + 1)]


def docs(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            yield json.loads(line)["text"]


def main():
    what, corpus = sys.argv[1], sys.argv[2]
    t0 = time.process_time()
    n = 0
    if what == "sign-rensa":
        from rensa import RMinHash
        for text in docs(corpus):
            m = RMinHash(num_perm=112, seed=1)
            m.update(shingles(text))
            m.digest()
            n += 1
    elif what == "sign-datasketch":
        from datasketch import MinHash
        for text in docs(corpus):
            m = MinHash(num_perm=112, seed=1)
            m.update_batch([s.encode("utf-8") for s in shingles(text)])
            n += 1
    else:
        from datatrove.executor import LocalPipelineExecutor
        from datatrove.pipeline.dedup.minhash import (MinhashConfig, MinhashDedupBuckets, MinhashDedupCluster,
                                                      MinhashDedupFilter, MinhashDedupSignature)
        from datatrove.pipeline.readers import JsonlReader
        from datatrove.pipeline.writers import JsonlWriter
        work = sys.argv[3]
        cfg = MinhashConfig()  # 5-grams, 14 x 8, seed 1, xxhash64
        cdir = os.path.dirname(os.path.abspath(corpus))
        glob = os.path.basename(corpus)
        sig, bk, cl, out = (os.path.join(work, x) for x in ("sig", "buckets", "clusters", "out"))
        logs = os.path.join(work, "logs")
        if what == "sign-datatrove":
            LocalPipelineExecutor(pipeline=[JsonlReader(cdir, glob_pattern=glob), MinhashDedupSignature(sig, config=cfg)],
                                  tasks=1, workers=1, logging_dir=logs + "-sig").run()
        else:
            w, stage = int(sys.argv[4]), sys.argv[5]
            if stage == "signature":
                p, tasks = [JsonlReader(cdir, glob_pattern=glob), MinhashDedupSignature(sig, config=cfg)], w
            elif stage == "buckets":
                p, tasks = [MinhashDedupBuckets(sig, bk, config=cfg)], cfg.num_buckets
            elif stage == "cluster":
                p, tasks, w = [MinhashDedupCluster(bk, cl, config=cfg)], 1, 1
            else:
                p, tasks = [JsonlReader(cdir, glob_pattern=glob), MinhashDedupFilter(cl), JsonlWriter(out)], w
            LocalPipelineExecutor(pipeline=p, tasks=tasks, workers=w, logging_dir=logs + "-" + stage).run()
    print(f"docs {n} cpu_s {time.process_time() - t0:.3f}")


if __name__ == "__main__":
    main()

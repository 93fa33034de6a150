#!/usr/bin/env python3
"""Language identification throughput per core: `sluice classify` with
lid.176.ftz against the `fasttext` package's predict and datatrove's
LanguageFilter, from the same JSON Lines input, one thread each, side by
side. Prints MB/s of text (text bytes / CPU seconds; each the median of
RUNS runs) and the ratios, and checks that the labels agree.

- sluice: the whole command (`sluice classify -@ 1`: reading, JSON parsing,
  preparation, prediction, writing JSON Lines with the labels).
- fasttext: the loop a Python pipeline runs: json.loads of each line,
  predict(text.replace("\\n", " "), k=1) (datatrove's preparation), the
  line written back with the label (json.dumps); also predict alone.
- datatrove: LanguageFilter(languages=None, label_only=True).filter(doc) on
  a Document per line (its FT176LID with the same model file put in place
  of the download, its check for the fasttext-numpy2-wheel distribution
  skipped: the fasttext package measured above serves it), json.loads and
  json.dumps around it; skipped when datatrove is not installed.
usage: classify_bench.py SLUICE MODEL CORPUS.jsonl"""
import json
import os
import resource
import subprocess
import sys
import time

RUNS = max(1, int(os.environ.get("CLASSIFY_BENCH_RUNS", "3")))


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def self_cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def median(xs):
    return sorted(xs)[len(xs) // 2]


def timed(fn):
    cpus = []
    out = None
    for _ in range(RUNS):
        c0 = self_cpu()
        out = fn()
        cpus.append(self_cpu() - c0)
    return median(cpus), out


def main():
    sluice, model, corpus = sys.argv[1:4]
    lines = open(corpus, encoding="utf-8").read().split("\n")[:-1]  # not splitlines: U+2028 is in texts
    mb = sum(len(json.loads(l)["text"].encode("utf-8")) for l in lines) / 1e6
    print("corpus: %d documents, %.1f MB of text; model %s; %d run(s) each, median CPU time" % (
        len(lines), mb, os.path.basename(model), RUNS))
    rows = []

    out = corpus + ".out"
    cpus = []
    for _ in range(RUNS):
        c0 = child_cpu()
        subprocess.run([sluice, "classify", "-q", "-@", "1", "-m", model, corpus, "-o", out], check=True)
        cpus.append(child_cpu() - c0)
    s_cpu = median(cpus)
    s_labels = [json.loads(l)["lang"] for l in open(out, encoding="utf-8")]
    rows.append(("sluice classify -@ 1", s_cpu))

    try:
        import fasttext
    except ImportError:
        fasttext = None
        print("fasttext: not installed, skipped")
    if fasttext:
        fasttext.FastText.eprint = lambda *a, **k: None
        m = fasttext.load_model(model)

        def ft_loop():
            res = []
            for l in lines:
                d = json.loads(l)
                labels, probs = m.predict(d["text"].replace("\n", " "), k=1)
                d["lang"] = labels[0][9:] if labels else None
                d["lang_score"] = float(probs[0]) if len(probs) else None
                res.append(json.dumps(d))
            return res

        texts = [json.loads(l)["text"].replace("\n", " ") for l in lines]

        def ft_predict():
            return [m.predict(t, k=1)[0] for t in texts]

        f_cpu, res = timed(ft_loop)
        f_labels = [json.loads(r)["lang"] for r in res]
        p_cpu, _ = timed(ft_predict)
        rows.append(("fasttext predict loop (json in/out)", f_cpu))
        rows.append(("fasttext predict alone", p_cpu))
        agree = sum(a == b for a, b in zip(s_labels, f_labels))
        print("labels: sluice and fasttext agree on %d of %d documents" % (agree, len(lines)))

    try:
        from datatrove.data import Document
        from datatrove.pipeline.filters import LanguageFilter
    except Exception as e:  # not installed, or its dependencies missing
        Document = None
        print("datatrove: not available (%s), skipped" % type(e).__name__)
    lf = None
    if Document and fasttext:
        try:
            # datatrove asks for the distribution fasttext-numpy2-wheel (a
            # build of the same C++ predict); the fasttext package here is
            # the one measured above, so its check is skipped
            import datatrove.pipeline.base as dt_base

            dt_base.check_required_dependencies = lambda *a, **k: None
            lf = LanguageFilter(languages=None, label_only=True)
            lf.model._model = fasttext.FastText._FastText(model)  # the same file, no download
        except ImportError as e:
            print("datatrove: %s; skipped" % e)
            lf = None
    if lf:

        def dt_loop():
            res = []
            for l in lines:
                d = json.loads(l)
                doc = Document(text=d["text"], id=str(d["id"]))
                lf.filter(doc)
                d["lang"] = doc.metadata["language"]
                res.append(json.dumps(d))
            return res

        d_cpu, res = timed(dt_loop)
        rows.append(("datatrove LanguageFilter (json in/out)", d_cpu))
        d_labels = [json.loads(r)["lang"] for r in res]
        agree = sum(a == b for a, b in zip(s_labels, d_labels))
        print("labels: sluice and datatrove agree on %d of %d documents" % (agree, len(lines)))

    print("%-40s %10s %10s %12s" % ("", "CPU s", "MB/s/core", "sluice is"))
    for name, cpu in rows:
        ratio = "" if name.startswith("sluice") else "%.1fx" % (cpu / s_cpu)
        print("%-40s %10.2f %10.2f %12s" % (name, cpu, mb / cpu, ratio))


if __name__ == "__main__":
    main()

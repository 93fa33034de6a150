#!/usr/bin/env python3
"""MinHash fixtures from datatrove 0.10.1 itself, for `sluice dedup minhash`.

corpus.jsonl: a multilingual corpus with planted near-duplicates: English
paragraphs (of the licence texts in /usr/share/common-licenses: GPL-3,
Apache-2.0, MPL-2.0, Artistic), and seeded sentences in German, French,
Spanish, Turkish, Greek, Russian, Chinese, Arabic and Hindi; copies of some
with word edits (1 to 40% of the words), boilerplate added, paragraphs
reordered, Unicode variants (upper case, NFD, full-width digits, other
punctuation), plus short documents (under 5 words) and empty ones.

For each configuration below, datatrove's four stages run on it
(MinhashDedupSignature as one task over the corpus, MinhashDedupBuckets one
task per bucket, MinhashDedupCluster, MinhashDedupFilter with an exclusion
writer), and these are written:
  minhash-<name>.sig      one line per document with a signature: its id and
                          the SHA-1 (hex) of its buckets*rows values as
                          little-endian uint64 (from datatrove's .minhash.sig)
  minhash-<name>.removed  the ids MinhashDedupFilter drops, in input order
  minhash-perm.txt        numpy RandomState(seed) a and b for seeds 1 and 7

  /work/venv-h32/bin/python tests/data/dedup/make_minhash_fixtures.py
(venv: datatrove[processing]==0.10.1, spacy)."""
import glob
import gzip
import hashlib
import json
import os
import random
import struct
import sys
import tempfile
import unicodedata

import numpy as np
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.dedup.minhash import (MinhashConfig, MinhashDedupBuckets, MinhashDedupCluster,
                                              MinhashDedupFilter, MinhashDedupSignature)
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter
from datatrove.utils.hashing import HashConfig

here = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(3232)

CONFIGS = {
    "default": MinhashConfig(),
    "sha1-64": MinhashConfig(hash_config=HashConfig(precision=64, hash_fc="sha1")),
    "sha1-32-n3-b9-r5-s7": MinhashConfig(n_grams=3, num_buckets=9, hashes_per_bucket=5, seed=7,
                                         hash_config=HashConfig(precision=32, hash_fc="sha1")),
    "xxhash32-n2-b20-r3": MinhashConfig(n_grams=2, num_buckets=20, hashes_per_bucket=3,
                                        hash_config=HashConfig(precision=32, hash_fc="xxhash")),
}

LEX = {
    "de": "der die das und ist nicht ein eine Straße Größe Mädchen über schön früh Haus Stadt Fluss Brücke wir "
          "haben sein werden können müssen Wetter heute morgen Jahr Zeit Arbeit Leben Welt gut groß klein".split(),
    "fr": "le la les et est une un été où très déjà français garçon hôtel naïve Noël façon être avoir faire "
          "pouvoir aller voir ville rivière pont année temps travail vie monde bon grand petit".split(),
    "es": "el la los las y es un una niño año mañana corazón canción pingüino ciudad río puente tiempo trabajo "
          "vida mundo bueno grande pequeño estar tener hacer poder ir ver".split(),
    "tr": "ve bir bu İstanbul Ankara ılık ışık İzmir güzel çok şehir nehir köprü zaman iş hayat dünya iyi büyük "
          "küçük olmak yapmak gitmek görmek IŞIK İĞNE".split(),
    "el": "ΟΔΟΣ ΠΟΛΙΣ ΘΑΛΑΣΣΑ ΣΟΦΟΣ ΛΟΓΟΣ ΚΟΣΜΟΣ και είναι ένας μία πόλις θάλασσα σοφός λόγος κόσμος ποταμός "
          "γέφυρα χρόνος ζωή καλός μεγάλος μικρός Ὀδυσσεύς ἄνθρωπος".split(),
    "ru": "и в не на это город река мост время работа жизнь мир хороший большой маленький быть иметь делать "
          "мочь идти видеть Ёлка ёж Москва".split(),
    "zh": "的 是 在 我们 城市 河流 桥梁 时间 工作 生活 世界 很好 大的 小的 今天 明天 中国 北京 上海 学习".split(),
    "ar": "في من على هذا مدينة نهر جسر وقت عمل حياة عالم جيد كبير صغير كان يكون ذهب رأى ٢٠٢٤ ١٢٣".split(),
    "hi": "और का की है में शहर नदी पुल समय काम जीवन दुनिया अच्छा बड़ा छोटा होना करना जाना देखना १२३ २०२४".split(),
}


def sentence(lang):
    w = LEX[lang]
    n = rng.randint(6, 14)
    words = [rng.choice(w) for _ in range(n)]
    if rng.random() < 0.3:
        words.insert(rng.randrange(len(words)), str(rng.randint(0, 99999)))
    if rng.random() < 0.2:
        words.insert(rng.randrange(len(words)), f"{rng.randint(0, 99)}.{rng.randint(0, 99)}")
    sep = "" if lang == "zh" else " "
    end = "。" if lang == "zh" else rng.choice([".", ".", "!", "?", ";"])
    s = sep.join(words) + end
    return s[0].upper() + s[1:]


def paragraphs_of(path):
    text = open(path, encoding="utf-8").read()
    paras = [" ".join(p.split()) for p in text.split("\n\n")]
    return [p for p in paras if len(p.split()) >= 25]


def make_corpus():
    docs = []
    eng = []
    for lic in ["GPL-3", "Apache-2.0", "MPL-2.0", "Artistic"]:
        eng += paragraphs_of(f"/usr/share/common-licenses/{lic}")
    rng.shuffle(eng)
    for p in eng[:70]:
        words = p.split()
        docs.append(" ".join(words[:rng.randint(25, 90)]))
    for lang in LEX:
        for _ in range(9):
            paras = ["".join(sentence(lang) + ("" if lang == "zh" else " ") for _ in range(rng.randint(2, 4))).strip()
                     for _ in range(rng.randint(1, 3))]
            docs.append("\n\n".join(paras))
    base = list(docs)

    def edit(t, frac):
        words = t.split(" ")
        for _ in range(max(1, int(len(words) * frac))):
            i = rng.randrange(len(words))
            op = rng.random()
            if op < 0.4:
                words[i] = rng.choice(["data", "Haus", "město", "río", "ζωή", "мир", "时间", "x"])
            elif op < 0.7:
                del words[i]
                if not words:
                    words = ["x"]
            else:
                words.insert(i, rng.choice(["the", "und", "et", "и", "且"]))
        return " ".join(words)

    variants = []
    for t in rng.sample(base, 60):
        kind = rng.choice(["copy", "edit", "edit", "edit", "boiler", "reorder", "upper", "nfd", "digits", "punct"])
        if kind == "copy":
            v = t
        elif kind == "edit":
            v = edit(t, rng.choice([0.01, 0.03, 0.05, 0.1, 0.2, 0.4]))
        elif kind == "boiler":
            v = t + "\n\nSubscribe to our newsletter! Cookies help us deliver our services. © 2024 All rights reserved."
        elif kind == "reorder":
            ps = t.split("\n\n") if "\n\n" in t else t.split(". ")
            rng.shuffle(ps)
            v = ("\n\n" if "\n\n" in t else ". ").join(ps)
        elif kind == "upper":
            v = t.upper()
        elif kind == "nfd":
            v = unicodedata.normalize("NFD", t)
        elif kind == "digits":
            v = "".join(chr(ord(c) - 0x30 + 0xFF10) if "0" <= c <= "9" else c for c in t)
        else:
            v = t.replace(".", "!").replace(",", " ;").replace(" ", "  ")
        variants.append(v)
        if rng.random() < 0.3:  # a chain: a variant of the variant
            variants.append(edit(v, 0.05))
    shorts = ["", "", "Hello there.", "one two three four", "five words are just enough here", "   ", "a b c d e"]
    allv = base + variants + shorts
    rng.shuffle(allv)
    return [{"id": f"d{i:04d}", "text": t, "lang_hint": "mixed"} for i, t in enumerate(allv)]


def write_jsonl(path, docs):
    with open(path, "w") as f:
        for d in docs:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")


def run_datatrove_on(docs, work, cfg):
    """run_datatrove on docs, the one file of a corpus folder made in work."""
    cdir = os.path.join(work, "corpus")
    os.makedirs(cdir)
    write_jsonl(os.path.join(cdir, "corpus.jsonl"), docs)
    return run_datatrove(cdir, work, cfg)


def write_removed(rem, docs, path):
    """The ids of the documents datatrove's filter wrote to rem, one a line
    in corpus order, into path; returns them."""
    removed = []
    for p in sorted(glob.glob(os.path.join(rem, "*.jsonl*"))):
        op = gzip.open if p.endswith(".gz") else open
        with op(p, "rt") as f:
            removed += [json.loads(line)["id"] for line in f]
    order = {d["id"]: i for i, d in enumerate(docs)}
    with open(path, "w") as f:
        for i in sorted(removed, key=order.get):
            f.write(i + "\n")
    return removed


def run_datatrove(corpus_dir, work, cfg):
    sig, bk, cl, out, rem = (os.path.join(work, x) for x in ["sig", "buckets", "clusters", "out", "removed"])
    LocalPipelineExecutor(pipeline=[JsonlReader(corpus_dir), MinhashDedupSignature(sig, config=cfg)], tasks=1,
                          workers=1, logging_dir=os.path.join(work, "l1")).run()
    LocalPipelineExecutor(pipeline=[MinhashDedupBuckets(sig, bk, config=cfg)], tasks=cfg.num_buckets, workers=1,
                          logging_dir=os.path.join(work, "l2")).run()
    LocalPipelineExecutor(pipeline=[MinhashDedupCluster(bk, cl, config=cfg)], tasks=1, workers=1,
                          logging_dir=os.path.join(work, "l3")).run()
    LocalPipelineExecutor(pipeline=[JsonlReader(corpus_dir), MinhashDedupFilter(cl, exclusion_writer=JsonlWriter(rem)),
                                    JsonlWriter(out)], tasks=1, workers=1, logging_dir=os.path.join(work, "l4")).run()
    return sig, rem


def main():
    docs = make_corpus()
    write_jsonl(os.path.join(here, "corpus.jsonl"), docs)
    nonempty = [d for d in docs if d["text"]]  # datatrove's reader skips empty texts
    for name, cfg in CONFIGS.items():
        with tempfile.TemporaryDirectory() as work:
            sig, rem = run_datatrove_on(docs, work, cfg)
            fmt = "Q" if cfg.hash_config.precision == 64 else "I"
            rows, size = cfg.hashes_per_bucket, struct.calcsize(f"<{cfg.hashes_per_bucket}{fmt}I")
            sigs = {}
            for b in range(cfg.num_buckets):
                data = open(os.path.join(sig, f"bucket_{b:03d}", "00000.minhash.sig"), "rb").read()
                for off in range(0, len(data), size):
                    rec = struct.unpack(f"<{rows}{fmt}I", data[off:off + size])
                    sigs.setdefault(rec[-1], [None] * cfg.num_buckets)[b] = rec[:-1]
            with open(os.path.join(here, f"minhash-{name}.sig"), "w") as f:
                for idx in sorted(sigs):
                    vals = [v for band in sigs[idx] for v in band]
                    digest = hashlib.sha1(struct.pack(f"<{len(vals)}Q", *vals)).hexdigest()
                    f.write(f"{nonempty[idx]['id']} {digest}\n")
            removed = write_removed(rem, docs, os.path.join(here, f"minhash-{name}.removed"))
            print(name, len(sigs), "signatures,", len(removed), "removed", file=sys.stderr)
    with open(os.path.join(here, "minhash-perm.txt"), "w") as f:
        for seed, n in [(1, 112), (7, 45)]:
            gen = np.random.RandomState(seed)
            a = gen.randint(1, np.uint64((1 << 61) - 1), dtype=np.uint64, size=(1, n))
            b = gen.randint(0, np.uint64((1 << 61) - 1), dtype=np.uint64, size=(1, n))
            f.write(f"seed {seed} n {n}\n")
            f.write("a " + " ".join(str(int(x)) for x in a[0]) + "\n")
            f.write("b " + " ".join(str(int(x)) for x in b[0]) + "\n")


if __name__ == "__main__":  # (diff_minhash.py and make_minhash_max32_fixtures.py import LEX, run_datatrove)
    main()

#!/usr/bin/env python3
"""Randomized differential test of `sluice classify` against the Python
`fasttext` package's predict(text, k, threshold) (a developer tool; not run
by `make test`), and, where datatrove is importable, against datatrove's
LanguageFilter and FastTextClassifierFilter.

    python3 -m venv /tmp/ft && /tmp/ft/bin/pip install fasttext==0.9.3 'numpy<2'
    /tmp/ft/bin/python tests/data/classify/diff_random.py --seed 1 --n 2000
    /tmp/ft/bin/python tests/data/classify/diff_random.py --seed 1 --models lid.176.ftz --settings langid:5:0
    # datatrove 0.10.1 as it is deployed (fasttext-numpy2-wheel, numpy 2):
    python3 -m venv /tmp/dt && /tmp/dt/bin/pip install datatrove==0.10.1 fasttext-numpy2-wheel fasteners regex
    /tmp/dt/bin/python tests/data/classify/diff_random.py --seed 1 --n 500

Options: --n texts per seed, --seed, --models (comma-separated file names in
tests/data/classify or paths), --settings (comma-separated PREPARE:K:THRESHOLD,
K a number or "all"), --sluice (default build/sluice), --work DIR (corpus,
outputs and discrepancies.jsonl are kept there), --minimize (shrink one text
per discrepancy class to a smallest that still differs), --threads (sluice -@).

Each text is generated from the seed: sentences in many languages and
scripts, words of the topic models' training text (docs/*.md), code, emoji
and ZWJ sequences, random code points of every plane (combining marks,
private use, noncharacters, U+FFFD), C0/C1 controls and NUL, the fastText
separators (space, \\t, \\v, \\f, \\r, \\r\\n, \\n) and the Unicode white space
that fastText does not split on (NBSP, U+3000, U+2028 ...), the tokens
"</s>" and "__label__...", hyphenated words, digits, words longer than 1000
bytes, one-character, empty and white-space-only texts, repeated words, and
long texts of many lines. A few lines carry lone surrogates (JSON escapes)
or raw ill-formed UTF-8; sluice replaces those by U+FFFD as Python's
decode(errors="replace") does, and the reference is given that text.

The reference gets the text prepared as docs/classify.md documents
(datatrove 0.10.1): --prepare langid: text.replace("\\n", " ");
--prepare classifier: text.strip().replace("\\n", ""). Labels must be
identical and in the same order; probabilities are compared exactly (the
float32 value fastText returns, as a double) and within 1e-6 (the documented
tolerance). With datatrove importable, for each model: LanguageFilter
(label_only) on the raw text must give sluice's `-k 1` language and
language_score (datatrove takes the max of predict(k=-1), labels cut by
split("__")[2]; among tied best scores fastText's predict(k=1) can return
another label than the first of predict(k=-1), so `-k all`'s first label is
compared too), and FastTextClassifierFilter's metadata (every label of
predict(k=-1) with its score) must equal sluice's `--prepare classifier -k
all` labels and scores. Exit status 0 when everything agrees, 1 otherwise.
"""
import argparse
import collections
import json
import os
import random
import subprocess
import sys

import fasttext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

MODELS = ["lid.176.ftz", "topic-hs.bin", "topic-hs.ftz", "topic-softmax.bin", "topic-ova.bin", "topic-ns.ftz",
          "topic-many.ftz"]
# PREPARE:K:THRESHOLD
SETTINGS = ["langid:1:0", "langid:5:0", "classifier:all:0", "langid:all:0.01", "classifier:3:0.2", "langid:400:0"]

# ---- texts ---------------------------------------------------------------

SENTENCES = [
    "The committee will publish its final report on the reform of public transport next spring.",
    "Die Bundesregierung hat am Mittwoch einen neuen Gesetzentwurf zur Energiepolitik vorgestellt.",
    "Le musée rouvrira ses portes au public après deux années de travaux de rénovation.",
    "El ayuntamiento aprobó ayer el presupuesto para la construcción de un nuevo hospital.",
    "La squadra ha vinto la partita grazie a un gol segnato negli ultimi minuti del secondo tempo.",
    "O governo anunciou novas medidas para apoiar as pequenas empresas durante a crise.",
    "De gemeente wil het centrum autovrij maken om de luchtkwaliteit te verbeteren.",
    "Regeringen föreslår att skatten på bensin ska sänkas från och med nästa år.",
    "Rząd przedstawił plan budowy nowych linii kolejowych łączących największe miasta.",
    "Vláda schválila návrh zákona o podpoře obnovitelných zdrojů energie.",
    "Правительство объявило о новых мерах поддержки малого и среднего бизнеса.",
    "Міська рада ухвалила рішення про будівництво нового мосту через річку.",
    "Η κυβέρνηση ανακοίνωσε νέα μέτρα για τη στήριξη των μικρών επιχειρήσεων.",
    "Belediye, şehir merkezinde yeni bir park inşa edileceğini açıkladı.",
    "أعلنت الحكومة عن خطة جديدة لدعم الشركات الصغيرة والمتوسطة في البلاد.",
    "הממשלה הודיעה על תוכנית חדשה לתמיכה בעסקים קטנים ובינוניים.",
    "دولت برنامه جدیدی برای حمایت از کسب و کارهای کوچک اعلام کرد.",
    "सरकार ने छोटे और मध्यम व्यवसायों की सहायता के लिए नई योजना की घोषणा की।",
    "সরকার ছোট ও মাঝারি ব্যবসার জন্য নতুন সহায়তা প্রকল্প ঘোষণা করেছে।",
    "சிறு மற்றும் நடுத்தர தொழில்களுக்கு அரசு புதிய திட்டத்தை அறிவித்தது.",
    "รัฐบาลประกาศมาตรการใหม่เพื่อช่วยเหลือธุรกิจขนาดเล็กและขนาดกลาง",
    "Chính phủ đã công bố các biện pháp mới nhằm hỗ trợ doanh nghiệp nhỏ và vừa.",
    "Pemerintah mengumumkan langkah baru untuk mendukung usaha kecil dan menengah.",
    "政府宣布了支持中小企业的新措施，包括减税和低息贷款。",
    "政府は中小企業を支援するための新たな対策を発表しました。",
    "정부는 중소기업을 지원하기 위한 새로운 대책을 발표했다.",
    "Hallitus esitteli uuden suunnitelman pienten yritysten tukemiseksi.",
    "A kormány új intézkedéseket jelentett be a kisvállalkozások támogatására.",
    "Guvernul a anunțat noi măsuri pentru sprijinirea întreprinderilor mici.",
    "Regjeringen la fram en ny plan for å styrke kollektivtrafikken i byene.",
    "El govern ha presentat un nou pla per millorar el transport públic a la ciutat.",
    "La registaro anoncis novajn rimedojn por subteni malgrandajn entreprenojn.",
    "Gallia est omnis divisa in partes tres, quarum unam incolunt Belgae.",
    "Serikali imetangaza mpango mpya wa kusaidia biashara ndogo na za kati.",
    "Կառավարությունը հայտարարեց փոքր բիզնեսի աջակցության նոր ծրագրի մասին։",
    "მთავრობამ გამოაცხადა ახალი ზომები მცირე ბიზნესის მხარდასაჭერად.",
    "መንግሥት ለአነስተኛ ንግዶች አዲስ ድጋፍ አስታውቋል።",
    "Hökümət kiçik bizneslərə dəstək üçün yeni tədbirlər elan edib.",
    "ꯁꯔꯀꯥꯔꯅ ꯑꯅꯧꯕ ꯊꯧꯔꯥꯡ ꯂꯥꯎꯊꯣꯛꯈꯤ",
    "Ỉ̵̛ṅ̶ ̸t̷h̴e̵ ̵z̸a̵l̶g̸o̷",
]
CODE = [
    "def main():\n    for i in range(10):\n        print(f\"value {i}\")\n",
    "#include <stdio.h>\nint main(void) { printf(\"hello, world\\n\"); return 0; }",
    "SELECT id, name FROM users WHERE created_at > '2024-01-01' ORDER BY name LIMIT 10;",
    "<div class=\"nav\"><a href=\"/\">Start</a> <a href=\"/kontakt\">Kontakt</a></div>",
    "fn main() -> Result<(), Box<dyn Error>> { let x: Vec<u8> = vec![0xff; 16]; Ok(()) }",
    "const f = (a, b) => a ?? b; // TODO: fix\r\nexport default f;",
    "$ sluice classify -m lid.176.ftz -k 3 --field-prefix language docs.jsonl.zst | head",
    "{\"id\": 12, \"text\": \"nested \\\"json\\\" here\", \"score\": 0.97}",
    "x=1;y=2\tz=3\vw=4\fend",
]
EMOJI = ["👍", "😂", "🧬", "🎧", "📚", "👨\u200d👩\u200d👧\u200d👦", "🇩🇪", "🇫🇷", "🏳️\u200d🌈", "👋🏽", "❤️", "1️⃣", "🫠"]
SEPS = [" ", " ", " ", " ", "  ", "\t", "\n", "\r\n", "\r", "\v", "\f", "\x00", " \n ", "\n\n"]
USPACE = ["\u00a0", "\u3000", "\u2028", "\u2029", "\u0085", "\u1680", "\u2000", "\u2003", "\u2009", "\u200a",
          "\u202f", "\u205f", "\x1c", "\x1d", "\x1e", "\x1f", "\u200b", "\ufeff", "\u180e", "\u2060"]
CONTROLS = [chr(c) for c in list(range(0x01, 0x09)) + [0x0e, 0x1b, 0x7f] + list(range(0x80, 0xa0))]
SPECIAL = ["</s>", "</s>", "<s>", "</s>x", "x</s>", "</S>", "<", ">", "<>", "__label__", "__label__en",
           "__label__de", "__label__xx", "__label__dna", "__label__p3", "__Label__en", "_label__en", "label",
           "__label__en__", "__label__zh__Hans", "\ufffd", "\ufffd\ufffd", "-", "--", "—", "...", "'", "\"", "\\"]
RANGES = [(0x20, 0x7e), (0xa0, 0x24f), (0x300, 0x36f), (0x370, 0x3ff), (0x400, 0x4ff), (0x530, 0x58f),
          (0x5d0, 0x5ea), (0x600, 0x6ff), (0x900, 0x97f), (0x980, 0x9ff), (0xb80, 0xbff), (0xe00, 0xe7f),
          (0x10a0, 0x10ff), (0x1200, 0x137f), (0x1e00, 0x1eff), (0x2000, 0x206f), (0x3040, 0x30ff),
          (0x4e00, 0x9fff), (0xac00, 0xd7a3), (0xe000, 0xf8ff), (0xfdd0, 0xfdef), (0xfe00, 0xfe0f),
          (0xfff0, 0xffff), (0x1d400, 0x1d7ff), (0x1f300, 0x1faff), (0x20000, 0x2a6df), (0xe0000, 0xe007f),
          (0xf0000, 0xffffd), (0x10fff0, 0x10ffff)]


def doc_words():
    words = []
    for name in sorted(os.listdir(os.path.join(ROOT, "docs"))):
        if name.endswith(".md"):
            words += open(os.path.join(ROOT, "docs", name), encoding="utf-8").read().lower().split()
    return words or ["sluice"]


def rand_cp(rng):
    lo, hi = rng.choice(RANGES)
    while True:
        c = rng.randint(lo, hi)
        if not 0xd800 <= c <= 0xdfff:
            return chr(c)


class Gen:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.docw = doc_words()
        self.sentw = [w for s in SENTENCES for w in s.split()]

    def word(self):
        r = self.rng
        x = r.random()
        if x < 0.35:
            w = r.choice(self.docw)
        elif x < 0.6:
            w = r.choice(self.sentw)
        elif x < 0.7:
            w = "".join(rand_cp(r) for _ in range(r.randint(1, 8)))
        elif x < 0.75:
            w = r.choice(SPECIAL)
        elif x < 0.8:
            w = "".join(r.choice(EMOJI) for _ in range(r.randint(1, 3)))
        elif x < 0.85:
            w = str(r.choice([r.randint(0, 9), r.randint(0, 10 ** 9), r.random() * 1000]))
        elif x < 0.9:
            w = "-".join(r.choice(self.docw + self.sentw) for _ in range(r.randint(2, 4)))
        elif x < 0.93:
            w = r.choice(self.docw) + r.choice(CONTROLS + USPACE) + r.choice(self.sentw)
        elif x < 0.96:
            w = r.choice(self.docw).upper()
        elif x < 0.98:  # medium words: the OOV cache holds words up to 32 bytes, 64 rows
            w = "".join(r.choice("abcdefghijklmnopqrstuvwxyzé日") for _ in range(r.randint(20, 40)))
        else:
            w = r.choice(self.docw + self.sentw) * r.randint(30, 400)  # long, often > 1000 bytes
        return w

    def sep(self):
        r = self.rng
        x = r.random()
        if x < 0.8:
            return " "
        if x < 0.93:
            return r.choice(SEPS)
        return r.choice(USPACE + CONTROLS)

    def words_text(self, n):
        r = self.rng
        parts = []
        for _ in range(n):
            parts.append(self.word())
            parts.append(self.sep())
        if parts and r.random() < 0.5:
            parts.pop()
        return "".join(parts)

    def text(self):
        r = self.rng
        x = r.random()
        if x < 0.04:
            return r.choice(["", " ", "\n", "\t", "\r\n", "\v\f", "\x00", "  \n \n"]) * r.randint(1, 3)
        if x < 0.07:
            return "".join(r.choice(SEPS + USPACE + CONTROLS) for _ in range(r.randint(1, 8)))
        if x < 0.11:
            return r.choice([rand_cp(r), r.choice("aZ9-<>_"), r.choice(EMOJI), r.choice(SPECIAL)])
        if x < 0.25:
            return r.choice(SENTENCES)
        if x < 0.35:
            s = r.sample(SENTENCES, r.randint(1, 3))
            return r.choice([" ", "\n", "\r\n", "\n\n", " </s> "]).join(s)
        if x < 0.4:
            return r.choice(CODE)
        if x < 0.45:  # repeated words
            w = self.word()
            return (self.sep() if r.random() < 0.5 else " ").join([w] * r.randint(2, 200))
        if x < 0.48:  # long texts of many lines
            lines = []
            for _ in range(r.randint(50, 400)):
                lines.append(r.choice([self.words_text(r.randint(0, 15)), r.choice(SENTENCES), ""]))
            return r.choice(["\n", "\r\n", "\n\n"]).join(lines)
        if x < 0.52:  # white space around
            lead = "".join(r.choice(USPACE + SEPS) for _ in range(r.randint(0, 4)))
            trail = "".join(r.choice(USPACE + SEPS) for _ in range(r.randint(0, 4)))
            return lead + self.words_text(r.randint(1, 10)) + trail
        if x < 0.56:  # a mutated sentence
            s = list(r.choice(SENTENCES))
            for _ in range(r.randint(1, 6)):
                i = r.randrange(len(s) + 1)
                y = r.random()
                if y < 0.3 and s:
                    del s[min(i, len(s) - 1)]
                elif y < 0.6:
                    s.insert(i, r.choice(SEPS + USPACE + CONTROLS))
                else:
                    s.insert(i, r.choice(SPECIAL + EMOJI) + " ")
            return "".join(s)
        return self.words_text(r.randint(1, r.choice([3, 10, 40, 150])))

    def line(self, i):
        """(JSON line bytes, the text sluice reads)"""
        r = self.rng
        t = self.text()
        x = r.random()
        if x < 0.015:  # lone surrogates in JSON escapes: sluice puts U+FFFD
            k = r.randrange(len(t) + 1)
            t2 = t[:k] + chr(r.choice([0xd800, 0xdbff, 0xdc00, 0xdfff])) + t[k:]
            line = json.dumps({"id": i, "text": t2}, ensure_ascii=True).encode()
            return line, "".join("\ufffd" if 0xd800 <= ord(c) <= 0xdfff else c for c in t2)
        if x < 0.03:  # raw ill-formed UTF-8 inside the JSON string
            bad = r.choice([b"\xc3", b"\xff", b"\xfe", b"\xe2\x82", b"\xf0\x9f\x98", b"\xed\xa0\x80", b"\xc0\xaf",
                            b"\xf4\x90\x80\x80", b"\x80\x80", b"\xe0\x80\xaf"])
            k = r.randrange(len(t) + 1)
            esc = lambda u: json.dumps(u, ensure_ascii=r.random() < 0.5).encode()[1:-1]
            raw = esc(t[:k]) + bad + esc(t[k:])
            line = b'{"id":%d,"text":"' % i + raw + b'"}'
            return line, json.loads(line.decode("utf-8", "replace"))["text"]
        line = json.dumps({"id": i, "text": t}, ensure_ascii=r.random() < 0.5).encode()
        return line, t


# ---- running both sides ----------------------------------------------------


def prepare(t, mode):
    # datatrove 0.10.1: LanguageFilter (FastTextLID.predict) and FastTextClassifierFilter
    if mode == "langid":
        return t.replace("\n", " ")
    return t.strip().replace("\n", "")


def strip_label(s):
    return s[len("__label__"):] if s.startswith("__label__") else s


def parse_setting(s):
    prep, k, t = s.split(":")
    assert prep in ("langid", "classifier"), s
    return prep, (-1 if k == "all" else int(k)), float(t)


def run_sluice(args, model, setting, corpus, out):
    prep, k, t = setting
    cmd = [args.sluice, "classify", "-q", "-m", model, "--prepare", prep, "-k", "all" if k == -1 else str(k),
           "--threshold", repr(t), "--field-prefix", "ft", "-@", str(args.threads), corpus, "-o", out]
    subprocess.run(["nice"] + cmd, check=True)
    got = []
    for line in open(out, encoding="utf-8"):
        o = json.loads(line)
        if k == 1:
            got.append(([o["ft"]], [o["ft_score"]]) if o["ft"] is not None else ([], []))
        else:
            labs, probs = o["ft_labels"], o["ft_scores"]
            assert o["ft"] == (labs[0] if labs else None) and o["ft_score"] == (probs[0] if probs else None), o["id"]
            got.append((labs, probs))
    return got


def reference(ft, text, setting):
    prep, k, t = setting
    labels, probs = ft.predict(prepare(text, prep), k=k, threshold=t)
    return [strip_label(x) for x in labels], [float(p) for p in probs]


def compare(ref, got):
    """None when equal, else the kind of difference: labels, prob>1e-6 or prob-inexact"""
    (rl, rp), (gl, gp) = ref, got
    if rl != gl:
        return "labels"
    if any(abs(a - b) > 1e-6 for a, b in zip(rp, gp)):
        return "prob>1e-6"
    if any(a != b for a, b in zip(rp, gp)):
        return "prob-inexact"
    return None


def write_corpus(path, texts):
    with open(path, "wb") as f:
        for i, t in enumerate(texts):
            f.write(json.dumps({"id": i, "text": t}, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n")


def minimize(args, model, ft, setting, text, kind, work):
    """Shrinks text while sluice and the reference still differ in the same way
    (ddmin over tokens, then over characters; candidates are run in batches)."""
    corpus, out = os.path.join(work, "min.jsonl"), os.path.join(work, "min.out.jsonl")

    def still(cands):
        write_corpus(corpus, cands)
        got = run_sluice(args, model, setting, corpus, out)
        return [compare(reference(ft, c, setting), g) == kind for c, g in zip(cands, got)]

    def shrink(units, join):
        n = 2
        while len(units) >= 2:
            size = max(1, len(units) // n)
            cands = [units[:i] + units[i + size:] for i in range(0, len(units), size)]
            ok = still([join(c) for c in cands])
            if any(ok):
                units = cands[ok.index(True)]
                n = max(n - 1, 2)
            elif size == 1:
                break
            else:
                n = min(len(units), 2 * n)
        return units

    import re
    toks = [x for x in re.split(r"(\s+)", text) if x]
    text = "".join(shrink(toks, "".join))
    text = "".join(shrink(list(text), "".join))
    # simplify characters: replace each by "a" when that keeps the difference
    chars = list(text)
    for i in range(len(chars)):
        if chars[i] != "a":
            c2 = chars[:i] + ["a"] + chars[i + 1:]
            if still(["".join(c2)])[0]:
                chars = c2
    return "".join(chars)


# ---- datatrove ---------------------------------------------------------------


def datatrove_checks(args, model_path, corpus, texts, work, report):
    try:
        from datatrove.data import Document
        from datatrove.pipeline.filters.fasttext_filter import FastTextClassifierFilter
        from datatrove.pipeline.filters.language_filter import LanguageFilter
        from fasttext.FastText import _FastText
    except ImportError as e:
        report.append("datatrove: not importable (%s), skipped" % e)
        return []
    name = os.path.basename(model_path)
    diffs = []
    try:
        lf = LanguageFilter(label_only=True)
    except ImportError as e:  # datatrove wants the fasttext-numpy2-wheel distribution
        if not any(r.startswith("datatrove:") for r in report):
            report.append("datatrove: %s; skipped" % e)
        return []
    lf.model._model = _FastText(model_path)
    # datatrove's language is the first best of predict(k=-1): with tied best
    # scores predict(k=1) can give another of them, so -k all is checked too
    for k in (1, -1):
        got = run_sluice(args, model_path, ("langid", k, 0.0), corpus, os.path.join(work, "dt-lid.jsonl"))
        agree = 0
        for i, (t, (gl, gp)) in enumerate(zip(texts, got)):
            d = Document(text=t, id=str(i))
            try:
                lf.filter(d)
                want = ([d.metadata["language"]], [d.metadata["language_score"]])
            except ValueError as e:  # max() of no predictions
                want = ("raises %s" % e, None)
            if want[0] == gl[:1] and want[1] == gp[:1]:
                agree += 1
            else:
                diffs.append({"model": name, "setting": "datatrove LanguageFilter vs langid:%s:0" % (
                    "all" if k < 0 else k), "id": i, "text": t, "kind": "datatrove-lid", "want": want,
                    "got": [gl[:1], gp[:1]]})
        report.append("%-18s datatrove LanguageFilter vs -k %-3s  %5d/%d agree" % (
            name, "all" if k < 0 else k, agree, len(texts)))
    ff = FastTextClassifierFilter(model_path)
    ff._model = _FastText(model_path)
    got = run_sluice(args, model_path, ("classifier", -1, 0.0), corpus, os.path.join(work, "dt-cls.jsonl"))
    agree = 0
    for i, (t, (gl, gp)) in enumerate(zip(texts, got)):
        d = Document(text=t, id=str(i))
        ff.filter(d)
        want = {strip_label(a): b for a, b in d.metadata.items()}
        have = dict(zip(gl, gp))
        if want == have:
            agree += 1
        else:
            diffs.append({"model": name, "setting": "datatrove FastTextClassifierFilter vs classifier:all:0", "id": i,
                          "text": t, "kind": "datatrove-cls", "want": want, "got": have})
    report.append("%-18s datatrove FastTextClassifierFilter  %5d/%d agree" % (name, agree, len(texts)))
    return diffs


# ---- main ------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--settings", default=",".join(SETTINGS))
    ap.add_argument("--sluice", default=os.path.join(ROOT, "build", "sluice"))
    ap.add_argument("--work", default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--minimize", action="store_true")
    ap.add_argument("--no-datatrove", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    work = args.work or os.path.join("/tmp", "sluice-classify-diff-%d" % args.seed)
    os.makedirs(work, exist_ok=True)
    gen = Gen(args.seed)
    corpus = os.path.join(work, "corpus.jsonl")
    texts = []
    with open(corpus, "wb") as f:
        for i in range(args.n):
            line, t = gen.line(i)
            f.write(line + b"\n")
            texts.append(t)
    settings = [parse_setting(s) for s in args.settings.split(",")]
    report, diffs = [], []
    for m in args.models.split(","):
        path = m if os.path.exists(m) else os.path.join(HERE, m)
        name = os.path.basename(path)
        ft = fasttext.load_model(path)
        for s in settings:
            sname = "%s:%s:%g" % (s[0], "all" if s[1] == -1 else s[1], s[2])
            got = run_sluice(args, path, s, corpus, os.path.join(work, "out.jsonl"))
            assert len(got) == len(texts), (len(got), len(texts))
            kinds = collections.Counter()
            for i, (t, g) in enumerate(zip(texts, got)):
                ref = reference(ft, t, s)
                kind = compare(ref, g)
                kinds[kind] += 1
                if kind:
                    diffs.append({"model": name, "setting": sname, "id": i, "text": t, "kind": kind, "want": ref,
                                  "got": g})
            report.append("%-18s %-18s %5d/%d agree exactly%s" % (
                name, sname, kinds[None], len(texts),
                "".join(", %s %d" % (k, v) for k, v in sorted(kinds.items(), key=str) if k)))
        if not args.no_datatrove:
            diffs += datatrove_checks(args, path, corpus, texts, work, report)
    with open(os.path.join(work, "discrepancies.jsonl"), "w", encoding="utf-8") as f:
        for d in diffs:
            f.write(json.dumps(d, ensure_ascii=True) + "\n")
    print("seed %d, %d texts, sluice %s" % (args.seed, len(texts), args.sluice))
    print("\n".join(report))
    classes = collections.OrderedDict()
    for d in diffs:
        classes.setdefault((d["model"], d["setting"], d["kind"]), []).append(d)
    for (model, setting, kind), ds in classes.items():
        d = min(ds, key=lambda d: len(d["text"]))
        print("\n%s %s %s: %d texts; shortest id %d %r\n  want %s\n  got  %s" % (
            model, setting, kind, len(ds), d["id"], d["text"][:300], d["want"], d["got"]))
        if args.minimize and not kind.startswith("datatrove"):
            path = model if os.path.exists(model) else os.path.join(HERE, model)
            ft = fasttext.load_model(path)
            s = parse_setting(setting)
            small = minimize(args, path, ft, s, d["text"], kind, work)
            print("  minimized: %r\n  want %s\n  got  %s" % (
                small, reference(ft, small, s),
                run_sluice(args, path, s, (write_corpus(os.path.join(work, "min.jsonl"), [small]) or
                                           os.path.join(work, "min.jsonl")), os.path.join(work, "min.out.jsonl"))[0]))
    print("\n%d discrepancies in %d classes; details in %s" % (
        len(diffs), len(classes), os.path.join(work, "discrepancies.jsonl")))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())

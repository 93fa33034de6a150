#!/usr/bin/env bash
# Rule-filter benchmark: sluice filter --rules with the four rule
# sets (gopher-repetition, gopher-quality, c4, fineweb: FineWeb's order)
# against datatrove 0.10.1's filters (GopherRepetitionFilter,
# GopherQualityFilter, C4QualityFilter, FineWebQualityFilter, filter() per
# document as a pipeline calls it) on the same corpus: the rule fixture
# corpus (tests/data/rules/corpus.jsonl) repeated RULES_BENCH_COPIES times
# (default 6), with the ids made distinct. Per core: sluice -@ 1 against one
# Python process; sluice on all cores too. The kept documents are compared.
# Env: SLUICE_BIN, RULES_BENCH_PYTHON (a Python with datatrove 0.10.1 and
# spacy; default /work/venv-h33r, else /work/venv-h32, if present; without
# datatrove the peer is skipped and only sluice is timed), RULES_BENCH_COPIES.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
sluice=${SLUICE_BIN:-$root/build/sluice}
py=${RULES_BENCH_PYTHON:-}
if [ -z "$py" ]; then
  for v in /work/venv-h33r /work/venv-h32; do [ -x "$v/bin/python" ] && { py=$v/bin/python; break; }; done
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-rules-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
copies=${RULES_BENCH_COPIES:-6}
for i in $(seq 1 "$copies"); do sed "s/\"id\": \"r/\"id\": \"c$i-r/" "$root/tests/data/rules/corpus.jsonl"; done > "$tmp/corpus.jsonl"
docs=$(wc -l < "$tmp/corpus.jsonl")
mb=$(python3 -c "import json,sys; print('%.2f' % (sum(len(json.loads(l)['text'].encode()) for l in open(sys.argv[1])) / 1e6))" "$tmp/corpus.jsonl")
echo "corpus: $docs documents, $mb MB of text"
rules=gopher-repetition,gopher-quality,c4,fineweb
# wall, user and system seconds to the microsecond (cputime.py; GNU time's two
# decimals are a 10 ms step, 15 % of sluice's run here)
cpu() { python3 "$here/cputime.py" "$tmp/time" "$@" >/dev/null; cut -d' ' -f1-3 "$tmp/time"; }
read -r e1 u1 s1 < <(cpu "$sluice" filter -q -@ 1 --rules $rules "$tmp/corpus.jsonl" -o "$tmp/sluice.jsonl")
read -r en un sn < <(cpu "$sluice" filter -q --rules $rules "$tmp/corpus.jsonl" -o "$tmp/sluice-n.jsonl")
calc() { awk "BEGIN { print $1 }"; }
c1=$(calc "$u1 + $s1")
printf 'sluice filter --rules %s -@ 1: %.3f s wall, %.3f s CPU, %.1f MB/s per core\n' $rules "$e1" "$c1" "$(calc "$mb / $c1")"
printf 'sluice, all %d cores: %.3f s wall, %.1f MB/s\n' "$(nproc)" "$en" "$(calc "$mb / $en")"
if [ -z "$py" ] || ! "$py" -c "import datatrove, spacy" 2>/dev/null; then
  echo "datatrove: not installed (RULES_BENCH_PYTHON), peer skipped"
  exit 0
fi
"$py" - "$tmp/corpus.jsonl" "$tmp/datatrove.ids" <<'PY' > "$tmp/dt.txt"
import json, sys, time
from datatrove.data import Document
from datatrove.pipeline.filters import (C4QualityFilter, FineWebQualityFilter, GopherQualityFilter,
                                        GopherRepetitionFilter)
from datatrove.utils.word_tokenizers import load_word_tokenizer
load_word_tokenizer("en").word_tokenize("IS_ALPHA warm up")
docs = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
fs = [GopherRepetitionFilter(), GopherQualityFilter(), C4QualityFilter(), FineWebQualityFilter()]
t0, c0 = time.perf_counter(), time.process_time()
kept = []
for d in docs:
    doc = Document(text=d["text"], id=d["id"])
    for f in fs:
        r = f.filter(doc)
        if r is not True and not (isinstance(r, tuple) and r[0]):
            break
    else:
        kept.append(doc.id)
t1, c1 = time.perf_counter(), time.process_time()
open(sys.argv[2], "w").write("\n".join(kept) + "\n")
print(t1 - t0, c1 - c0)
PY
read -r dwall dcpu < "$tmp/dt.txt"
sed 's/^{"id":"\([^"]*\)".*/\1/' "$tmp/sluice.jsonl" > "$tmp/sluice.ids"
cmp -s "$tmp/sluice.ids" "$tmp/datatrove.ids" && same="same kept documents" || same="KEPT DOCUMENTS DIFFER"
printf 'datatrove 0.10.1 filters (one process, text already in memory): %.2f s wall, %.2f s CPU, %.2f MB/s\n' "$dwall" "$dcpu" "$(calc "$mb / $dcpu")"
printf 'per core: sluice %.1fx datatrove (CPU seconds; %s)\n' "$(calc "$dcpu / $c1")" "$same"

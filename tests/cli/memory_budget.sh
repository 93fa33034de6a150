# Peak memory of each stage is bounded by its documented budget (docs/cli.md,
# "Memory") and does not grow with the input: every stage runs on generated
# heavy-tailed inputs of 1x, 4x and 16x the same pattern (rounds of tiny
# documents with one large document, 1 to 4 MiB, at a different position
# each round), and the peak resident size of the child (GNU time's %M, from
# getrusage) must stay under the budget, and at 16x within a small slack of
# 1x.
. "$SRC/tests/cli/lib.sh"
[ -x /usr/bin/time ] || fail "/usr/bin/time (GNU time, Debian package 'time') is needed"
MiB=1024
# An ASan build (make check-asan) keeps freed blocks in its quarantine, which
# would measure ASan's cache, not sluice: no quarantine here (as mix.sh does).
# Nor does its allocator hand freed size-class memory back to the system
# unless told: merge's 4M documents measured 6.8 MiB over 1M that way (the
# spills' freed arenas kept beside the run buffers), 2.8 MiB when it does
# (1.7 MiB without ASan).
export ASAN_OPTIONS=quarantine_size_mb=0:allocator_release_to_os_interval_ms=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}
# Its shadow memory (an eighth of what the program touches) and red zones
# come on top of what sluice holds: budgets get a quarter more there.
asan=0
ldd "$SLUICE" 2>/dev/null | grep -q libasan && asan=1

# peak_kb NAME command...: runs the command (output to files, never to a
# pipe), records its peak RSS in KiB in $T/NAME.kb and prints it.
peak_kb() {
  local name=$1; shift
  /usr/bin/time -f %M -o "$T/$name.kb" "$@" >"$T/$name.out" 2>"$T/$name.err" || {
    cat "$T/$name.err" >&2; fail "$name: exit status non-zero: $*"; }
  tail -n 1 "$T/$name.kb"
}
# check STAGE BUDGET_KIB SLACK_KIB KB1 KB4 KB16 [4]: each peak under the budget,
# and 16x no more than 1x + slack (with a last argument 4: than 4x + slack, for a
# stage that holds the documents of a few batches at once, reading, formatting and
# writing: only from 4x on does the input have every pair of large documents near
# each other, the 4 MiB one of round 3 and the 1 MiB one after it among them).
check() {
  local stage=$1 budget=$2 slack=$3 a=$4 b=$5 c=$6 ref=$4
  if [ "${7:-1}" = 4 ]; then ref=$b; fi
  # under ASan the growth allowed grows as the budget does: the shadow and red
  # zones of the blocks that grow come on top (tokenize dna: 16.1 MiB for 16)
  [ $asan = 0 ] || { budget=$((budget + budget / 4)); slack=$((slack + slack / 4)); }
  echo "$stage: peak RSS 1x ${a} KiB, 4x ${b} KiB, 16x ${c} KiB (budget ${budget} KiB)"
  for v in "$a" "$b" "$c"; do
    [ "$v" -le "$budget" ] || fail "$stage: peak RSS $v KiB over the budget of $budget KiB"
  done
  [ "$c" -le $((ref + slack)) ] || fail "$stage: peak RSS grows with the input: ${7:-1}x $ref KiB, 16x $c KiB"
}

# Inputs, for x = 1, 4, 16 (4, 16, 64 rounds):
#   docs$x.jsonl  rounds of 256 documents, one of 1, 2, 1, 4 MiB in turn (at
#                 position r*97 % 256), the others a few bytes
#   dna$x.fa      rounds of 64 FASTA records, one of 1, 2, 1, 4 Mbp (at r*13 % 64),
#                 the others 200 bp
#   sdna$x.fa     the same with records of 1, 2, 1, 4 kbp and 8 bp (for score)
#   wav$x/        rounds of 9 WAV files (16 kHz mono s16), one of 15, 30, 15, 60 s,
#                 the others 1000 samples
python3 - "$T" <<'EOF'
import json, os, struct, sys, wave
T = sys.argv[1]
turn = (1, 2, 1, 4)
words = "the of and to in is that for it with as was on be at by this from".split()
line = " ".join(words[(i * 7) % len(words)] for i in range(97)) + "\n"
text = {m: (line * ((m << 20) // len(line) + 1))[: m << 20] for m in (1, 2, 4)}
unit = "ACGTTGCAACGGTTCAGTCA" * 50 + "NNNNacgtacgt" * 10
def fasta(name, n):
    s = (unit * (n // len(unit) + 1))[:n]
    return ">" + name + "\n" + "\n".join(s[i:i + 60] for i in range(0, n, 60)) + "\n"
pat = struct.pack("<1000h", *[(j * 37) % 2000 - 1000 for j in range(1000)])
with open(f"{T}/long16.jsonl", "w") as f:  # one document of 16 MiB
    f.write(json.dumps({"id": "long", "text": (line * ((16 << 20) // len(line) + 1))[: 16 << 20]}) + "\n")
for x, rounds in ((1, 4), (4, 16), (16, 64)):
    with open(f"{T}/docs{x}.jsonl", "w") as f:
        for r in range(rounds):
            for i in range(256):
                t = text[turn[r % 4]] if i == r * 97 % 256 else f"small document {r} {i}"
                f.write(json.dumps({"id": f"{r}.{i}", "text": t, "src": "gen"}) + "\n")
    with open(f"{T}/dna{x}.fa", "w") as f, open(f"{T}/sdna{x}.fa", "w") as g:
        for r in range(rounds):
            for i in range(64):
                big = i == r * 13 % 64
                f.write(fasta(f"r{r}_{i}", turn[r % 4] << 20 if big else 200))
                g.write(fasta(f"r{r}_{i}", turn[r % 4] << 10 if big else 8))
    os.makedirs(f"{T}/wav{x}")
    for r in range(rounds):
        for i in range(9):
            n = turn[r % 4] * 15 * 16 if i == r % 9 else 1  # thousands of samples
            with wave.open(f"{T}/wav{x}/r{r:03d}_{i}.wav", "wb") as w:
                w.setnchannels(1)
                w.setsampwidth(2)
                w.setframerate(16000)
                w.writeframes(pat * n)
EOF
KB() { cat "$T/$1.kb"; }

# ---- read: --mem-budget (default 64 MiB) + 8 x the longest document + 16 MiB
for x in 1 4 16; do
  # (-@ 2: read's default is one thread; two hold three batches at once)
  peak_kb read$x "$SLUICE" read -@ 2 --mem-budget 16M "$T/docs$x.jsonl" -o "$T/read$x.jsonl" >/dev/null
  [ "$(wc -l < "$T/read$x.jsonl")" -eq $((x * 4 * 256)) ] || fail "read: wrong document count"
done
check "read --mem-budget 16M" $(((16 + 8 * 4 + 16) * MiB)) $((8 * MiB)) "$(KB read1)" "$(KB read4)" "$(KB read16)" 4
peak_kb read_default "$SLUICE" read -@ 2 "$T/docs16.jsonl" -o "$T/read_default.jsonl" >/dev/null
v=$(KB read_default)
echo "read: peak RSS 16x ${v} KiB at the default budget"
[ "$v" -le $(((64 + 8 * 4 + 16) * MiB)) ] || fail "read: peak RSS $v KiB over the default budget"
cmp -s "$T/read_default.jsonl" "$T/read16.jsonl" || fail "read: output depends on --mem-budget"
# the smallest budget (256 KiB batches) changes memory, not the output; less is a usage error
"$SLUICE" read --mem-budget 1M "$T/docs4.jsonl" -o "$T/read4_1m.jsonl"
cmp -s "$T/read4_1m.jsonl" "$T/read4.jsonl" || fail "read: output depends on --mem-budget"
expect_fail 2 '^sluice: read: --mem-budget: 1000 is out of range \[1048576, ' -- \
  "$SLUICE" read --mem-budget 1000 "$T/docs1.jsonl" -o "$T/bad.jsonl"
no_file "$T/bad.jsonl"

# ---- tokenize bpe, tokenize char: the reader's batch (16 MiB), the encoder's
# batches (8 MiB of text; idle slots keep up to 4 batches) + 8 x the longest
# document + 16 MiB. The growth allowance is 16 MiB more than other stages':
# with 2 threads three batches are in flight (one read, one encoded, one
# written: stream/batch.h), each may end with a document of the largest
# size, and 1x has too few of them to reach that plateau (4x is within
# 4 MiB of 16x and of 64x).
for x in 1 4 16; do
  peak_kb bpe$x "$SLUICE" tokenize bpe -q -t "$DATA/bpe/gpt2" "$T/docs$x.jsonl" -o "$T/bpe$x.tok" >/dev/null
  peak_kb char$x "$SLUICE" tokenize char -@ 2 -q --build-vocab "$T/docs$x.jsonl" -o "$T/char$x.tok" >/dev/null
done
check "tokenize bpe" $(((16 + 40 + 8 * 4 + 16) * MiB)) $((48 * MiB)) "$(KB bpe1)" "$(KB bpe4)" "$(KB bpe16)"
check "tokenize char" $(((16 + 40 + 8 * 4 + 16) * MiB)) $((48 * MiB)) "$(KB char1)" "$(KB char4)" "$(KB char16)"
[ "$(KB bpe16)" -le $(($(KB bpe4) + 8 * MiB)) ] || fail "tokenize bpe: peak RSS grows from 4x ($(KB bpe4) KiB) to 16x ($(KB bpe16) KiB)"
# --mem-budget changes the batches, never the output
"$SLUICE" tokenize bpe -q -t "$DATA/bpe/gpt2" --mem-budget 1M "$T/docs4.jsonl" -o "$T/bpe4_1m.tok"
cmp -s "$T/bpe4_1m.tok" "$T/bpe4.tok" || fail "tokenize bpe: output depends on --mem-budget"
peak_kb bpe16s "$SLUICE" tokenize bpe -q -t "$DATA/bpe/gpt2" --mem-budget 8M "$T/docs16.jsonl" -o "$T/bpe16s.tok" >/dev/null
cmp -s "$T/bpe16s.tok" "$T/bpe16.tok" || fail "tokenize bpe: output depends on --mem-budget"
[ "$(KB bpe16s)" -lt "$(KB bpe16)" ] || fail "tokenize bpe --mem-budget 8M: $(KB bpe16s) KiB, not below the default's $(KB bpe16) KiB"

# ---- tokenize bpe with the pre-tokenizers of tokenizer.json (WordPiece's
# BertPreTokenizer; Unigram's regex Split and Metaspace) on one document of
# 16 MiB: each piece goes through the steps as it is cut, nothing is held
# per piece (it used to keep ~56 bytes per piece of the whole document: 27x
# the document, 447 MB for WordPiece here). The budget as above with 16 MiB
# the longest document.
for f in wp:tok/bert-lower.json uni:onepipe/uni-split.json; do
  peak_kb long_${f%%:*} "$SLUICE" tokenize bpe -q -t "$DATA/${f#*:}" "$T/long16.jsonl" -o "$T/long.tok" >/dev/null
  v=$(KB long_${f%%:*}) budget=$(((16 + 40 + 8 * 16 + 16) * MiB))
  [ $asan = 0 ] || budget=$((budget + budget / 4))
  echo "tokenize bpe -t ${f#*:}: peak RSS $v KiB on one document of 16 MiB (budget $budget KiB)"
  [ "$v" -le "$budget" ] || fail "tokenize bpe -t ${f#*:}: peak RSS $v KiB over the budget of $budget KiB (one document of 16 MiB)"
done
rm -f "$T/long16.jsonl" "$T/long.tok"

# ---- tokenize dna: 32 MiB of batches + 2 bytes per base of the longest record
# (4 Mbp) + 16 MiB; with --window: 32 MiB + 16 MiB
for x in 1 4 16; do
  peak_kb dna$x "$SLUICE" tokenize dna -@ 2 "$T/dna$x.fa" -o "$T/dna$x.tok" >/dev/null
  peak_kb dnaw$x "$SLUICE" tokenize dna -@ 2 --window 65536 "$T/dna$x.fa" -o "$T/dnaw$x.tok" >/dev/null
done
check "tokenize dna" $(((32 + 2 * 4 + 16) * MiB)) $((16 * MiB)) "$(KB dna1)" "$(KB dna4)" "$(KB dna16)"
check "tokenize dna --window 65536" $(((32 + 16) * MiB)) $((16 * MiB)) "$(KB dnaw1)" "$(KB dnaw4)" "$(KB dnaw16)"
# records over --in-memory go through a temporary file in pieces: same
# output, and memory bounded whatever the record length (pieces of 4M bases)
for x in 1 4 16; do
  TMPDIR=$T peak_kb dnas$x "$SLUICE" tokenize dna -@ 2 --in-memory 1M --revcomp "$T/dna$x.fa" -o "$T/dnas$x.tok" >/dev/null
  "$SLUICE" tokenize dna -@ 2 --revcomp "$T/dna$x.fa" -o "$T/dnar$x.tok"
  cmp -s "$T/dnas$x.tok" "$T/dnar$x.tok" || fail "tokenize dna --in-memory 1M: output differs"
done
check "tokenize dna --in-memory 1M --revcomp" $(((32 + 1 + 16 + 16) * MiB)) $((8 * MiB)) "$(KB dnas1)" "$(KB dnas4)" "$(KB dnas16)"
! ls "$T"/sluice-record-* >/dev/null 2>&1 || fail "tokenize dna left a temporary file"
TMPDIR=$T/none expect_fail 1 "^sluice: tokenize dna: $T/none: cannot create a temporary file for a long record \(--in-memory\): No such file" -- \
  "$SLUICE" tokenize dna --in-memory 1M "$T/dna1.fa" -o "$T/over.tok"
no_file "$T/over.tok"

# ---- tokenize audio: 2 x threads files in flight, 9 bytes per sample each
# (60 s at 16 kHz: 8.6 MB) + 16 MiB
for x in 1 4 16; do
  peak_kb audio$x "$SLUICE" tokenize audio -@ 2 "$T/wav$x" -o "$T/audio$x.tok" >/dev/null
done
check "tokenize audio" $((4 * 9 * 960000 / 1024 + 16 * MiB)) $((16 * MiB)) "$(KB audio1)" "$(KB audio4)" "$(KB audio16)"

# ---- shard: 5 bytes per token of the longest document (4 M tokens) + 16 MiB
for x in 1 4 16; do
  peak_kb shard$x "$SLUICE" shard --seq-len 2048 --pad 4 "$T/dna$x.tok" -o "$T/shard$x" >/dev/null
done
check "shard" $(((5 * 4 + 16) * MiB)) $((8 * MiB)) "$(KB shard1)" "$(KB shard4)" "$(KB shard16)"

# ---- score (tiny model): --batch-tokens (16384) tokens of activations + 16 MiB
for x in 1 4 16; do
  "$SLUICE" tokenize dna "$T/sdna$x.fa" -o "$T/sdna$x.tok"
  peak_kb score$x "$SLUICE" score -@ 1 -m "$DATA/model/hf_f32" --force --to-stream "$T/sdna$x.tok" -o "$T/score$x.tok" >/dev/null
done
check "score" $((32 * MiB)) $((8 * MiB)) "$(KB score1)" "$(KB score4)" "$(KB score16)"

# ---- filter: one document (5 bytes per token of the longest) + 16 MiB; the
# percentiles of --keep-pct come from a first pass
for x in 1 4 16; do
  peak_kb filter$x "$SLUICE" filter --field tokens --keep-pct 10:90 "$T/dna$x.tok" -o "$T/filter$x.tok" >/dev/null
done
check "filter" $(((5 * 4 + 16) * MiB)) $((8 * MiB)) "$(KB filter1)" "$(KB filter4)" "$(KB filter16)"

# ---- the number of documents: 1M and 4M tiny documents (3
# tokens each; 16M would take minutes on a small machine, 4M proves the
# point: a per-document cost of even 4 bytes shows as 11 MiB over 1M).
# Every stage's per-document state spills (stream/spill.h): 4M must be
# within a few MiB of 1M (both past the spills' in-memory halves). Tokenizing
# holds nothing per document: 500k documents within a few MiB of 100k.
tiny() { # N FILE: N documents of 3 tokens with a score, as a token stream
  awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "{\"id\":\"d%d\",\"ppl\":%d.5,\"ids\":[1,2,0]}\n", i, (i * 7919) % 1000 }' \
    > "$T/tiny.jsonl"
  "$SLUICE" tokenize ids -q --vocab-size 50277 --eos 0 "$T/tiny.jsonl" -o "$2"
  rm -f "$T/tiny.jsonl"
}
tiny 1000000 "$T/n1m.tok"
tiny 4000000 "$T/n4m.tok"
# flat N1 N2 STAGE BUDGET_KIB SLACK_KIB: both under the budget, N2 within slack of N1
flat() {
  local a b budget=$4; a=$(KB "$1") b=$(KB "$2")
  [ $asan = 0 ] || budget=$((budget + budget / 4))
  echo "$3: peak RSS ${a} KiB ($1), ${b} KiB ($2); budget $budget KiB"
  [ "$a" -le "$budget" ] && [ "$b" -le "$budget" ] || fail "$3: over the budget of $budget KiB"
  [ "$b" -le $((a + $5)) ] || fail "$3: peak RSS grows with the number of documents: $a KiB, then $b KiB"
}
for n in 1m 4m; do
  peak_kb nshard$n "$SLUICE" shard -q --seq-len 2048 "$T/n$n.tok" -o "$T/nshard$n" >/dev/null
  peak_kb nstats$n "$SLUICE" stats "$T/nshard$n" >/dev/null
  peak_kb nmerge$n "$SLUICE" merge -q "$T/nshard$n" -o "$T/nmg$n" >/dev/null
  diff -r "$T/nshard$n" "$T/nmg$n" >/dev/null || fail "merge of one directory is not that directory ($n documents)"
  rm -rf "$T/nmg$n"
  peak_kb nmix$n "$SLUICE" mix -q --source a="$T/n$n.tok":1 --tokens 2M -o "$T/nmix$n.tok" >/dev/null
  rm -f "$T/nmix$n.tok"
  peak_kb nexport$n "$SLUICE" export megatron -q "$T/n$n.tok" -o "$T/nmeg$n/c" >/dev/null
  peak_kb nfilter$n "$SLUICE" filter -q --keep-pct 10:90 "$T/n$n.tok" -o "$T/nf$n.tok" >/dev/null
done
flat nfilter1m nfilter4m "filter --keep-pct (documents)" $(((16 + 16) * MiB)) $((4 * MiB))
rm -f "$T/nf1m.tok" "$T/nf4m.tok"
flat nshard1m nshard4m "shard (documents)" $(((16 + 32 + 16) * MiB)) $((4 * MiB))
flat nstats1m nstats4m "stats DIR (documents)" $(((16 + 4 + 16) * MiB)) $((4 * MiB))
grep -q '"documents": 4000000,' "$T/nstats4m.out" || fail "stats DIR: wrong document count"
# merge: the repeated-id check's 32 MiB spill, the pieces sorted by document
# (16 MiB) and the documents waiting for their pieces (4 MiB)
flat nmerge1m nmerge4m "merge (documents)" $(((32 + 16 + 4 + 16) * MiB)) $((4 * MiB))
# mix: two spills of 8 MiB for one source (lengths, copies) and 16 MiB for
# the plan's sort; from 1M to 4M the spills merge more runs, each with its
# read buffer (within their budgets): 8 MiB of slack
flat nmix1m nmix4m "mix (documents)" $(((8 + 8 + 16 + 16) * MiB)) $((8 * MiB))
flat nexport1m nexport4m "export megatron (documents)" $((32 * MiB)) $((4 * MiB))
[ "$(stat -c %s "$T/nmeg4m/c.idx")" -eq $((34 + 4000000 * 20 + 8)) ] || fail "export megatron: wrong .idx size"
rm -rf "$T/nshard1m" "$T/nshard4m" "$T/nmeg1m" "$T/nmeg4m" "$T/n4m.tok"
# tokenize text, every family: no per-document state (100k and 500k
# documents: 3 MiB of slack catches 8 bytes per document). On one thread: a
# second thread makes its piece cache (4 MiB) at its first piece, and
# whether it gets one of these small batches at all is timing (a CI run
# measured 42 MiB for 100k documents, 47 MiB for 500k, both 47 MiB here)
awk 'BEGIN { for (i = 0; i < 500000; i++) printf "{\"id\":\"d%d\",\"text\":\"w%d x\"}\n", i, i % 1000 }' > "$T/t500k.jsonl"
head -n 100000 "$T/t500k.jsonl" > "$T/t100k.jsonl"
for n in 100k 500k; do
  peak_kb tgpt2$n "$SLUICE" tokenize bpe -q -@ 1 -t "$DATA/bpe/gpt2" "$T/t$n.jsonl" -o "$T/t.tok" >/dev/null
  peak_kb twp$n "$SLUICE" tokenize bpe -q -@ 1 -t "$DATA/tok/bert-lower.json" "$T/t$n.jsonl" -o "$T/t.tok" >/dev/null
  peak_kb tspm$n "$SLUICE" tokenize bpe -q -@ 1 -t "$DATA/spm/mistral-v1.model" "$T/t$n.jsonl" -o "$T/t.tok" >/dev/null
  peak_kb tuni$n "$SLUICE" tokenize bpe -q -@ 1 -t "$DATA/spm/uni-bf.model" "$T/t$n.jsonl" -o "$T/t.tok" >/dev/null
  peak_kb ttik$n "$SLUICE" tokenize bpe -q -@ 1 -t "$DATA/tiktoken/small.tiktoken" --pattern cl100k "$T/t$n.jsonl" -o "$T/t.tok" >/dev/null
  peak_kb tchar$n "$SLUICE" tokenize char -q -@ 1 --build-vocab "$T/t$n.jsonl" -o "$T/t.tok" >/dev/null
done
for f in gpt2 wp spm uni tik char; do
  flat t${f}100k t${f}500k "tokenize ($f, documents)" $(((16 + 40 + 8 * 4 + 16) * MiB)) $((3 * MiB))
done
rm -f "$T/t500k.jsonl" "$T/t100k.jsonl" "$T/t.tok"

#!/usr/bin/env bash
# Partitioned runs (docs/scale-out.md): the cost of doing the same
# work as N processes (--part R/N) instead of one, and the cost of bringing
# the parts together again.
#
# 1. Partitioning overhead. The same ~$MB MB of JSON Lines (the generator of
#    bench/read.sh) is processed once by one process and once as N parts run
#    one after the other (N=8), each process with one thread (-@ 1) so that
#    CPU seconds count work, not idle threads. Three stages:
#      read                      sluice read [--part R/N]
#      read | tokenize bpe       the text pipeline of examples/slurm/text.sh
#      tokenize bpe (direct)     tokenize bpe [--part R/N] on the raw files
#    with the GPT-NeoX-20B tokenizer. Prints the least over RUNS runs of the
#    CPU seconds (user + sys of every process) and of the wall seconds, the overhead
#    (parts - one) / one, and the fixed cost per extra process that it implies;
#    checks that the parts' outputs equal the single run's.
# 2. Bringing the parts together: `shard` of the single token stream against
#    `shard` of the N part files (a directory, several inputs) and `merge` of N
#    per-part shard directories, same tokens, same run.
#
# Env: SLUICE_BIN, MB (default 150), N (default 8), RUNS (default 3),
# ONLY=together (section 2 alone: the token streams are made once, untimed),
# TOKENIZER (default the GPT-NeoX-20B tokenizer.json of /work/shared/data or
# tests/data/bpe, the same file).
set -euo pipefail
S=${SLUICE_BIN:-$(dirname "$0")/../sluice}
SRC=$(cd "$(dirname "$0")/.." && pwd)
MB=${MB:-150}
N=${N:-8}
RUNS=${RUNS:-3}
TOK=${TOKENIZER:-/work/shared/data/tokenizers/gpt-neox-20b/tokenizer.json}
[ -f "$TOK" ] || TOK=$SRC/tests/data/bpe/neox-tokenizer.json
[ -x /usr/bin/time ] || { echo "bench/scale.sh: /usr/bin/time is required (apt-get install time)" >&2; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench-scale.XXXXXX")
trap 'rm -rf "$W"' EXIT

cat "$SRC"/examples/data/text/*.txt | tr -s ' \t\n' '\n' | tr -d '"\\\000-\011\013-\037' | grep . > "$W/words"
awk -v target=$((MB * 1000000)) 'NR == FNR { w[n++] = $0; next }
  END {
    srand(20261122); size = 0; d = 0
    while (size < target) {
      len = 200 + int(rand() * 600); s = ""
      for (i = 0; i < len; i++) s = s w[int(rand() * n)] (rand() < 0.02 ? "\\n" : " ")
      line = sprintf("{\"id\":\"bench-%d\",\"text\":\"%s\",\"meta\":{\"source\":\"bench\",\"n\":%d}}", d, s, d)
      print line; size += length(line) + 1; d++
    }
  }' "$W/words" /dev/null > "$W/docs.jsonl"
IN=$W/docs.jsonl
bytes=$(stat -c %s "$IN")
isa=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512bw|sha_ni)$' | tr '\n' ' ')
echo "scale bench: $(date -u +%FT%TZ), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1), ISA: ${isa:-baseline}, kernel $(uname -r)"
echo "input: $(wc -l < "$IN") documents, $((bytes / 1000000)) MB JSON Lines (page cache warm); tokenizer $TOK"
echo "N = $N parts run one after the other, every process -@ 1; least CPU and least wall time of $RUNS runs; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

# times COMMAND: appends "wall cpu" (cpu = user + sys of the whole process tree)
times_of() { # FILE COMMAND
  local f=$1
  /usr/bin/time -o "$W/time" -f '%e %U %S' bash -o pipefail -c "$2" > /dev/null ||
    { echo "bench/scale.sh: failed: $2" >&2; exit 1; }
  awk '{ printf "%s %.3f\n", $1, $2 + $3 }' "$W/time" >> "$f"
}
# the least of the runs: on a shared machine other jobs only ever add time
med() { sort -n -k"$2" "$1" | head -n 1 | awk -v k="$2" '{ print $k }'; }
parts_loop() { # COMMAND with R in it: the N parts in order
  echo "for R in \$(seq 0 $((N - 1))); do $1; done"
}

T="-t '$TOK'"
one_read="'$S' read -@ 1 '$IN' > '$W/one.jsonl'"
parts_read=$(parts_loop "'$S' read -@ 1 --part \$R/$N '$IN'")" > '$W/parts.jsonl'"
one_pipe="'$S' read -@ 1 '$IN' | '$S' tokenize bpe -q -@ 1 $T -o '$W/one-pipe.tok'"
parts_pipe=$(parts_loop "'$S' read -@ 1 --part \$R/$N '$IN' | '$S' tokenize bpe -q -@ 1 $T -o '$W/pipe/t-'\$R'-of-$N.tok'")
one_direct="'$S' tokenize bpe -q -@ 1 $T '$IN' -o '$W/one.tok'"
parts_direct=$(parts_loop "'$S' tokenize bpe -q -@ 1 $T --part \$R/$N '$IN' -o '$W/direct/t-'\$R'-of-$N.tok'")
# the same with fewer, larger parts (N2, default 2): the fixed cost against more work per part
N2=${N2:-2}
parts_direct2="for R in \$(seq 0 $((N2 - 1))); do '$S' tokenize bpe -q -@ 1 $T --part \$R/$N2 '$IN' -o '$W/direct2/t-'\$R'-of-$N2.tok'; done"
empty_read="for i in 1 2 3 4 5 6 7 8 9 10; do '$S' read -q -@ 1 '$W/empty.jsonl'; done"
empty_tok="for i in 1 2 3 4 5 6 7 8 9 10; do '$S' tokenize bpe -q -@ 1 $T '$W/empty.jsonl' -o /dev/null; done"
: > "$W/empty.jsonl"
mkdir -p "$W/pipe" "$W/direct" "$W/direct2"
if [ "${ONLY:-}" = together ]; then
  eval "$one_direct"
  eval "$parts_direct"
fi
for ((i = 0; i < RUNS; i++)); do
  [ "${ONLY:-}" != together ] || break # interleaved, so that drifting load hits both sides alike
  times_of "$W/t.one_read" "$one_read"
  times_of "$W/t.parts_read" "$parts_read"
  times_of "$W/t.one_pipe" "$one_pipe"
  times_of "$W/t.parts_pipe" "$parts_pipe"
  times_of "$W/t.one_direct" "$one_direct"
  times_of "$W/t.parts_direct" "$parts_direct"
  times_of "$W/t.parts_direct2" "$parts_direct2"
  times_of "$W/t.empty_read" "$empty_read"
  times_of "$W/t.empty_tok" "$empty_tok"
done

if [ "${ONLY:-}" != together ]; then
# the parts give exactly the single run's output
cmp "$W/one.jsonl" "$W/parts.jsonl" || { echo "bench/scale.sh: read parts differ from one run" >&2; exit 1; }
"$S" cat "$W/one.tok" | md5sum > "$W/sum.one"
"$S" cat "$W/pipe" | md5sum | cmp -s - "$W/sum.one" || { echo "bench/scale.sh: read --part | tokenize differs" >&2; exit 1; }
"$S" cat "$W/direct" | md5sum | cmp -s - "$W/sum.one" || { echo "bench/scale.sh: tokenize --part differs" >&2; exit 1; }
"$S" cat "$W/direct2" | md5sum | cmp -s - "$W/sum.one" || { echo "bench/scale.sh: tokenize --part (N2) differs" >&2; exit 1; }
cmp -s "$W/one.tok" "$W/one-pipe.tok" || { echo "bench/scale.sh: tokenize direct != read | tokenize" >&2; exit 1; }
echo "outputs: the $N parts of every stage equal the single run (read: bytes; token streams: documents)"

printf '  %-24s %10s %10s %10s %10s %9s %12s\n' "stage" "one CPU s" "(wall s)" "$N parts CPU" "(wall s)" "overhead" "per process"
row() { # LABEL KEY PROCESSES-PER-PART [PARTS-KEY N]
  local ow oc pw pc
  oc=$(med "$W/t.one_$2" 2); ow=$(med "$W/t.one_$2" 1)
  pc=$(med "$W/t.parts_${4:-$2}" 2); pw=$(med "$W/t.parts_${4:-$2}" 1)
  awk -v l="$1" -v oc="$oc" -v ow="$ow" -v pc="$pc" -v pw="$pw" -v n="${5:-$N}" -v k="$3" -v mb="$((bytes / 1000000))" 'BEGIN {
    printf "  %-24s %10.2f %10.2f %10.2f %10.2f %8.1f%% %9.0f ms\n", l, oc, ow, pc, pw, 100 * (pc - oc) / oc, 1000 * (pc - oc) / ((n - 1) * k)
    # the fixed cost per part against the work of a part of P MB: <= 5% from P = 20 x fixed / (CPU per MB)
    f = (pc - oc) / (n - 1); if (f < 0) f = 0
    printf "%s: %.0f\n", l, 20 * f / (oc / mb) > "/dev/stderr" }' 2>>"$W/threshold"
}
row "read" read 1
row "read | tokenize bpe" pipe 2
row "tokenize bpe (direct)" direct 1
echo "  (per process: (parts - one) / ($N - 1) / processes per part, the fixed cost each extra process adds)"
echo "  overhead <= 5% from parts of (MB of this input per part, at these fixed costs): $(paste -sd ';' "$W/threshold" | sed 's/;/; /g')"
echo "  with $N2 parts (the \"$N parts\" columns):"
row "tokenize bpe (direct)" direct 1 direct2 "$N2"
awk -v r="$(med "$W/t.empty_read" 2)" -v t="$(med "$W/t.empty_tok" 2)" 'BEGIN {
  printf "  start-up alone (an empty input): read %.1f ms CPU, tokenize bpe (tokenizer load) %.1f ms CPU per process\n", 100 * r, 100 * t }'
fi

# ---- bringing the parts together: shard of one stream, of the N part files, merge of N shard dirs
tbytes=$(stat -c %s "$W/one.tok")
mkdir -p "$W/psh"
shard_one="'$S' shard -q --seq-len 2048 '$W/one.tok' -o '$W/sh-one'"
shard_dir="'$S' shard -q --seq-len 2048 '$W/direct' -o '$W/sh-dir'"
shard_list="'$S' shard -q --seq-len 2048 $(for ((r = 0; r < N; r++)); do printf "'%s' " "$W/direct/t-$r-of-$N.tok"; done) -o '$W/sh-list'"
shard_parts=$(parts_loop "'$S' shard -q --seq-len 2048 '$W/direct/t-'\$R'-of-$N.tok' -o '$W/psh/'\$R")
merge="'$S' merge -q $(for ((r = 0; r < N; r++)); do printf "'%s' " "$W/psh/$r"; done) -o '$W/merged'"
concat="'$S' merge -q --concat-rows $(for ((r = 0; r < N; r++)); do printf "'%s' " "$W/psh/$r"; done) -o '$W/concat'"
# these runs are short: at least 5 of each; outputs are removed before each run, outside the timing
for ((i = 0; i < (RUNS > 5 ? RUNS : 5); i++)); do
  rm -rf "$W/sh-one" "$W/sh-dir" "$W/sh-list" "$W/psh"/* "$W/merged" "$W/concat"
  times_of "$W/t.shard_one" "$shard_one"
  times_of "$W/t.shard_dir" "$shard_dir"
  times_of "$W/t.shard_list" "$shard_list"
  times_of "$W/t.shard_parts" "$shard_parts"
  times_of "$W/t.merge" "$merge"
  times_of "$W/t.concat" "$concat"
done
diff -r "$W/sh-one" "$W/sh-dir" > /dev/null || { echo "bench/scale.sh: shard of the part directory differs" >&2; exit 1; }
diff -r "$W/sh-one" "$W/sh-list" > /dev/null || { echo "bench/scale.sh: shard of the part files differs" >&2; exit 1; }
diff -r "$W/sh-one" "$W/merged" > /dev/null || { echo "bench/scale.sh: merge of the part shard directories differs" >&2; exit 1; }
echo "bringing $N parts together: $((tbytes / 1000000)) MB of token streams, shard --seq-len 2048 (shard of the directory, of the list and merge of the part directories: byte-identical to shard of the one stream)"
printf '  %-40s %8s %9s %8s %9s %14s\n' "" "CPU s" "MB/s CPU" "wall s" "MB/s wall" "CPU vs one"
srow() { # LABEL KEY
  awk -v l="$1" -v c="$(med "$W/t.$2" 2)" -v w="$(med "$W/t.$2" 1)" -v b="$tbytes" -v base="$(med "$W/t.shard_one" 2)" 'BEGIN {
    if (c <= 0) c = 0.001; if (w <= 0) w = 0.001
    printf "  %-40s %8.2f %9.0f %8.2f %9.0f %13.2fx\n", l, c, b / c / 1e6, w, b / w / 1e6, c / base }'
}
srow "shard of the one stream" shard_one
srow "shard of the part directory" shard_dir
srow "shard of the $N part files (list)" shard_list
srow "shard of each part ($N processes)" shard_parts
srow "merge of the $N part shard directories" merge
srow "merge --concat-rows (rows as they are)" concat
echo "  load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

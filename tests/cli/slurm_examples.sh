# examples/slurm/dna.sh and shard.sh as written, run the way Slurm runs an
# array's tasks (SLURM_ARRAY_TASK_ID/MIN/MAX/COUNT set, one process per task;
# tests/cli/slurm_array.sh runs text.sh, shard.sh, score.sh and filter.sh on a
# real cluster): the shard directory equals the single-process one, for
# tokenize dna (whole files) and dna species (sample ranges); a task run
# again with the output in place does nothing.
. "$SRC/tests/cli/lib.sh"
S=$SLUICE
EX=$SRC/examples/slurm
D=$DATA/dna
mkdir "$T/genomes"
cp "$D/lambda_virus.fa" "$D/pysam_ex1.fa" "$D/bowtie2_reads_1_first2000.fq" "$T/genomes/"
gzip -c "$D/dm3_upstream2000_first100.fa" > "$T/genomes/dm3.fa.gz"
export SLUICE=$S INPUTS="$T/genomes/*" DNA_OPTS="--window 1000 --add-eos"
export SPECIES_OPTS="--window 200 --samples 37 --seed 2 --valid-chroms x --test-chroms y"
export SHARD_OPTS="--seq-len 128 --shuffle --seed 1 --val-fraction 0.2"
array() { # N SCRIPT: the tasks of an --array=10-(10+N-1), in a shuffled order
  local n=$1 script=$2
  for id in $(seq 10 $((10 + n - 1)) | shuf); do
    SLURM_ARRAY_TASK_ID=$id SLURM_ARRAY_TASK_MIN=10 SLURM_ARRAY_TASK_MAX=$((10 + n - 1)) SLURM_ARRAY_TASK_COUNT=$n \
      "$script" > "$T/task.log" 2>&1 || fail "$script task $id failed: $(cat "$T/task.log")"
  done
}
# shellcheck disable=SC2086
"$S" tokenize dna -q $DNA_OPTS $INPUTS -o "$T/dna.tok"
# shellcheck disable=SC2086
"$S" shard -q $SHARD_OPTS "$T/dna.tok" -o "$T/want"
for n in 1 3 5; do
  OUT=$T/dna$n array $n "$EX/dna.sh"
  [ "$(ls "$T/dna$n/tokens" | wc -l)" = "$n" ] || fail "dna.sh: $n tasks wrote $(ls "$T/dna$n/tokens")"
  OUT=$T/dna$n "$EX/shard.sh" > "$T/shard.log" 2>&1 || fail "shard.sh: $(cat "$T/shard.log")"
  diff -r "$T/want" "$T/dna$n/shards" || fail "dna.sh with $n tasks: shards differ from one process"
done
# a task whose output is there does nothing
SLURM_ARRAY_TASK_ID=11 SLURM_ARRAY_TASK_MIN=10 SLURM_ARRAY_TASK_MAX=12 SLURM_ARRAY_TASK_COUNT=3 OUT=$T/dna3 \
  "$EX/dna.sh" 2> "$T/err" > /dev/null
grep -q 'exists and verifies; nothing to do' "$T/err" || fail "dna.sh did not skip: $(cat "$T/err")"
# outside an array: a clear error
OUT=$T/x "$EX/dna.sh" 2> "$T/err" && fail "dna.sh outside an array succeeded"
grep -q 'run as a job array task' "$T/err" || fail "no message outside an array: $(cat "$T/err")"

# dna species (the genomes with an index or loaded whole)
export INPUTS="$T/genomes/lambda_virus.fa $T/genomes/pysam_ex1.fa $T/genomes/dm3.fa.gz"
# shellcheck disable=SC2086
"$S" dna species -q $SPECIES_OPTS $INPUTS -o "$T/sp.tok"
rm -rf "$T/want"
# shellcheck disable=SC2086
"$S" shard -q $SHARD_OPTS "$T/sp.tok" -o "$T/want"
OUT=$T/sp SPECIES=1 array 4 "$EX/dna.sh"
OUT=$T/sp "$EX/shard.sh" > "$T/shard.log" 2>&1 || fail "shard.sh: $(cat "$T/shard.log")"
diff -r "$T/want" "$T/sp/shards" || fail "dna.sh SPECIES=1: shards differ from one process"

# text.sh (read | tokenize bpe --append-eos, per task) and shard.sh: one EOS per
# document in the shards, the same directory as one process
mkdir "$T/corpus"
for f in "$SRC"/examples/data/text/*.txt; do
  /usr/bin/python3 -c 'import json,sys; print(json.dumps({"id": sys.argv[1].rsplit("/",1)[1], "text": open(sys.argv[1]).read()[:3000]}))' "$f"
done >"$T/corpus/licenses.jsonl"
export INPUTS="$T/corpus/licenses.jsonl" TOKENIZER="$DATA/bpe/neox-tokenizer.json" SHARD_OPTS="--seq-len 256"
OUT=$T/text array 3 "$EX/text.sh"
OUT=$T/text "$EX/shard.sh" > "$T/shard.log" 2>&1 || fail "shard.sh: $(cat "$T/shard.log")"
"$S" read -q "$INPUTS" | "$S" tokenize bpe -q -t "$TOKENIZER" --append-eos | "$S" shard -q --seq-len 256 -o "$T/want-text"
diff -r "$T/want-text" "$T/text/shards" || fail "text.sh: shards differ from one process"
/usr/bin/python3 "$SRC/tests/shard/one_eos.py" 0 "$T/text/shards" >"$T/eos.out" || fail "text.sh: $(cat "$T/eos.out")"
/usr/bin/python3 "$SRC/tests/shard/one_eos.py" 1 "$T/dna3/shards" >"$T/eos.out" || fail "dna.sh --add-eos: $(cat "$T/eos.out")"
echo "slurm_examples: ok"

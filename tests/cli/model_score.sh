# sluice score end to end on the tiny fixture models (tests/data/model/, made
# by tests/model/gen_fixtures.py; Mamba-1, Falcon-Mamba and Mamba-2): NLLs against the reference values in
# expected.jsonl, option behaviour, and clean errors. *_tf5: the same weights with the config.json
# transformers 5.24 saves (tests/model/gen_tf5_configs.py; Mamba-2's with {"__float__": "Infinity"}).
. "$SRC/tests/cli/lib.sh"
M=$DATA/model

# field VALUE of "key": from one JSON line (numbers only)
num() { sed -n "s/.*\"$1\":\([-0-9.eE+]*\).*/\1/p"; }

# close A B: |A-B| <= 1e-4 * max(1, |B|)
close() { [ -n "$1" ] && [ -n "$2" ] || fail "close: empty value ('$1' vs '$2')"; awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; if (m < 1) m = 1; exit !(d <= 1e-4 * m) }'; }

for m in hf_f32 ssm_f32 hf_bf16 sharded_f16 falcon_f32 falcon_bf16 m2_f32 m2_ssm_bf16 m2g_f16 m2_mlp_bf16 \
  hf_tf5 falcon_tf5 m2_tf5; do
  v=$(sed -n 's/.*"vocab_size": \([0-9]*\).*/\1/p' "$M/$m/config.json")
  "$SLUICE" tokenize ids --vocab-size "$v" --field tokens "$M/$m/expected.jsonl" -o "$T/$m.tok"
  "$SLUICE" score -m "$M/$m" "$T/$m.tok" -o "$T/$m.jsonl"
  [ "$(wc -l < "$T/$m.jsonl")" = "$(wc -l < "$M/$m/expected.jsonl")" ] || fail "$m: wrong number of lines"
  i=0
  while IFS= read -r line; do
    i=$((i + 1))
    want=$(sed -n "${i}p" "$M/$m/expected.jsonl" | sed -n 's/.*"nll": \([-0-9.eE+]*\).*/\1/p')
    got=$(printf '%s' "$line" | num nll)
    close "$got" "$want" || fail "$m doc $i: nll $got, reference $want"
    n=$(sed -n "${i}p" "$M/$m/expected.jsonl" | sed -n 's/.*"tokens": \[\([^]]*\)\].*/\1/p' | tr ',' '\n' | grep -c .)
    want_pred=$((n > 0 ? n - 1 : 0))
    [ "$(printf '%s' "$line" | num tokens)" = "$want_pred" ] || fail "$m doc $i: tokens != $want_pred"
  done < "$T/$m.jsonl"
done

# ppl = exp(nll / tokens); a one-token document has ppl null
awk -F'[:,}]' '{ for (i = 1; i < NF; i++) { if ($i == "\"tokens\"") t = $(i+1); if ($i == "\"nll\"") n = $(i+1); if ($i == "\"ppl\"") p = $(i+1) }
  if (t == 0) { if (p != "null") exit 1 } else { e = exp(n / t); d = (p - e) / e; if (d < -1e-9 || d > 1e-9) exit 1 } }' "$T/hf_f32.jsonl" \
  || fail "ppl is not exp(nll/tokens)"

# --long-context W: nll_reset against the reference with the state reset every 16 tokens
for lm in hf_f32 falcon_f32 m2_f32 m2g_f16 falcon_tf5 m2_tf5; do
"$SLUICE" score -m "$M/$lm" --long-context 16 "$T/$lm.tok" > "$T/lc.jsonl"
i=0
while IFS= read -r line; do
  i=$((i + 1))
  want=$(sed -n "${i}p" "$M/$lm/expected.jsonl" | sed -n 's/.*"nll_reset": \([-0-9.eE+]*\).*/\1/p')
  [ -n "$want" ] || continue
  close "$(printf '%s' "$line" | num nll_reset)" "$want" || fail "$lm long-context doc $i"
  nll=$(printf '%s' "$line" | num nll); t=$(printf '%s' "$line" | num tokens); lc=$(printf '%s' "$line" | num long_context)
  awk -v a="$lc" -v n="$nll" -v r="$want" -v t="$t" 'BEGIN { e = (r - n) / t; d = a - e; exit !(d < 1e-4 && d > -1e-4) }' \
    || fail "long_context is not (nll_reset - nll)/tokens"
done < "$T/lc.jsonl"
[ "$i" -gt 0 ] || fail "$lm: no long-context lines"
done

# --per-token: one log-prob per predicted token, summing to -nll
"$SLUICE" score -m "$M/hf_f32" --per-token "$T/hf_f32.tok" | tail -n 1 > "$T/pt.jsonl"
sed 's/.*"logprobs":\[\([^]]*\)\].*/\1/' "$T/pt.jsonl" | tr ',' '\n' > "$T/lp.txt"
[ "$(grep -c . "$T/lp.txt")" = "$(num tokens < "$T/pt.jsonl")" ] || fail "--per-token count"
sum=$(awk '{ s += $1 } END { printf "%.6f", -s }' "$T/lp.txt")
close "$sum" "$(num nll < "$T/pt.jsonl")" || fail "--per-token sum $sum"

# --max-tokens N: only the first N tokens (N - 1 predictions); equals the prefix's reference log-probs
"$SLUICE" score -m "$M/hf_f32" --max-tokens 5 "$T/hf_f32.tok" | tail -n 1 > "$T/mt.jsonl"
[ "$(num tokens < "$T/mt.jsonl")" = 4 ] || fail "--max-tokens"
want=$(tail -n 1 "$M/hf_f32/expected.jsonl" | sed 's/.*"logp": \[\([^]]*\)\].*/\1/' | tr ',' '\n' | awk 'NR <= 4 { s -= $1 } END { printf "%.9f", s }')
close "$(num nll < "$T/mt.jsonl")" "$want" || fail "--max-tokens nll"

# thread count and chunk size do not change the output
"$SLUICE" score -m "$M/ssm_f32" -@ 1 "$T/ssm_f32.tok" > "$T/t1.jsonl"
"$SLUICE" score -m "$M/ssm_f32" -@ 3 --chunk 5 --batch-tokens 7 "$T/ssm_f32.tok" > "$T/t3.jsonl"
cmp -s "$T/t1.jsonl" "$T/ssm_f32.jsonl" || fail "-@ 1 changed the output"
awk 'NR == FNR { a[FNR] = $0; next } { split(a[FNR], x, /"nll":/); split($0, y, /"nll":/); u = x[2] + 0; v = y[2] + 0;
     d = u - v; if (d < 0) d = -d; if (d > 1e-5 * (u < 0 ? -u : u) + 1e-9) exit 1 }' "$T/t1.jsonl" "$T/t3.jsonl" \
  || fail "--chunk/--batch-tokens changed the scores"

# --to-stream: the same records, scores added to the metadata
"$SLUICE" score -m "$M/hf_f32" --to-stream "$T/hf_f32.tok" -o "$T/scored.tok"
"$SLUICE" cat --no-ids "$T/scored.tok" > "$T/scored.jsonl"
[ "$(wc -l < "$T/scored.jsonl")" = 5 ] || fail "--to-stream record count"
grep -q '"scored_tokens":299,"nll":' "$T/scored.jsonl" || fail "--to-stream metadata"
[ "$("$SLUICE" cat "$T/scored.tok" | sed 's/.*"ids":\[\([^]]*\)\].*/\1/' | md5sum)" = \
  "$("$SLUICE" cat "$T/hf_f32.tok" | sed 's/.*"ids":\[\([^]]*\)\].*/\1/' | md5sum)" ] || fail "--to-stream changed tokens"

# --device cuda: the same numbers on a GPU, or a clear error without one
if "$SLUICE" score -m "$M/hf_f32" --device cuda "$T/hf_f32.tok" > "$T/cuda.jsonl" 2> "$T/cuda.err"; then
  paste -d' ' "$T/hf_f32.jsonl" "$T/cuda.jsonl" | while read -r a b; do
    close "$(printf '%s' "$b" | num nll)" "$(printf '%s' "$a" | num nll)" || fail "cuda vs cpu"; done
else
  grep -q '^sluice: score: cuda' "$T/cuda.err" || fail "--device cuda error: $(cat "$T/cuda.err")"
fi

# errors: wrong tokenizer, ids outside the model, bad models, truncated input, usage
echo '{"id":"x","ids":[1,2,3]}' | "$SLUICE" tokenize ids --vocab-size 1000 -o "$T/v1000.tok"
expect_fail 1 'v1000.tok: the stream.s vocabulary \(1000 ids.*--force' -- "$SLUICE" score -m "$M/hf_f32" "$T/v1000.tok" -o "$T/o1"
no_file "$T/o1"
"$SLUICE" score -m "$M/hf_f32" --force "$T/v1000.tok" > "$T/force.jsonl"
grep -q '"tokens":2' "$T/force.jsonl" || fail "--force"
echo '{"id":"big","ids":[1,70,3]}' | "$SLUICE" tokenize ids --vocab-size 1000 -o "$T/big.tok"
expect_fail 1 "document 'big': token 1 has id 70, not in the model's vocabulary \[0, 64\)" -- \
  "$SLUICE" score -m "$M/hf_f32" --force "$T/big.tok" -o "$T/o2"
no_file "$T/o2"
expect_fail 1 "missing tensor 'backbone.layers.1.mixer.D'" -- "$SLUICE" score -m "$M/bad/missing_tensor" "$T/hf_f32.tok"
expect_fail 1 'config.json' -- "$SLUICE" score -m "$T/nonexistent" "$T/hf_f32.tok"
head -c 200 "$T/hf_f32.tok" > "$T/trunc.tok"
expect_fail 1 'trunc.tok' -- "$SLUICE" score -m "$M/hf_f32" "$T/trunc.tok" -o "$T/o3"
no_file "$T/o3"
expect_fail 2 'MODEL_DIR is required' -- "$SLUICE" score "$T/hf_f32.tok"
expect_fail 2 "--device: 'tpu' is not one of" -- "$SLUICE" score -m "$M/hf_f32" --device tpu "$T/hf_f32.tok"
expect_fail 2 'cannot be combined' -- "$SLUICE" score -m "$M/hf_f32" --per-token --to-stream "$T/hf_f32.tok"
"$SLUICE" score --help > "$T/help.txt"
grep -q -- '--long-context W' "$T/help.txt" || fail "help"

# shard directories: documents reassembled from their pieces score as the token stream they came
# from (sequential rows shorter than the documents, recurrent layout, EOS markers, a val split)
"$SLUICE" shard --seq-len 64 --no-eos --pad 0 "$T/hf_f32.tok" -o "$T/sh1"
"$SLUICE" score -m "$M/hf_f32" "$T/sh1" | sed 's/"split":"train",//' > "$T/sh1.jsonl"
cmp -s "$T/sh1.jsonl" "$T/hf_f32.jsonl" || fail "sequential shards: $(diff "$T/sh1.jsonl" "$T/hf_f32.jsonl")"
"$SLUICE" shard --seq-len 16 --no-eos --pad 0 --layout recurrent --batch 3 "$T/hf_f32.tok" -o "$T/sh2"
"$SLUICE" score -m "$M/hf_f32" "$T/sh2" | sed 's/"split":"train",//' > "$T/sh2.jsonl"
cmp -s "$T/sh2.jsonl" "$T/hf_f32.jsonl" || fail "recurrent shards: $(diff "$T/sh2.jsonl" "$T/hf_f32.jsonl")"
# small batches: scored while other documents are still being reassembled
for sh in sh1 sh2; do
  "$SLUICE" score -m "$M/hf_f32" --batch-tokens 7 "$T/$sh" | sed 's/"split":"train",//' > "$T/$sh.b7.jsonl"
  [ "$(cut -d, -f1,2 "$T/$sh.b7.jsonl")" = "$(cut -d, -f1,2 "$T/hf_f32.jsonl")" ] || fail "$sh --batch-tokens 7: documents"
  paste -d' ' "$T/$sh.b7.jsonl" "$T/hf_f32.jsonl" | while read -r a b; do
    close "$(printf '%s' "$a" | num nll)" "$(printf '%s' "$b" | num nll)" || fail "$sh --batch-tokens 7: $a vs $b"; done
done
sed 's/"tokens": \[\([^]]*\)\]/"ids": [\1, 0]/' "$M/hf_f32/expected.jsonl" > "$T/eos.jsonl"
"$SLUICE" tokenize ids --vocab-size 64 "$T/eos.jsonl" -o "$T/eos.tok"
"$SLUICE" score -m "$M/hf_f32" "$T/eos.tok" > "$T/eos_stream.jsonl"
"$SLUICE" shard --seq-len 32 --eos 0 --pad 0 --val-fraction 0.5 "$T/hf_f32.tok" -o "$T/sh3"
"$SLUICE" score -m "$M/hf_f32" "$T/sh3" > "$T/sh3.jsonl"
grep -q '"split":"val"' "$T/sh3.jsonl" && grep -q '"split":"train"' "$T/sh3.jsonl" || fail "no val/train split in the test"
# (other batches than the stream's: equal up to rounding)
sed 's/"split":"[a-z]*",//' "$T/sh3.jsonl" | sort > "$T/sh3s.jsonl"
sort "$T/eos_stream.jsonl" > "$T/eos_sorted.jsonl"
[ "$(cut -d, -f1,2 "$T/sh3s.jsonl")" = "$(cut -d, -f1,2 "$T/eos_sorted.jsonl")" ] || fail "shards with EOS: ids/tokens"
paste -d' ' "$T/sh3s.jsonl" "$T/eos_sorted.jsonl" | while read -r a b; do
  close "$(printf '%s' "$a" | num nll)" "$(printf '%s' "$b" | num nll)" || fail "shards with EOS: $a vs $b"; done
"$SLUICE" shard --seq-len 16 --no-eos --pad 0 --shuffle "$T/hf_f32.tok" -o "$T/sh4"
expect_fail 1 'shuffled shards cannot be reassembled' -- "$SLUICE" score -m "$M/hf_f32" "$T/sh4" -o "$T/o4"
no_file "$T/o4"
expect_fail 2 'needs a token stream' -- "$SLUICE" score -m "$M/hf_f32" --to-stream "$T/sh1"

# bpb = nll / ln 2 / source bytes, when the stream records source bytes (tokenize char does)
printf '{"id":"t1","text":"abba cab"}\n{"id":"t2","text":"cabbage bag"}\n' > "$T/t.jsonl"
"$SLUICE" tokenize char --unit codepoint --build-vocab "$T/t.jsonl" -o "$T/t.tok"
"$SLUICE" score -m "$M/hf_f32" --force "$T/t.tok" > "$T/t.jsonl.scores"
"$SLUICE" cat --no-ids "$T/t.tok" > "$T/t.cat"
paste -d' ' "$T/t.jsonl.scores" "$T/t.cat" | while read -r s c; do
  b=$(printf '%s' "$c" | num src_bytes)
  [ -n "$b" ] && [ "$b" -gt 0 ] || fail "no src_bytes in the test stream"
  close "$(printf '%s' "$s" | num bpb)" "$(awk -v n="$(printf '%s' "$s" | num nll)" -v b="$b" 'BEGIN { printf "%.12g", n / log(2) / b }')" \
    || fail "bpb: $s"
done
"$SLUICE" score -m "$M/hf_f32" "$T/hf_f32.tok" | grep -c '"bpb"' > "$T/nbpb" || true
[ "$(cat "$T/nbpb")" = 0 ] || fail "bpb without source bytes"

# --prepend ID: the same as scoring the documents with ID put in front; --prepend eos needs an eos id
sed 's/"tokens": \[/"ids": [7, /' "$M/hf_f32/expected.jsonl" > "$T/pre.jsonl"
"$SLUICE" tokenize ids --vocab-size 64 "$T/pre.jsonl" -o "$T/pre.tok"
"$SLUICE" score -m "$M/hf_f32" "$T/pre.tok" > "$T/pre_ref.jsonl"
"$SLUICE" score -m "$M/hf_f32" --prepend 7 "$T/hf_f32.tok" > "$T/pre_opt.jsonl"
[ "$(cut -d, -f1,2 "$T/pre_opt.jsonl")" = "$(cut -d, -f1,2 "$T/pre_ref.jsonl")" ] || fail "--prepend: token counts"
paste -d' ' "$T/pre_opt.jsonl" "$T/pre_ref.jsonl" | while read -r a b; do
  close "$(printf '%s' "$a" | num nll)" "$(printf '%s' "$b" | num nll)" || fail "--prepend: $a vs $b"; done
echo '{"id":"e","ids":[1,2,3]}' | "$SLUICE" tokenize ids --vocab-size 64 --eos 5 -o "$T/e.tok"
"$SLUICE" score -m "$M/hf_f32" --prepend eos "$T/e.tok" > "$T/e1.jsonl"
"$SLUICE" score -m "$M/hf_f32" --prepend 5 "$T/e.tok" > "$T/e2.jsonl"
cmp -s "$T/e1.jsonl" "$T/e2.jsonl" || fail "--prepend eos is not the stream's eos"
expect_fail 1 'no eos id' -- "$SLUICE" score -m "$M/hf_f32" --prepend eos "$T/hf_f32.tok"

# config.json as Python's json writes it (Infinity, -Infinity, NaN; e.g.
# transformers' "time_step_limit": [0.0, Infinity]) is read: the hf_f32
# fixture with such fields added, written by Python's json itself, scores
# exactly as the fixture does. A non-finite value where a number is needed
# is named in the error.
. "$SRC/tests/cli/lib.sh"
M=$DATA/model
cp -r "$M/hf_f32" "$T/m"
python3 - "$M/hf_f32/config.json" "$T/m/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["time_step_limit"] = [0.0, float("inf")]
c["x_nan"] = float("nan")
c["x_neg"] = float("-inf")
json.dump(c, open(sys.argv[2], "w"), indent=2)
PY
grep -q 'Infinity' "$T/m/config.json" && grep -q 'NaN' "$T/m/config.json" || fail "python did not write Infinity/NaN"
"$SLUICE" tokenize ids --vocab-size 64 --field tokens "$M/hf_f32/expected.jsonl" -o "$T/in.tok"
"$SLUICE" score -m "$M/hf_f32" --per-token "$T/in.tok" > "$T/a.jsonl"
"$SLUICE" score -m "$T/m" --per-token "$T/in.tok" > "$T/b.jsonl"
cmp -s "$T/a.jsonl" "$T/b.jsonl" || fail "scores differ with the non-finite config fields"
[ "$(wc -l < "$T/b.jsonl")" = "$(wc -l < "$M/hf_f32/expected.jsonl")" ] || fail "line count"
python3 - "$M/hf_f32/config.json" "$T/m/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["layer_norm_epsilon"] = float("nan")
json.dump(c, open(sys.argv[2], "w"))
PY
expect_fail 1 'config.json:[0-9]+: "layer_norm_epsilon" is not a number in \(0, 1\]' -- "$SLUICE" score -m "$T/m" "$T/in.tok"
# elsewhere JSON stays strict: a JSON Lines input with NaN is an error
printf '{"id":"a","ids":[1,2],"x":NaN}\n' > "$T/nan.jsonl"
expect_fail 1 'invalid JSON value' -- "$SLUICE" tokenize ids --vocab-size 64 "$T/nan.jsonl" -o "$T/o"

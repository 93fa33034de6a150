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
# transformers 5 writes non-finite floats as {"__float__": "Infinity"} (also
# "-Infinity", "NaN"): the configs it saved (m2_tf5 has one in time_step_limit;
# scored against the references in model_score.sh) with that form put into
# other float fields, at the top level and nested, still score as the original
# fixture; where a finite number is needed the field is named.
cp -rL "$M/falcon_tf5" "$T/f5"
python3 - "$M/falcon_tf5/config.json" "$T/f5/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["time_step_max"] = {"__float__": "NaN"}       # an init-only field: read, not used
c["time_step_floor"] = {"__float__": "-Infinity"}
c["x_limits"] = [0.0, {"__float__": "Infinity"}, {"x": {"__float__": "NaN"}}]
json.dump(c, open(sys.argv[2], "w"), indent=2)
PY
grep -q '"__float__": "-Infinity"' "$T/f5/config.json" || fail "no __float__ object written"
"$SLUICE" tokenize ids --vocab-size 56 --field tokens "$M/falcon_f32/expected.jsonl" -o "$T/f.tok"
"$SLUICE" score -m "$M/falcon_f32" --per-token "$T/f.tok" > "$T/fa.jsonl"
"$SLUICE" score -m "$T/f5" --per-token "$T/f.tok" > "$T/fb.jsonl"
cmp -s "$T/fa.jsonl" "$T/fb.jsonl" || fail "Falcon-Mamba: scores differ with __float__ fields"
for bad in 'layer_norm_epsilon {"__float__":"NaN"}' 'mixer_rms_eps {"__float__":"Infinity"}'; do
  python3 - "$M/falcon_tf5/config.json" "$T/f5/config.json" $bad <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c[sys.argv[3]] = json.loads(sys.argv[4])
json.dump(c, open(sys.argv[2], "w"), indent=2)
PY
  expect_fail 1 "config.json:[0-9]+: \"${bad%% *}\" is not a number in \(0, 1\]" -- "$SLUICE" score -m "$T/f5" "$T/f.tok"
done
cp -rL "$M/m2_tf5" "$T/m5"
"$SLUICE" tokenize ids --vocab-size 64 --field tokens "$M/m2_f32/expected.jsonl" -o "$T/m2.tok"
for lim in '[{"__float__": "NaN"}, 1.0]' '[0.0, {"__float__": "-Infinity"}]' '[0.0, {"__float__": "infinity"}]' \
           '[0.0, {"__float__": "Infinity", "x": 1}]'; do
  python3 - "$M/m2_tf5/config.json" "$T/m5/config.json" "$lim" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["time_step_limit"] = json.loads(sys.argv[3])
json.dump(c, open(sys.argv[2], "w"), indent=2)
PY
  expect_fail 1 'config.json:[0-9]+: time_step_limit/dt_limit is not \[min, max\]' -- "$SLUICE" score -m "$T/m5" "$T/m2.tok"
done
# elsewhere JSON stays strict: a JSON Lines input with NaN is an error, and a
# "__float__" object there is an object
printf '{"id":"a","ids":[1,2],"x":NaN}\n' > "$T/nan.jsonl"
expect_fail 1 'invalid JSON value' -- "$SLUICE" tokenize ids --vocab-size 64 "$T/nan.jsonl" -o "$T/o"
printf '{"id":"a","ids":[1,2],"x":{"__float__":"NaN"}}\n' > "$T/tag.jsonl"
"$SLUICE" tokenize ids --vocab-size 64 "$T/tag.jsonl" -o "$T/tag.tok"
"$SLUICE" cat "$T/tag.tok" | grep -q '"x":{"__float__":"NaN"}' || fail "a __float__ object in a document changed: $("$SLUICE" cat "$T/tag.tok")"

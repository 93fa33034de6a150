# sluice tokenize char: byte ids are the UTF-8 bytes (checked against od), code
# point vocabularies built from the data round-trip through detokenize (the
# vocabulary travels in the header), given vocabularies map unknown characters
# to <|unk|>, and option errors are usage errors.
. "$SRC/tests/cli/lib.sh"
B="$DATA/bpe"

# bytes: ids equal the bytes of the text (independent: od), eos/bos specials
printf '{"id":"x","text":"h\\u00e9 \\u4f60"}\n' > "$T/one.jsonl"
"$SLUICE" tokenize char --append-eos --prepend-bos "$T/one.jsonl" | "$SLUICE" cat > "$T/o.jsonl"
want=$(printf 'h\xc3\xa9 \xe4\xbd\xa0' | od -An -tu1 | tr -s ' \n' ',' | sed 's/^,//;s/,$//')
grep -q "\"ids\":\[257,$want,256\],\"src_bytes\":7" "$T/o.jsonl" || fail "byte ids: $(cat "$T/o.jsonl") want $want"
"$SLUICE" tokenize char "$T/one.jsonl" | "$SLUICE" cat --header | grep -q '"vocab_size":258,"token_bytes":2,"eos":256,"bos":257' || fail "byte header"

# round trips: bytes, and code points with the vocabulary built from the data
"$SLUICE" read "$B/corpus.jsonl" > "$T/read.jsonl"
"$SLUICE" tokenize char "$B/corpus.jsonl" | "$SLUICE" detokenize | cmp - "$T/read.jsonl" || fail "byte round trip"
"$SLUICE" tokenize char --build-vocab --save-vocab "$T/v.json" "$B/corpus.jsonl" -o "$T/c.tok"
"$SLUICE" detokenize "$T/c.tok" | cmp - "$T/read.jsonl" || fail "codepoint round trip (header vocab)"
"$SLUICE" detokenize -t "$T/v.json" "$T/c.tok" | cmp - "$T/read.jsonl" || fail "codepoint round trip (vocab file)"
# the vocabulary is the sorted set of code points of the corpus (independent: python)
n=$(python3 -c "import json,sys; print(len(set(''.join(json.loads(l)['text'] for l in open(sys.argv[1], encoding='utf-8')))))" "$B/corpus.jsonl")
"$SLUICE" cat --header "$T/c.tok" | grep -q "\"vocab_size\":$((n + 3))," || fail "vocab size, want $n + 3"

# a given vocabulary: characters it lacks become <|unk|> (= vocab size - 1)
printf '{"type":"char","unit":"codepoint","vocab":["a","b"],"specials":["<|endoftext|>","<|bos|>","<|unk|>"]}\n' > "$T/ab.json"
printf 'abz\n' | "$SLUICE" tokenize char --vocab "$T/ab.json" --lines | "$SLUICE" cat | grep -q '"ids":\[0,1,4\]' || fail "unk"

# errors
expect_fail 2 "reads the input twice" -- "$SLUICE" tokenize char --build-vocab
expect_fail 2 "reads the input twice" -- "$SLUICE" tokenize char --build-vocab - "$T/one.jsonl"
expect_fail 2 "needs --build-vocab or --vocab" -- "$SLUICE" tokenize char --unit codepoint "$T/one.jsonl"
expect_fail 2 "not one of byte\|codepoint" -- "$SLUICE" tokenize char --unit word "$T/one.jsonl"
printf '{"type":"char","unit":"codepoint","vocab":["ab"],"specials":["<|endoftext|>","<|bos|>","<|unk|>"]}' > "$T/bad.json"
expect_fail 1 "bad.json: offset [0-9]+: vocab entry 0 is not a single new character" -- "$SLUICE" tokenize char --vocab "$T/bad.json" "$T/one.jsonl" -o "$T/z.tok"
no_file "$T/z.tok"
expect_fail 1 "no character vocabulary in its header" -- "$SLUICE" detokenize < <("$SLUICE" tokenize bpe -t "$B/gpt2" "$T/one.jsonl")
# a character vocabulary is recognised by its content: tokenize bpe points to tokenize char
expect_fail 2 "v.json is a character vocabulary: use 'sluice tokenize char --vocab" -- "$SLUICE" tokenize bpe -t "$T/v.json" "$T/one.jsonl"
"$SLUICE" cat --text --no-ids --tokenizer "$T/v.json" "$T/c.tok" | head -1 | grep -q '"text":"Hello world"' || fail "cat --text with a character vocabulary"
# a run that fails leaves no --save-vocab file (it is written when the run succeeds)
printf '{"text":"ab"}\n{"text":5}\n' > "$T/badc.jsonl"
expect_fail 1 'badc.jsonl:2: field "text" is not a string' -- "$SLUICE" tokenize char -q --save-vocab "$T/vfail.json" "$T/badc.jsonl" -o "$T/vfail.tok"
no_file "$T/vfail.json"
no_file "$T/vfail.tok"

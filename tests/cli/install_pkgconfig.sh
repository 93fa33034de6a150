# make install, then a program built only from the installed headers and
# library through pkg-config (tests/cli/install_pkgconfig.c) reads a token
# stream and BPE-encodes text; its answers must equal the sluice binary's.
. "$SRC/tests/cli/lib.sh"

# the build directory that made $SLUICE (build, build-asan, ...); SAN=1 and
# CUDA=... reach the inner make through MAKEFLAGS under `make check-asan`
bin=$(cd "$(dirname "$SLUICE")" && pwd -P)
build=${bin#"$(cd "$SRC" && pwd -P)"/}
[ "$build" != "$bin" ] || fail "cannot tell the build directory of $SLUICE"
CC=${CC:-cc}; case "$CC" in cc|gcc|clang|gcc-*|clang-*) ;; *) CC=cc;; esac

# 1. DESTDIR staging with PREFIX=/usr, as a distribution package is built
make -s -C "$SRC" BUILD="$build" install DESTDIR="$T/root" PREFIX=/usr >"$T/install.log" 2>&1 \
  || { cat "$T/install.log"; fail "make install failed"; }
inc=$T/root/usr/include/sluice
[ -f "$inc/sluice.h" ] && [ -f "$T/root/usr/lib/libsluice.a" ] && [ -f "$T/root/usr/lib/pkgconfig/sluice.pc" ] \
  && [ -x "$T/root/usr/bin/sluice" ] || fail "installed tree incomplete: $(cd "$T/root" && find . -type f | head)"
# internal headers stay out: the operator table, the BPE internals and test hooks, byte order, RNG
for h in kernels/kernels.h tokenize/models/bpe_internal.h base/byteorder.h base/rng.h shard/util.h shard/shard_internal.h; do
  [ ! -e "$inc/$h" ] || fail "internal header $h was installed"
done
# no installed header reaches for the source tree: every include is <...>
! grep -rn '^#include "' "$inc" || fail "an installed header has a quoted include"
# the version in sluice.pc is the binary's
export PKG_CONFIG_PATH=$T/root/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$T/root
[ "$(pkg-config --modversion sluice)" = "$("$SLUICE" --version | sed 's/^sluice //')" ] || fail "sluice.pc version differs from sluice --version"
flags=$(pkg-config --cflags --libs sluice)

# every public header compiles on its own (self-contained) and all together, with the
# unstable API (SLUICE_UNSTABLE_API); sluice.h and the core headers it includes first also
# without it (the stable API)
core=$(sed -n '/^#ifdef SLUICE_UNSTABLE_API/q; s/^#include <sluice\/\(.*\)>$/\1/p' "$inc/sluice.h")
[ "$(echo "$core" | wc -w)" -ge 8 ] || fail "sluice.h includes too few core headers: $core"
n=0
for h in $(cd "$inc" && find . -name '*.h' | sed 's|^\./||' | sort); do
  for def in -DSLUICE_UNSTABLE_API ""; do
    [ -n "$def" ] || case " sluice.h $(echo $core) " in *" $h "*) ;; *) continue;; esac
    printf '#include <sluice/%s>\n#include <sluice/%s>\nint main(void) { return 0; }\n' "$h" "$h" > "$T/one.c"
    $CC -std=c17 -Wall -Wextra -Werror -pedantic $def $(pkg-config --cflags sluice) -c "$T/one.c" -o "$T/one.o" \
      || fail "installed header $h does not compile on its own ($def)"
  done
  # and as C++, its declarations with C linkage
  cp "$T/one.c" "$T/one.cc"
  c++ -std=c++17 -Wall -Wextra -Werror -DSLUICE_UNSTABLE_API $(pkg-config --cflags sluice) -c "$T/one.cc" -o "$T/one.o" \
    || fail "installed header $h does not compile as C++"
  grep -q 'extern "C"' "$inc/$h" || fail "installed header $h has no extern \"C\" guard"
  n=$((n + 1))
done
[ $n -ge 20 ] || fail "only $n headers installed"
# and from C++, stable and unstable (extern "C"; g++ comes with build-essential)
printf '#include <sluice/sluice.h>\nint main() { return sl_cuda_device_count() < 0; }\n' > "$T/cxx.cc"
for def in "" -DSLUICE_UNSTABLE_API; do
  c++ -std=c++17 -Wall -Wextra -Werror $def $(pkg-config --cflags sluice) -c "$T/cxx.cc" -o "$T/cxx.o" \
    || fail "sluice.h does not compile as C++ ($def)"
done

# the stable API: the functions sluice.h declares without SLUICE_UNSTABLE_API are exactly
# those docs/api.md lists, and each has a comment right above its declaration
printf '#include <sluice/sluice.h>\n' > "$T/stable.c"
$CC -std=c17 -E -P $(pkg-config --cflags sluice) "$T/stable.c" | tr '\n' ' ' \
  | grep -oE '\b(sl|dna)_[a-z0-9_]+ *\(' | sed 's/ *($//' | sort -u > "$T/declared"
sed -n 's/^| [a-z ]* | `[^|]*` | \(.*\) |$/\1/p' "$SRC/docs/api.md" | grep -oE '`(sl|dna)_[a-z0-9_]+`' | tr -d '`' \
  | grep -vx 'sl_err' | sort -u > "$T/documented"
diff "$T/documented" "$T/declared" || fail "the stable API sluice.h declares differs from docs/api.md's table (< docs, > sluice.h)"
[ "$(wc -l < "$T/declared")" -ge 30 ] || fail "only $(wc -l < "$T/declared") stable functions"
for f in $(cat "$T/declared"); do
  hit=$(cd "$inc" && grep -nE "^[a-z].*\b$f\(" $core | head -1)
  [ -n "$hit" ] || fail "stable $f is not declared in a core header"
  file=${hit%%:*}; line=$(echo "$hit" | cut -d: -f2)
  sed -n "$((line - 1))p" "$inc/$file" | grep -q '\*/ *$' || fail "stable $f ($file:$line) has no comment above it"
done

# 2. the program, from the installed copy only (it is compiled outside the source tree)
cp "$SRC/tests/cli/install_pkgconfig.c" "$T/prog.c"
(cd "$T" && $CC -std=c17 -Wall -Wextra -Werror prog.c -o prog $flags) || fail "cannot build against the installed library"

# real data: the demo's license texts through read and the NeoX tokenizer
tok=$DATA/bpe/neox-tokenizer.json
"$SLUICE" read "$SRC"/examples/data/text/*.txt -o "$T/docs.jsonl"
"$SLUICE" tokenize bpe --tokenizer "$tok" --append-eos "$T/docs.jsonl" -o "$T/docs.tok"
"$T/prog" count "$T/docs.tok" > "$T/got"
"$SLUICE" cat --header "$T/docs.tok" > "$T/header.json"
"$SLUICE" cat "$T/docs.tok" | python3 -c '
import json, sys
docs = [json.loads(l) for l in sys.stdin]
vocab = json.load(open(sys.argv[1]))["vocab_size"]
print("docs %d tokens %d sum %d vocab %d" % (len(docs), sum(len(d["ids"]) for d in docs), sum(sum(d["ids"]) for d in docs), vocab))
' "$T/header.json" > "$T/want"
diff "$T/want" "$T/got" || fail "token stream read through the installed library differs from sluice cat"
grep -q '^docs 8 ' "$T/got" || fail "expected the 8 license texts: $(cat "$T/got")"

# a shard directory through the accessors of the opaque sl_shard equals sluice stats
"$SLUICE" shard "$T/docs.tok" --seq-len 512 --val-fraction 0.3 -o "$T/shards"
"$T/prog" shard "$T/shards" > "$T/got"
"$SLUICE" stats "$T/shards" | python3 -c '
import json, sys
s = json.load(sys.stdin)
for name, sp in s["splits"].items():
    print("%s rows %d pieces %d documents %d tokens %d seq_len %d" % (name, sp["rows"], sp["pieces"], sp["documents"], sp["tokens"], s["seq_len"]))
' > "$T/want"
diff "$T/want" "$T/got" || fail "shard directory read through the installed library differs from sluice stats"
[ "$(wc -l < "$T/got")" -eq 2 ] || fail "expected a train and a val split: $(cat "$T/got")"

# BPE through the library equals tokenize bpe on the same text
for f in "$SRC"/examples/data/text/*.txt; do
  [ -f "$f" ] || continue
  python3 -c 'import json,sys; print(json.dumps({"id":"x","text":open(sys.argv[1],encoding="utf-8").read()}))' "$f" \
    | "$SLUICE" tokenize bpe --tokenizer "$tok" | "$SLUICE" cat \
    | python3 -c 'import json,sys; print(" ".join(map(str, json.loads(sys.stdin.readline())["ids"])))' > "$T/want"
  "$T/prog" bpe "$tok" "$f" > "$T/got"
  diff -q "$T/want" "$T/got" >/dev/null || fail "BPE ids of $(basename "$f") through the installed library differ"
done

# 3. PREFIX alone (no DESTDIR), as a user installs into a home directory
make -s -C "$SRC" BUILD="$build" install PREFIX="$T/home" >"$T/install2.log" 2>&1 \
  || { cat "$T/install2.log"; fail "make install PREFIX=... failed"; }
unset PKG_CONFIG_SYSROOT_DIR
export PKG_CONFIG_PATH=$T/home/lib/pkgconfig
(cd "$T" && $CC -std=c17 prog.c -o prog2 $(pkg-config --cflags --libs sluice)) || fail "cannot build against PREFIX=$T/home"
"$T/prog2" count "$T/docs.tok" | diff - <("$T/prog" count "$T/docs.tok")

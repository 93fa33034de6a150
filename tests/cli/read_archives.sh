# sluice read on archives and compressed files built here with the real tools
# (tar, zstd, gzip, xz, bzip2, zip), and on stdin. Expected documents are
# written out by hand from the input texts below.
. "$SRC/tests/cli/lib.sh"
cd "$T"
mkdir src
# JSON Lines: an id, a missing id, a number id, other fields, escapes.
cat > src/a.jsonl <<'J'
{"id":"doc-1","text":"Rivers carry silt to the sea.","lang":"en"}
{"text":"Deltas form where rivers slow down.\nLine two."}

{"id":17,"text":"Caf\u00e9 au lait","tags":["a","b"],"score":0.5}
J
printf 'A plain text file.\nSecond line.\n' > src/b.txt
printf 'Another text, with "quotes" and a tab\there.' > src/c.txt

# expected documents of a.jsonl, b.txt and c.txt when read as SOURCE
want_a() {
  cat <<J
{"id":"doc-1","text":"Rivers carry silt to the sea.","lang":"en"}
{"id":"$1:2","text":"Deltas form where rivers slow down.\nLine two."}
{"id":17,"text":"Café au lait","tags":["a","b"],"score":0.5}
J
}
want_b() { printf '{"id":"%s:1","text":"A plain text file.\\nSecond line.\\n"}\n' "$1"; }
want_c() { printf '{"id":"%s:1","text":"Another text, with \\"quotes\\" and a tab\\there."}\n' "$1"; }

check() { # check NAME: compares out.NAME with want.NAME
  diff "want.$1" "out.$1" || fail "$1: documents differ"
}

# tar.zst of JSON Lines and text files
tar -C src -cf - a.jsonl b.txt | zstd -q -o docs.tar.zst
"$SLUICE" read docs.tar.zst -o out.tarzst
{ want_a docs.tar.zst:a.jsonl; want_b docs.tar.zst:b.txt; } > want.tarzst
check tarzst

# .jsonl.gz
gzip -c src/a.jsonl > a.jsonl.gz
"$SLUICE" read a.jsonl.gz > out.gz
want_a a.jsonl.gz > want.gz
check gz

# zip of .txt files (also in a subdirectory)
mkdir -p zsrc/sub && cp src/b.txt zsrc/ && cp src/c.txt zsrc/sub/
(cd zsrc && zip -q -r ../texts.zip b.txt sub)
"$SLUICE" read texts.zip > out.zip
{ want_b texts.zip:b.txt; want_c texts.zip:sub/c.txt; } > want.zip
check zip

# stdin: JSON Lines, and a tar.gz archive
"$SLUICE" read < src/a.jsonl > out.stdin
want_a '<stdin>' > want.stdin
check stdin
tar -C src -czf - c.txt a.jsonl | "$SLUICE" read - > out.stdintar
{ want_c '<stdin>:c.txt'; want_a '<stdin>:a.jsonl'; } > want.stdintar
check stdintar

# single xz and bzip2 files, tar.xz, tar.bz2, and compressed members inside a tar
xz -c src/b.txt > b.txt.xz
bzip2 -c src/c.txt > c.bin # the name says nothing: content decides
"$SLUICE" read b.txt.xz c.bin > out.single
{ want_b b.txt.xz; want_c c.bin; } > want.single
check single
tar -C src -cJf t.tar.xz b.txt && tar -C src -cjf t.tar.bz2 c.txt
"$SLUICE" read t.tar.xz t.tar.bz2 > out.tarx
{ want_b t.tar.xz:b.txt; want_c t.tar.bz2:c.txt; } > want.tarx
check tarx
mkdir gz && gzip -c src/a.jsonl > gz/a.jsonl.gz && zstd -q -c src/b.txt > gz/b.txt.zst
tar -C gz -cf members.tar a.jsonl.gz b.txt.zst
"$SLUICE" read members.tar > out.members
{ want_a members.tar:a.jsonl.gz; want_b members.tar:b.txt.zst; } > want.members
check members

# --lines, --field, and a plain text file that starts with '{' is JSON Lines
printf 'first line\r\n\nsecond line\n' > lines.txt
"$SLUICE" read --lines lines.txt > out.lines
printf '{"id":"lines.txt:1","text":"first line"}\n{"id":"lines.txt:2","text":"second line"}\n' > want.lines
check lines
printf '{"id":"x","body":"the text","text":"not this"}\n' > f.jsonl
"$SLUICE" read --field body f.jsonl > out.field
printf '{"id":"x","text":"the text"}\n' > want.field
check field

# the output of sluice read is JSON Lines that sluice read reproduces exactly
"$SLUICE" read out.tarzst > out.again
diff out.tarzst out.again || fail "read is not idempotent on its own output"

# an archive member order and every member: a tar of 50 files
mkdir many && for i in $(seq 1 50); do printf 'text number %d\n' "$i" > "many/f$i.txt"; done
tar -C many -cf - $(cd many && ls | sort -V) | zstd -q > many.tar.zst
"$SLUICE" read many.tar.zst > out.many
for i in $(seq 1 50); do printf '{"id":"many.tar.zst:f%d.txt:1","text":"text number %d\\n"}\n' "$i" "$i"; done > want.many
check many

# the output does not depend on the thread count (parallel parsing and
# formatting hand documents out in input order): 12000 lines, every 5th
# malformed and skipped, generated ids counting only documents
seq 1 12000 | awk '{ if ($1 % 5 == 0) print "{\"text\":" $1 ","; else if ($1 % 2) print "{\"text\":\"doc " $1 "\",\"n\":" $1 "}"; else print "{\"id\":" $1 ",\"text\":\"doc " $1 "\"}" }' > par.jsonl
"$SLUICE" read -q -@ 1 --on-error skip par.jsonl > out.par1
awk '$1 % 5 { n++; if ($1 % 2) printf "{\"id\":\"par.jsonl:%d\",\"text\":\"doc %d\",\"n\":%d}\n", n, $1, $1; else printf "{\"id\":%d,\"text\":\"doc %d\"}\n", $1, $1 }' <(seq 1 12000) > want.par1
check par1
for th in 2 3 8; do "$SLUICE" read -q -@ $th --on-error skip par.jsonl | cmp - out.par1 || fail "-@ $th differs from -@ 1"; done

# cpio (newc, written here by hand: the header is ASCII) and ar archives; a
# text file that starts like a cpio header (a date) stays text
cpio_entry() { # NAME FILE: one newc entry, padded to 4 bytes
  local size namesize pad
  size=$(stat -c %s "$2" 2>/dev/null || echo 0); namesize=$(( ${#1} + 1 ))
  printf '070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X' 1 $((0100644)) 0 0 1 0 "$size" 0 0 0 0 "$namesize" 0
  printf '%s\0' "$1"; pad=$(( (4 - (110 + namesize) % 4) % 4 )); head -c $pad /dev/zero
  [ "$size" -gt 0 ] && cat "$2"; head -c $(( (4 - size % 4) % 4 )) /dev/zero
}
{ cpio_entry b.txt src/b.txt; cpio_entry TRAILER!!! /dev/null; } > t.cpio
"$SLUICE" read t.cpio > out.cpio
want_b t.cpio:b.txt > want.cpio
check cpio
if command -v ar > /dev/null; then
  cp src/c.txt c.o && ar rc t.a c.o
  "$SLUICE" read t.a > out.ar
  want_c t.a:c.o > want.ar
  check ar
fi
printf '070701 first of July\n070702 second\n' > dates.txt
"$SLUICE" read --lines dates.txt > out.dates
printf '{"id":"dates.txt:1","text":"070701 first of July"}\n{"id":"dates.txt:2","text":"070702 second"}\n' > want.dates
check dates

# --progress reports the documents read on stderr; --quiet silences it
"$SLUICE" read --progress many.tar.zst 2> err > /dev/null
tr '\r' '\n' < err | grep -q '^read: 50 docs' || fail "no progress line: $(cat err)"
"$SLUICE" read --progress -q many.tar.zst 2> err > /dev/null
[ ! -s err ] || fail "--quiet printed: $(cat err)"

# zip from stdin (streamed, no central directory) gives the same documents
"$SLUICE" read < texts.zip > out.zipstdin
{ want_b '<stdin>:b.txt'; want_c '<stdin>:sub/c.txt'; } > want.zipstdin
check zipstdin

# 7z (a checked-in fixture: no 7z tool here) needs a seekable file; from a
# pipe it is a clear error
"$SLUICE" read "$DATA/read/docs.7z" > out.7z
cat > want.7z <<J
{"id":"z1","text":"from a 7z archive"}
{"id":"$DATA/read/docs.7z:a.jsonl:2","text":"second line"}
{"id":"$DATA/read/docs.7z:b.txt:1","text":"seven zip text\n"}
J
check 7z
expect_fail 1 '^sluice: read: <stdin>: a 7z archive can only be read from a regular, uncompressed file' -- \
  sh -c "cat '$DATA/read/docs.7z' | '$SLUICE' read -o out.7zpipe"
no_file out.7zpipe

# -o naming a FIFO (or a device such as /dev/null) writes into it: the atomic
# rename must not replace it with a regular file
mkfifo fifo
timeout 20 cat fifo > fifo.out & reader=$!
"$SLUICE" read src/b.txt -o fifo
wait $reader || fail "nothing read from the FIFO"
[ -p fifo ] || fail "the FIFO was replaced by a regular file"
want_b src/b.txt | diff - fifo.out || fail "FIFO output differs"

# a hard link and a symbolic link in a tar carry no data of their own: one
# document, no "empty" warning
mkdir links && printf 'linked content\n' > links/a.txt && ln links/a.txt links/b.txt && ln -s a.txt links/c.txt
tar -C links -cf links.tar a.txt b.txt c.txt
"$SLUICE" read links.tar 2> err > out.links
printf '{"id":"links.tar:a.txt:1","text":"linked content\\n"}\n' > want.links
check links
[ ! -s err ] || fail "links: unexpected stderr: $(cat err)"

# macOS metadata (AppleDouble "__MACOSX/._name" members, recognised by their
# magic 00 05 16 07) is skipped instead of stopping the read as binary data
mkdir -p mac/__MACOSX && printf 'mac text\n' > mac/a.txt
{ printf '\0\5\26\7\0\2\0\0Mac OS X        '; head -c 60 /dev/zero; } > mac/__MACOSX/._a.txt
(cd mac && zip -q -r ../mac.zip a.txt __MACOSX)
"$SLUICE" read mac.zip > out.mac
printf '{"id":"mac.zip:a.txt:1","text":"mac text\\n"}\n' > want.mac
check mac

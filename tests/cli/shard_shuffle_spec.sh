# The shuffle as docs/shards.md and docs/formats.md ("Random draws") specify
# it, re-implemented here in Python from that text: the rows of a shuffled
# shard directory are the rows of the unshuffled one in the permutation the
# description gives, for each split, seed and window size.
. "$SRC/tests/cli/lib.sh"
PY=""
for p in /usr/bin/python3 python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || fail "python3 with numpy is required (apt-get install python3-numpy, see scripts/install-deps)"

# ids are the file names as given: relative, so the val split (a hash of the
# id) does not depend on where the repository is checked out
(cd "$SRC/examples/data/text" && "$SLUICE" tokenize bpe --tokenizer "$DATA/bpe/neox-tokenizer.json" --append-eos *.txt -o "$T/in.tok")
"$SLUICE" shard "$T/in.tok" --seq-len 64 --val-fraction 0.3 -o "$T/plain"
grep -q '"val": {"rows": [1-9]' "$T/plain/manifest.json" || fail "no val rows: the test needs both splits: $(grep '"val"' "$T/plain/manifest.json")"
for seed in 0 1 99 9007199254740993; do
  for win in 1 2 7 64 100000; do
    "$SLUICE" shard "$T/in.tok" --seq-len 64 --val-fraction 0.3 --shuffle --seed $seed --shuffle-window $win -o "$T/s-$seed-$win"
  done
done
"$PY" - "$T" <<'PY'
import glob, os, sys
import numpy as np

T = sys.argv[1]
M = (1 << 64) - 1

def splitmix64(st):
    st[0] = (st[0] + 0x9E3779B97F4A7C15) & M
    z = st[0]
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)

def below(st, n):
    if n <= 1:
        return 0
    m = splitmix64(st) * n
    if (m & M) < n:
        t = (1 << 64) % n
        while (m & M) < t:
            m = splitmix64(st) * n
    return m >> 64

def rows(d, split):
    files = sorted(glob.glob(os.path.join(d, split + "-*.tokens")))
    return np.concatenate([np.fromfile(f, dtype=np.uint16) for f in files]).reshape(-1, 64)

checked = 0
for d in sorted(glob.glob(os.path.join(T, "s-*"))):
    _, seed, win = os.path.basename(d).split("-")
    seed, win = int(seed), int(win)
    for k, split in enumerate(("train", "val")):
        plain = rows(os.path.join(T, "plain"), split)
        st = [seed ^ ((0x5851F42D4C957F2D * (k + 1)) & M)]
        want = []
        for w0 in range(0, len(plain), win):
            n = min(win, len(plain) - w0)
            order = list(range(n))
            for i in range(n, 1, -1):
                j = below(st, i)
                order[i - 1], order[j] = order[j], order[i - 1]
            want += [w0 + o for o in order]
        got = rows(d, split)
        if not np.array_equal(got, plain[want]):
            sys.exit("%s %s: rows are not the specified permutation" % (d, split))
        if win > 1 and len(plain) > 2 and np.array_equal(got, plain):
            sys.exit("%s %s: not shuffled" % (d, split))
        checked += 1
assert checked == 4 * 5 * 2, checked
print("shuffle spec: %d split directories match" % checked)
PY

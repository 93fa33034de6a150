#!/usr/bin/env python3
"""Randomized differential test of `sluice read` on JSON arrays of objects (a
developer tool; not run by `make test`; the standard library only).

    python3 tests/data/read/diff_json_array.py --seed 1 --n 300 --sluice build/sluice

Each case writes a random list of random objects with json.dumps (random
indent, separators, ensure_ascii; the text and other strings full of
brackets, braces, commas, quotes, backslashes, escapes and non-ASCII, short
and long, so that they fall at every offset of the reader's 16-byte scan), with
random white space around the array and its elements, a BOM or not, CRLF or
not. The evidence: Python's json.loads reads the file back as that list, and
`sluice read` of the file must print exactly what `sluice read` prints for
the same objects written one per line (json.dumps(obj)), which
tests/data/read/diff_jsonl.py checks against Python's json module; ids are
compared after the file name. Some cases run with -@ 2, from standard input,
or with --part R/N (whose parts must add up to the whole).

Some cases write no array but the objects pretty-printed one after another,
as `jq .` writes them (Python's JSONDecoder.raw_decode reads them back as the
list); these too must read as the JSON Lines of the objects, and cut short,
be refused.

Then each case is broken (a comma between elements dropped or doubled, a
trailing comma, bytes after the ']', the ']' or the file's end cut off);
where Python's json.loads refuses the broken file, sluice must exit 1 with
one line `sluice: read: FILE...` and leave no output file.
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

NASTY = ['[', ']', '{', '}', ',', '"', '\\', ':', ' ', '\n', '\t', '\r', 'é', '漢', '😀', '\u2028', 'a', 'b', '0', '\x01']


def rstr(rng):
    if rng.random() < 0.25:  # long, so that escapes and quotes fall at every offset of the 16-byte scan
        return ''.join(rng.choice(NASTY) if rng.random() < 0.1 else 'x' for _ in range(rng.randint(16, 300)))
    return ''.join(rng.choice(NASTY) for _ in range(rng.randint(0, 12)))


def rvalue(rng, depth):
    k = rng.randint(0, 7 if depth < 3 else 4)
    if k == 0:
        return rstr(rng)
    if k == 1:
        return rng.randint(-10**6, 10**6)
    if k == 2:
        return rng.choice([True, False, None])
    if k == 3:
        return rng.choice([0.5, -1.25e-3, 3e10])
    if k == 4:
        return rstr(rng)
    if k == 5:
        return [rvalue(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rstr(rng) or 'k': rvalue(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def robj(rng, i):
    o = {}
    if rng.random() < 0.5:
        o['id'] = rng.choice(['doc-%d' % i, i])
    o['text'] = rstr(rng) + ' ' + rstr(rng)
    for _ in range(rng.randint(0, 3)):
        o[rstr(rng) or 'f'] = rvalue(rng, 1)
    o.pop('', None)
    return o


def ws(rng):
    return ''.join(rng.choice([' ', '\n', '\t', '\r\n']) for _ in range(rng.randint(0, 3)))


def write_array(rng, objs):
    """The array's text, and the byte offsets of its top-level commas and ']'."""
    indent = rng.choice([None, None, 0, 1, 2, '\t'])
    ea = rng.random() < 0.5
    parts = [ws(rng), '[']
    commas = []
    for i, o in enumerate(objs):
        if i:
            parts.append(ws(rng))
            commas.append(len(''.join(parts).encode()))
            parts.append(',')
        parts.append(ws(rng))
        parts.append(json.dumps(o, indent=indent, ensure_ascii=ea,
                                separators=rng.choice([None, (',', ':'), (', ', ': ')])))
    parts.append(ws(rng))
    close = len(''.join(parts).encode())
    parts.append(']')
    parts.append(ws(rng))
    text = ''.join(parts)
    return text.encode(), commas, close


def run(cmd, stdin=None):
    with open(stdin, 'rb') if stdin else open(os.devnull, 'rb') as f:
        return subprocess.run(cmd, stdin=f, capture_output=True)


def norm(out, name):
    return re.sub(rb'"id":"' + re.escape(name.encode()) + rb':', b'"id":"X:', out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--n', type=int, default=200)
    ap.add_argument('--sluice', default='build/sluice')
    ap.add_argument('--keep', action='store_true')
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix='sluice-jarr-')
    bad_cases = good = broken = skipped = 0
    for case in range(a.n):
        rng = random.Random(a.seed * 1000003 + case)
        objs = [robj(rng, i) for i in range(rng.randint(1, 8))]
        data, commas, close = write_array(rng, objs)
        if rng.random() < 0.2:
            data = b'\xef\xbb\xbf' + data
            commas = [c + 3 for c in commas]
            close += 3
        assert json.loads(data.decode('utf-8-sig')) == objs
        arr = os.path.join(work, 'c%d.json' % case)
        lines = os.path.join(work, 'c%d.jsonl' % case)
        with open(arr, 'wb') as f:
            f.write(data)
        with open(lines, 'w', encoding='utf-8') as f:
            for o in objs:
                f.write(json.dumps(o) + '\n')
        if rng.random() < 0.3:  # no array: the objects pretty-printed one after another (jq without -c)
            indent = rng.choice([1, 2, 4, '\t'])
            text = ''.join(json.dumps(o, indent=indent, ensure_ascii=rng.random() < 0.5) + rng.choice(['\n', '\n\n', ' \n', '\r\n'])
                           for o in objs)
            data = text.encode()
            if rng.random() < 0.2:
                data = b'\xef\xbb\xbf' + data
            dec, at, seen = json.JSONDecoder(), 0, []  # Python reads it as the same objects, one after another
            t = data.decode('utf-8-sig')
            while at < len(t.rstrip()):
                v, at = dec.raw_decode(t, at)
                seen.append(v)
                while at < len(t) and t[at] in ' \t\r\n':
                    at += 1
            assert seen == objs
            commas, close = [], None
        opts = rng.choice([[], [], ['-@', '2'], ['--on-error', 'skip']])
        want = run([a.sluice, 'read', '-q'] + opts + [lines])
        if want.returncode != 0:
            skipped += 1  # (the JSON Lines path refuses these objects: diff_jsonl.py's business)
            continue
        want_out = norm(want.stdout, lines)
        how = rng.choice(['file', 'file', 'stdin', 'part'])
        if how == 'stdin':
            got = run([a.sluice, 'read', '-q'] + opts, stdin=arr)
            got_out = norm(got.stdout, '<stdin>')
        elif how == 'part':
            k = rng.randint(2, 4)
            outs, rc = [], 0
            for r in range(k):
                g = run([a.sluice, 'read', '-q', '--part', '%d/%d' % (r, k)] + opts + [arr])
                rc |= g.returncode
                outs.append(g.stdout)
            got = subprocess.CompletedProcess([], rc, b''.join(outs), b'')
            got_out = norm(got.stdout, arr)
        else:
            got = run([a.sluice, 'read', '-q'] + opts + [arr])
            got_out = norm(got.stdout, arr)
        if got.returncode != 0 or got_out != want_out:
            bad_cases += 1
            print('case %d (%s %s): differs: rc %d, %s' % (case, how, ' '.join(opts), got.returncode,
                                                          got.stderr.decode(errors='replace').strip()[:200]))
            continue
        good += 1
        # broken variants
        muts = []
        if close is None:  # (values one after another: a cut one is a bad line of JSON Lines)
            cut = data[:rng.randint(len(data) // 2, len(data) - 3)]
            muts = [('cut', cut)] if cut.rstrip()[-1:] != b'}' else []
            for what, m in muts:
                p = os.path.join(work, 'b%d.json' % case)
                with open(p, 'wb') as f:
                    f.write(m)
                r = run([a.sluice, 'read', '-q', p])
                if r.returncode != 1 or not r.stderr.decode(errors='replace').startswith('sluice: read: ' + p):
                    bad_cases += 1
                    print('case %d: a cut run of pretty-printed objects not refused: rc %d' % (case, r.returncode))
                else:
                    broken += 1
            continue
        if commas:
            c = rng.choice(commas)
            muts.append(('comma dropped', data[:c] + b' ' + data[c + 1:]))
            muts.append(('comma doubled', data[:c] + b',,' + data[c + 1:]))
        muts.append(('trailing comma', data[:close] + b',' + data[close:]))
        muts.append(('bytes after', data + rng.choice([b'x', b']', b'{}', b',{"text":"a"}'])))
        muts.append(('no ]', data[:close] + data[close + 1:]))
        muts.append(('cut', data[:rng.randint(close // 2, close)]))
        for what, m in muts:
            try:
                json.loads(m.decode('utf-8-sig'))
                continue  # still JSON (a cut that lands well): not a broken case
            except (ValueError, UnicodeDecodeError):
                pass
            p = os.path.join(work, 'b%d.json' % case)
            o = os.path.join(work, 'b%d.out' % case)
            with open(p, 'wb') as f:
                f.write(m)
            if os.path.exists(o):
                os.unlink(o)
            r = run([a.sluice, 'read', '-q', p, '-o', o])
            err = r.stderr.decode(errors='replace')
            if r.returncode != 1 or not err.startswith('sluice: read: ' + p) or err.count('\n') != 1 \
                    or os.path.exists(o):
                bad_cases += 1
                print('case %d: broken (%s) not refused as it should be: rc %d, %r' % (case, what, r.returncode,
                                                                                     err[:200]))
            else:
                broken += 1
    print('%d cases: %d arrays read as their JSON Lines, %d broken arrays refused, %d skipped, %d differ'
          % (a.n, good, broken, skipped, bad_cases))
    if not a.keep:
        shutil.rmtree(work)
    sys.exit(1 if bad_cases else 0)


if __name__ == '__main__':
    main()

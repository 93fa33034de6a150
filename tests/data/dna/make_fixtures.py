#!/usr/bin/env python3
"""Generates the expected values and bad-input files for the DNA tests (run once; outputs are committed).

Independent evidence for the C readers: this script decodes every test file with plain Python
(gzip module for gzip/BGZF, its own FASTA/FASTQ/.2bit decoders written from the format descriptions),
and writes, per record: file, index, name, description, length, CRC-32 of the sequence, first and last
40 bases. It also writes HyenaDNA-style BED interval expectations (FastaInterval.__call__ of
HazyResearch/hyena-dna src/dataloaders/datasets/hg38_dataset.py, re-implemented here) and bad inputs.

usage: python3 make_fixtures.py   (from any directory; stdlib only)
"""
import gzip, os, struct, zlib, random

HERE = os.path.dirname(os.path.abspath(__file__))
P = lambda *a: os.path.join(HERE, *a)


def opened(path):
    data = open(path, 'rb').read()
    if data[:2] == b'\x1f\x8b':
        data = gzip.decompress(data)  # handles multi-member gzip (BGZF)
    return data


def parse_name(header):
    # samtools rule: skip blanks after the marker, name = first word, description = rest after blanks
    s = header[1:].lstrip(' \t')
    i = 0
    while i < len(s) and s[i] not in ' \t':
        i += 1
    return s[:i], s[i:].lstrip(' \t')


def read_fasta(path):
    out = []
    for raw in opened(path).decode('latin-1').split('\n'):
        line = raw.rstrip('\r')
        if line.startswith('>'):
            out.append(list(parse_name(line)) + [[]])
        elif line.strip(' \t\r'):
            out[-1][2].append(line.replace(' ', '').replace('\t', '').replace('\r', ''))
    return [(n, d, ''.join(p)) for n, d, p in out]


def read_fastq(path):
    lines = [l.rstrip('\r') for l in opened(path).decode('latin-1').split('\n')]
    i, out = 0, []
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        assert lines[i].startswith('@'), (path, i)
        name, desc = parse_name(lines[i])
        i += 1
        seq = []
        while not lines[i].startswith('+'):
            seq.append(lines[i]); i += 1
        i += 1
        seq = ''.join(seq)
        q = 0
        while q < len(seq):
            q += len(lines[i]); i += 1
        assert q == len(seq), path
        out.append((name, desc, seq))
    return out


def read_2bit(path):
    b = open(path, 'rb').read()
    magic, ver, cnt, _ = struct.unpack('<IIII', b[:16])
    assert magic == 0x1A412743 and ver == 0
    off, out = 16, []
    for _ in range(cnt):
        n = b[off]; name = b[off + 1:off + 1 + n].decode('latin-1'); roff, = struct.unpack('<I', b[off + 1 + n:off + 5 + n])
        off += 5 + n
        size, nb = struct.unpack('<II', b[roff:roff + 8]); p = roff + 8
        ns = struct.unpack('<%dI' % nb, b[p:p + 4 * nb]); nz = struct.unpack('<%dI' % nb, b[p + 4 * nb:p + 8 * nb]); p += 8 * nb
        mb, = struct.unpack('<I', b[p:p + 4]); p += 4
        ms = struct.unpack('<%dI' % mb, b[p:p + 4 * mb]); mz = struct.unpack('<%dI' % mb, b[p + 4 * mb:p + 8 * mb]); p += 8 * mb + 4
        seq = []
        for i in range(size):
            byte = b[p + i // 4]
            seq.append('TCAG'[(byte >> (6 - 2 * (i % 4))) & 3])
        for s, z in zip(ns, nz):
            for i in range(s, s + z): seq[i] = 'N'
        for s, z in zip(ms, mz):  # per-base: lower-case what the mask covers, nothing else
            for i in range(s, s + z): seq[i] = seq[i].lower()
        out.append((name, '', ''.join(seq)))
    return out


FILES = [
    ('lambda_virus.fa', read_fasta), ('pysam_ex1.fa', read_fasta), ('htslib_ce.fa', read_fasta),
    ('htslib_ce.fa.gz', read_fasta), ('ce2_chrM.fa.gz', read_fasta), ('dm3_upstream2000_first100.fa', read_fasta),
    ('synthetic_softmasked_lambda.fa', read_fasta), ('synthetic_softmasked_lambda.fa.gz', read_fasta),
    ('htslib_faidx_edgecases.fa', read_fasta), ('bedtools_test_iupac.fa', read_fasta),
    ('bowtie2_reads_1_first2000.fq', read_fastq), ('htslib_multiline.fq', read_fastq),
    ('htslib_longline.fq', read_fastq), ('htslib_minimal.fq', read_fastq), ('pysam_faidx_empty_seq.fq', read_fastq),
    ('rtracklayer_test.2bit', read_2bit), ('rtracklayer_T_species.2bit', read_2bit),
    ('synthetic_softmasked_lambda.2bit', read_2bit),
]

with open(P('expected_records.tsv'), 'w') as f:
    f.write('# file\tindex\tname\tdescription\tlength\tcrc32\tfirst40\tlast40\n')
    for fn, reader in FILES:
        for i, (name, desc, seq) in enumerate(reader(P(fn))):
            f.write('\t'.join([fn, str(i), name, desc, str(len(seq)), '%08x' % zlib.crc32(seq.encode('latin-1')),
                               seq[:40] or '-', seq[-40:] or '-']) + '\n')

# The .2bit of the synthetic genome must equal its FASTA with IUPAC codes as N (faToTwoBit), case kept.
fa = read_fasta(P('synthetic_softmasked_lambda.fa'))
tb = read_2bit(P('synthetic_softmasked_lambda.2bit'))
for (n1, _, s1), (n2, _, s2) in zip(fa, tb):
    conv = ''.join(c if c in 'ACGTacgt' else ('n' if c.islower() else 'N') for c in s1)
    assert n1 == n2 and conv == s2, n1

# HyenaDNA FastaInterval windows on the synthetic genome (max_length 256), for a BED with a split column.
lens = {n: len(s) for n, _, s in fa}
seqs = {n: s for n, _, s in fa}
rng = random.Random(6)
rows = [('chrSynA', 0, 100, 'train'), ('chrSynA', 31500, 31537, 'valid'), ('chrSynB', 5000, 5300, 'train'),
        ('chrSynC', 2, 8, 'test'), ('chrSynB', 18400, 18513, 'train'), ('chrSynA', 990, 1246, 'train')]
for _ in range(10):
    c = rng.choice(['chrSynA', 'chrSynB'])
    a = rng.randrange(0, lens[c] - 1); b = min(lens[c], a + rng.randrange(1, 600))
    rows.append((c, a, b, rng.choice(['train', 'valid', 'test'])))
with open(P('synthetic_intervals.bed'), 'w') as f:
    for r in rows:
        f.write('%s\t%d\t%d\t%s\n' % r)


def hyena_interval(chrom, start, end, max_length):
    interval_length = end - start
    L = lens[chrom]
    if interval_length < max_length:
        extra = max_length - interval_length
        start -= extra // 2
        end += extra - extra // 2
    if start < 0: start = 0
    if end > L: end = L
    if interval_length > max_length: end = start + max_length
    return start, min(end, L)  # pyfaidx slicing stops at the chromosome end


with open(P('synthetic_intervals_hyena256.tsv'), 'w') as f:
    f.write('# chrom\tstart\tend\tsplit\tsequence (HyenaDNA FastaInterval, max_length=256)\n')
    for c, a, b, s in rows:
        x, y = hyena_interval(c, a, b, 256)
        f.write('%s\t%d\t%d\t%s\t%s\n' % (c, x, y, s, seqs[c][x:y]))

# BED window modes on made-up chromosome lengths (arithmetic only). caduceus: FastaInterval of
# kuleshov-group/caduceus src/dataloaders/datasets/hg38_dataset.py (end re-set to start + 2^20, piece
# i_shift, shift down past the end, up below 0); mamba: arXiv 2312.00752 E.3.1 (len/L pieces, or two
# windows anchored at the interval's start and end when it is shorter than L), moved inside the same way.
MAX = 2 ** 20


def caduceus_window(chrom_len, start, L, i_shift):
    start, end = start + i_shift * L, start + (i_shift + 1) * L
    if end > chrom_len:
        start = start - (end - chrom_len); end = chrom_len
    if start < 0:
        end = end - start; start = 0
    if end > chrom_len:
        start = chrom_len - L; end = chrom_len
    return max(start, 0), end


def mamba_windows(chrom_len, start, end, L):
    n = end - start
    anchors = [start + k * L for k in range(n // L)] if n >= L else [start, end - L]
    return [caduceus_window(chrom_len, a, L, 0) for a in anchors]


rng = random.Random(20)
with open(P('bed_window_modes.tsv'), 'w') as f:
    f.write('# mode\tchrom_len\tstart\tend\tL\twindows (start-end,...)\n')
    for _ in range(60):
        L = 2 ** rng.randrange(10, 19)
        chrom_len = rng.choice([rng.randrange(L // 2, 4 * L), rng.randrange(MAX, 4 * MAX), 3 * MAX + 17])
        a = rng.randrange(0, chrom_len)
        b = min(chrom_len, a + rng.choice([rng.randrange(1, L), 2 ** 17, rng.randrange(L, 5 * L)]))
        for mode in ('mamba', 'caduceus'):
            w = mamba_windows(chrom_len, a, b, L) if mode == 'mamba' else \
                [caduceus_window(chrom_len, a, L, k) for k in range(MAX // L)]
            f.write('%s\t%d\t%d\t%d\t%d\t%s\n' % (mode, chrom_len, a, b, L, ','.join('%d-%d' % x for x in w)))

# Bad inputs.
os.makedirs(P('bad'), exist_ok=True)
gz = open(P('ce2_chrM.fa.gz'), 'rb').read()
open(P('bad', 'truncated_gzip.fa.gz'), 'wb').write(gz[:len(gz) // 2])
bgzf = open(P('htslib_ce.fa.gz'), 'rb').read()
open(P('bad', 'truncated_bgzf.fa.gz'), 'wb').write(bgzf[:len(bgzf) * 2 // 3])
open(P('bad', 'no_header.fa'), 'wb').write(b'ACGTACGT\n>chr1\nACGT\n')
open(P('bad', 'binary_in_sequence.fa'), 'wb').write(b'>chr1\nACGT\nAC\x00GT\n')
open(P('bad', 'truncated_quality.fq'), 'wb').write(b'@r1\nACGTACGT\n+\nIIII\n')
open(P('bad', 'long_quality.fq'), 'wb').write(b'@r1\nACGT\n+\nIIIIII\n@r2\nAC\n+\nII\n')
tb = bytearray(open(P('rtracklayer_test.2bit'), 'rb').read())
n = tb[16]
lying = bytearray(tb); lying[17 + n:21 + n] = struct.pack('<I', 1 << 30)
open(P('bad', 'lying_offset.2bit'), 'wb').write(lying)
roff, = struct.unpack('<I', tb[17 + n:21 + n])
blocks = bytearray(tb); blocks[roff + 4:roff + 8] = struct.pack('<I', 0x7fffffff)
open(P('bad', 'huge_nblock_count.2bit'), 'wb').write(blocks)
size = bytearray(tb); size[roff:roff + 4] = struct.pack('<I', 1000000)
open(P('bad', 'dna_size_past_end.2bit'), 'wb').write(size)
open(P('bad', 'truncated_header.2bit'), 'wb').write(bytes(tb[:10]))
open(P('bad', 'bad_interval.bed'), 'wb').write(b'chrSynA\t100\t50\ttrain\n')
print('ok')

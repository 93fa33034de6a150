#!/usr/bin/env python3
"""Expected values produced by EXECUTING the reference implementations (run once; outputs committed).

Unlike make_fixtures.py (our own re-implementations), this script imports the reference code itself:
  - HyenaDNA's CharacterTokenizer (hazyresearch/hyena-dna src/dataloaders/datasets/hg38_char_tokenizer.py)
    under transformers 4.26.1 (the version hyena-dna's requirements.txt pins), called exactly as
    HG38Dataset.__getitem__ (hg38_dataset.py, commit d553021) and SpeciesDataset.__getitem__ call it;
  - HyenaDNA's and Caduceus' FastaInterval classes (hg38_dataset.py of each) on our synthetic genome,
    reading it with pyfaidx as they do;
  - pyfaidx itself for random regions of every indexed FASTA test file.
The torch/pandas/polars imports of the dataset modules are stubbed (the classes used never touch them);
the two torch one-liners of __getitem__ (replace N by PAD, data/target shift) are applied on lists here.

  - DNABERT (jerryji1993/DNABERT b6da04e): its vocab.txt files for k = 3..6, read as its
    tokenization_dna.load_vocab does (id = line number, unknown -> [UNK]), and its seq2kmer
    (motif/motif_utils.py) imported and run.

usage: python3 make_reference_vectors.py HYENA_DNA_CHECKOUT CADUCEUS_CHECKOUT DNABERT_CHECKOUT
  (a venv with transformers==4.26.1 and pyfaidx; nothing from the checkouts is committed)
outputs: hyenadna_executed_vectors.tsv, reference_intervals.tsv, pyfaidx_regions.tsv,
         dnabert_executed_vectors.tsv
"""
import os, random, sys, types, zlib

HERE = os.path.dirname(os.path.abspath(__file__))
P = lambda *a: os.path.join(HERE, *a)
hyena, caduceus, dnabert = sys.argv[1], sys.argv[2], sys.argv[3]

import importlib.util


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


sys.path.insert(0, os.path.join(hyena, 'src/dataloaders/datasets'))
tokmod = load(os.path.join(hyena, 'src/dataloaders/datasets/hg38_char_tokenizer.py'), 'hg38_char_tokenizer')
# after transformers is imported (it probes for torch): stub what the dataset modules import at the
# top but the classes used never touch
for name in ('torch', 'polars', 'pandas'):
    sys.modules[name] = types.ModuleType(name)
sys.modules['torch'].utils = types.SimpleNamespace(data=types.SimpleNamespace(Dataset=object))
hy = load(os.path.join(hyena, 'src/dataloaders/datasets/hg38_dataset.py'), 'hyena_hg38')
# Caduceus imports its own helpers by package path: provide them
sys.modules['src'] = types.ModuleType('src')
sys.modules['src.dataloaders'] = types.ModuleType('src.dataloaders')
sys.modules['src.dataloaders.utils'] = types.ModuleType('src.dataloaders.utils')
sys.modules['src.dataloaders.utils.mlm'] = types.SimpleNamespace(mlm_getitem=None)
sys.modules['src.dataloaders.utils.rc'] = load(os.path.join(caduceus, 'src/dataloaders/utils/rc.py'), 'rc')
cad = load(os.path.join(caduceus, 'src/dataloaders/datasets/hg38_dataset.py'), 'caduceus_hg38')

# ---- 1. tokenizer vectors ---------------------------------------------------------------------------
rng = random.Random(61)
alphabet = 'ACGTACGTACGTNacgtnRYKM.'
rows = []
for k in range(300):
    n = rng.choice([0, 1, 2, 5, rng.randrange(0, 40), rng.randrange(0, 80)])
    seq = ''.join(rng.choice(alphabet) for _ in range(n))
    L = rng.choice([2, 3, 8, 16, rng.randrange(2, 64)])
    add_eos, replace_n = rng.random() < 0.5, rng.random() < 0.5
    tok = tokmod.CharacterTokenizer(characters=['A', 'C', 'G', 'T', 'N'], model_max_length=L + 2)
    # HG38Dataset.__getitem__ (hyena-dna d553021), tokenizer_name == 'char'
    ids = tok(seq, add_special_tokens=True if add_eos else False, padding='max_length', max_length=L,
              truncation=True)['input_ids']
    if replace_n:
        ids = [tok.pad_token_id if x == tok._vocab_str_to_int['N'] else x for x in ids]
    rows.append(('hg38', seq, L, int(add_eos), int(replace_n), ids))
    # SpeciesDataset.__getitem__: seq already upper and rjust(L, 'N'); no padding/truncation; [SEP] appended
    s = seq.upper()[:L].rjust(L, 'N')
    ids = tok(s, add_special_tokens=False)['input_ids'] + ([tok.sep_token_id] if add_eos else [])
    rows.append(('species', s, L, int(add_eos), 0, ids))
with open(P('hyenadna_executed_vectors.tsv'), 'w') as f:
    f.write('# path\tinput\tmax_length\tadd_eos\treplace_N\tids (HyenaDNA CharacterTokenizer, transformers 4.26.1)\n')
    for p, s, L, e, r, ids in rows:
        f.write('%s\t%s\t%d\t%d\t%d\t%s\n' % (p, s or '-', L, e, r, ' '.join(map(str, ids))))

# ---- 2. FastaInterval of HyenaDNA and Caduceus on the synthetic genome ------------------------------
fa = P('synthetic_softmasked_lambda.fa')
hfi = hy.FastaInterval(fasta_file=fa)
cfi = cad.FastaInterval(fasta_file=fa)
bed = [l.split() for l in open(P('synthetic_intervals.bed'))]
with open(P('reference_intervals.tsv'), 'w') as f:
    f.write('# mode\tbed_line\tmax_length\tpiece\tlength\tcrc32 of the sequence FastaInterval returns (pyfaidx)\n')
    for i, (c, a, b, _) in enumerate(bed, 1):
        for L in (256, 1000):
            s = hfi(c, int(a), int(b), max_length=L)
            f.write('hyena\t%d\t%d\t0\t%d\t%08x\n' % (i, L, len(s), zlib.crc32(s.encode())))
        L = 4096
        if cfi.chr_lens[c] < L:
            continue  # Caduceus fails on a chromosome shorter than L (pyfaidx FetchError); sluice takes it whole
        for shift in range(cad.MAX_ALLOWED_LENGTH // L):
            # HG38Dataset sets end = start + 2^20 before calling FastaInterval
            s = cfi(c, int(a), int(a) + cad.MAX_ALLOWED_LENGTH, max_length=L, i_shift=shift)
            f.write('caduceus\t%d\t%d\t%d\t%d\t%08x\n' % (i, L, shift, len(s), zlib.crc32(s.encode())))

# ---- 3. pyfaidx regions ---------------------------------------------------------------------------------
from pyfaidx import Fasta
rng = random.Random(62)
with open(P('pyfaidx_regions.tsv'), 'w') as f:
    f.write('# file\trecord\tstart\tend\tcrc32 of str(Fasta(file)[record][start:end]) (pyfaidx)\n')
    for fn in ('lambda_virus.fa', 'pysam_ex1.fa', 'htslib_ce.fa', 'synthetic_softmasked_lambda.fa'):
        fx = Fasta(P(fn))
        for _ in range(40):
            name = rng.choice(list(fx.keys()))
            n = len(fx[name])
            a = rng.randrange(0, n)
            b = min(n, a + rng.choice([1, 10, 60, 61, 500, 5000]))
            s = str(fx[name][a:b])
            f.write('%s\t%s\t%d\t%d\t%08x\n' % (fn, name, a, b, zlib.crc32(s.encode())))

# ---- 4. DNABERT k-mers --------------------------------------------------------------------------------
motif = load(os.path.join(dnabert, 'motif/motif_utils.py'), 'motif_utils')
rng = random.Random(63)
with open(P('dnabert_executed_vectors.tsv'), 'w') as f:
    f.write('# k\tinput\tids (DNABERT vocab.txt line numbers of seq2kmer(input, k); [UNK] when absent)'
            '\tor: vocab\tcount\tcrc32 of the vocab lines joined by newlines\n')
    for k in (3, 4, 5, 6):
        lines = open(os.path.join(dnabert, 'src/transformers/dnabert-config/bert-config-%d/vocab.txt' % k),
                     encoding='utf-8').readlines()
        vocab = {tok.rstrip('\n'): i for i, tok in enumerate(lines)}  # tokenization_dna.load_vocab
        f.write('%d\tvocab\t%d\t%08x\n' % (k, len(vocab), zlib.crc32('\n'.join(vocab).encode())))
        for _ in range(25):
            n = rng.randrange(k, 60)
            seq = ''.join(rng.choice('ACGTACGTACGTN') for _ in range(n))
            ids = [vocab.get(km, vocab['[UNK]']) for km in motif.seq2kmer(seq, k).split()]
            f.write('%d\t%s\t%s\n' % (k, seq, ' '.join(map(str, ids))))
print('ok')

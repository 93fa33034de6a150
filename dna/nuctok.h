/* Nucleotide tokenizers.
 *
 * Character level (default): HyenaDNA's CharacterTokenizer vocabulary
 * (hazyresearch/hyena-dna src/dataloaders/datasets/hg38_char_tokenizer.py,
 * built with characters A C G T N everywhere in its loaders):
 *   [CLS]=0 [SEP]=1 [BOS]=2 [MASK]=3 [PAD]=4 [RESERVED]=5 [UNK]=6
 *   A=7 C=8 G=9 T=10 N=11                       vocab_size = 12
 * Any other character is [UNK]. HyenaDNA does not fold case; the `case`
 * option chooses (see dna_case).
 *
 * k-mer level (DNABERT, jerryji1993/DNABERT vocab.txt for k = 3..6):
 *   [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4, then the 4^k k-mers in
 *   lexicographic order over A<T<C<G: id = 5 + sum d_i 4^(k-1-i),
 *   A=0 T=1 C=2 G=3; a k-mer with any other character is [UNK].
 *
 * Special tokens and padding follow Hugging Face semantics as HyenaDNA uses
 * them: with max_length L and add_eos, the first L-1 tokens are kept and
 * [SEP] appended; shorter results are padded with [PAD] up to L on the left
 * (HyenaDNA's default padding side) or right. */
#ifndef SLUICE_DNA_NUCTOK_H
#define SLUICE_DNA_NUCTOK_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    DNA_ID_CLS = 0,
    DNA_ID_SEP = 1,
    DNA_ID_BOS = 2,
    DNA_ID_MASK = 3,
    DNA_ID_PAD = 4,
    DNA_ID_RESERVED = 5,
    DNA_ID_UNK = 6,
    DNA_ID_A = 7,
    DNA_ID_C = 8,
    DNA_ID_G = 9,
    DNA_ID_T = 10,
    DNA_ID_N = 11,
    DNA_CHAR_VOCAB = 12,
};
enum { DNABERT_PAD = 0, DNABERT_UNK = 1, DNABERT_CLS = 2, DNABERT_SEP = 3, DNABERT_MASK = 4, DNABERT_FIRST = 5 };
#define DNA_MAX_KMER 12

/* Soft-masked (lower-case) bases:
 *  UPPER: upper-case them (what pyfaidx sequence_always_upper does in most
 *         HyenaDNA loaders);
 *  KEEP:  upper-case the tokens but keep the mask as a separate channel
 *         (runs of masked token positions, dna_tokens.mask);
 *  UNK:   no folding: lower case becomes [UNK], exactly as HyenaDNA's hg38
 *         pretraining loader (hg38_dataset.py) tokenizes a soft-masked FASTA. */
enum { DNA_CASE_UPPER = 0, DNA_CASE_KEEP = 1, DNA_CASE_UNK = 2 };
/* N (the id of 'N'; with k-mers: any k-mer holding a non-ACGT base):
 *  TOKEN: keep it (N=11; k-mers: [UNK]); PAD: replace by [PAD] (HyenaDNA
 *  replace_N_token, Caduceus); DROP: leave it out. */
enum { DNA_N_TOKEN = 0, DNA_N_PAD = 1, DNA_N_DROP = 2 };

typedef struct dna_tok_opts {
    int case_mode;       /* DNA_CASE_* */
    int n_mode;          /* DNA_N_* */
    int add_eos;         /* append [SEP] */
    int pad_left;        /* padding side when max_length > 0 (1 = left, HyenaDNA's default) */
    uint64_t max_length; /* 0 = no truncation/padding */
    int kmer;            /* 0 = characters, else k (1..DNA_MAX_KMER) */
    int kmer_stride;     /* k-mer step, default 1 */
} dna_tok_opts;

void dna_tok_opts_default(dna_tok_opts *o);
uint32_t dna_tok_vocab_size(const dna_tok_opts *o);
int64_t dna_tok_pad_id(const dna_tok_opts *o);
int64_t dna_tok_eos_id(const dna_tok_opts *o);
int64_t dna_tok_unk_id(const dna_tok_opts *o);
/* "hyenadna-char" or "dnabert-6mer". */
void dna_tok_name(const dna_tok_opts *o, char *out, size_t n);
/* The header `extra` object: the vocabulary (so a decoder can map ids back;
 * k-mer vocabularies only up to k = 8, beyond that the rule), and the options. */
void dna_tok_extra_json(const dna_tok_opts *o, sl_buf *out);

/* Token ids plus, with DNA_CASE_KEEP, one mask byte per token (1 = soft-masked).
 * The ids are in `ids` (dna_tok_encode) or, one byte each, in `bytes`
 * (dna_tok_encode_bytes). */
typedef struct dna_tokens {
    uint32_t *ids; /* malloc'd: may be handed to an sl_doc (see dna/emit.c) */
    uint8_t *bytes;
    uint8_t *mask;
    size_t n, cap, bytes_cap, mask_cap;
} dna_tokens;
void dna_tokens_free(dna_tokens *t);

/* Tokenizes seq[0..n) (replacing t's content), then applies add_eos,
 * truncation and padding. */
void dna_tok_encode(const dna_tok_opts *o, const char *seq, size_t n, dna_tokens *t);
/* The same for the character vocabulary (o->kmer == 0) into t->bytes: every
 * id is below DNA_CHAR_VOCAB, so a byte holds it and a token stream of that
 * vocabulary (width 1) takes the bytes as they are. dna_tok_encode is this
 * followed by widening, so both give the same ids. */
void dna_tok_encode_bytes(const dna_tok_opts *o, const char *seq, size_t n, dna_tokens *t);
/* Appends the soft-mask channel as JSON runs of token positions
 * [[start,end),...] (0-based, end exclusive); "[]" when nothing is masked. */
void dna_tokens_mask_json(const dna_tokens *t, sl_buf *out);
/* Maps ids back to text: with characters, bases as letters and specials as
 * "[NAME]"; with k-mers, each token as its k letters (specials as "[NAME]")
 * separated by spaces, as DNABERT writes them. Returns -1 for an id out of
 * range. */
int dna_tok_decode(const dna_tok_opts *o, const uint32_t *ids, size_t n, sl_buf *out);

/* Reverse complement in place: A<->T, C<->G in both cases; every other
 * character (N, IUPAC codes, '.') unchanged, as HyenaDNA's rc_aug does. */
void dna_revcomp(char *seq, size_t n);

#ifdef __cplusplus
}
#endif

#endif

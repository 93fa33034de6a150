/* Internals of the BPE tokenizer shared by its .c files (not a public
 * interface). */
#ifndef SLUICE_TOKENIZE_BPE_INTERNAL_H
#define SLUICE_TOKENIZE_BPE_INTERNAL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdint.h>
#include <string.h>

#include "base/utf8.h"
#include "tokenize/added.h"
#include "tokenize/bpe.h"
#include "tokenize/decoders/decoders.h"
#include "tokenize/normalizers/normalize.h"
#include "tokenize/pre_tokenizers/pretokenizer.h"
#include "tokenize/processors/postproc.h"
#include "tokenize/scache.h"

/* Pair -> merge table (open addressing). */
typedef struct sl_merge_slot {
    uint64_t key; /* (left id << 32) | right id; UINT64_MAX = empty */
    uint32_t rank, id;
} sl_merge_slot;

struct sl_bpe {
    char *name;
    char fingerprint[72];
    uint32_t vocab_size;
    /* the short-piece table the threads share (scache.h); NULL where the
     * model is only a merge table (tok_spbpe.c) */
    sl_scache_shared *cache;
    /* id -> bytes for decoding; tok_len[i] == UINT32_MAX when id i is unused */
    uint32_t *tok_off, *tok_len;
    char *pool;
    size_t pool_len, pool_cap;
    /* id -> token text as written in the vocab (byte-level form), for lookups */
    uint32_t *txt_off;
    char *txt_pool;
    int32_t byte_id[256]; /* id of each single byte, -1 when none */
    sl_merge_slot *merges;
    uint64_t merge_mask;
    size_t n_merges;
    /* A Bloom filter of the merge table's pairs (three bits a pair, about
     * ten bits a pair in all: 64 KiB for GPT-2): most lookups of a pair that
     * does not merge end here, in cache, instead of at a table slot. */
    uint64_t *merge_bloom;
    uint64_t merge_bloom_mask;
    /* The merges of two tokens with ids below SL_GRID_IDS, dense: the rank
     * of pair (l, r) at merge_grid[l * SL_GRID_IDS + r] (UINT32_MAX: none).
     * Its id: the rank + merge_grid_off while every merge's id is its rank
     * plus the same offset (GPT-2's, GPT-NeoX's: one merge per token, in id
     * order), else merge_rank_id[rank] (merge_grid_ranked; Llama-3's
     * several merges per token, SentencePiece's). NULL when a rank is past
     * the merges' count. Pairs of bytes and of the first merges are most
     * lookups of a fresh piece (71 % on GPT-2); here they cost one load, not
     * the filter's three and a slot. */
    uint32_t *merge_grid, *merge_rank_id;
    size_t merge_rank_cap;
    int64_t merge_grid_off;
    int merge_grid_ranked;
    /* tiktoken's rule instead of a merge table (lazy_merges = 1): the pair
     * (l, r) merges into the token whose bytes are bytes(l) + bytes(r) (the
     * words table), at rank id - rank0; none when longer than max_len, the
     * longest token. Found on demand, remembered in sl_bpe_state.memo. */
    int lazy_merges;
    uint32_t rank0, max_len;
    sl_normalizer norm;
    int add_prefix_space, use_regex;
    /* the pattern of the regex split (use_regex): SL_PRETOK_GPT2 (ByteLevel's
     * own), or that of a Split step before a ByteLevel without regex:
     * SL_PRETOK_LLAMA3, SL_PRETOK_QWEN2 */
    int pretok;
    size_t (*scanner)(const uint8_t *p, size_t n, size_t pos);
    /* the same scanner over many pieces: the ends of up to cap pieces from
     * pos (pos < n), their count returned; NULL: call scanner per piece */
    size_t (*scan_many)(const uint8_t *p, size_t n, size_t pos, size_t *ends, size_t cap);
    /* ignore_merges: a piece that is a model vocabulary entry is that id.
     * Entries by their bytes (open addressing by XXH3, sl_word_slot: the
     * first 11 bytes and the length in the slot, so most lookups read one
     * line and none of the pool). */
    int ignore_merges;
    struct sl_word_slot *words;
    uint64_t words_mask;
    /* A Bloom filter of the words table's hashes (three bits an entry, about
     * ten bits an entry in all): most lookups of bytes that are no entry
     * (pairs that do not merge, pieces that are no token) end here, in a
     * table that stays in cache, instead of at a words-table slot. */
    uint64_t *bloom;
    uint64_t bloom_mask;
    sl_added *added;
    size_t n_added;
    sl_trie raw_trie, norm_trie; /* added tokens matched before / after normalization */
    pcre2_code *re;
    int jit;
    int scan; /* pre-tokenize with sl_pretok_scan instead of PCRE2 */
    /* text the pattern does not match is dropped (tiktoken with a pattern
     * of the user's), not made a piece of its own */
    int drop_gaps;
    /* The general pre-tokenizer (general = 1), for a Sequence that is none of
     * the fast forms above: the steps before its ByteLevel step on the
     * normalized text, the ByteLevel step (add_prefix_space, and with
     * bl_regex the GPT-2 split by sl_pretok_scan), then the steps after it on
     * the byte-level text (u2b maps its characters back to bytes). */
    int general, bl_regex;
    sl_pretokenizer pre_before, pre_after;
    uint32_t b2u[256];
    int16_t u2b[512];
    /* continuing_subword_prefix / end_of_word_suffix (affix = 1): the id of
     * each byte's initial symbol when it is not the first of its piece
     * (prefixed), the last and also the first (suffixed), the last and not
     * the first (both); -1 when the vocab has none (dropped, as HF does
     * without unk). byte_id is the first-and-not-last form. */
    int affix;
    size_t prefix_len;
    /* unk_token: the id a byte without an initial symbol becomes (-1: none,
     * the byte is dropped); fuse_unk: a run of them is one */
    int32_t unk_id;
    int fuse_unk;
    int32_t byte_id_cont[256], byte_id_end[256], byte_id_both[256];
    /* a decoder chain other than ByteLevel (dec_chain = 1): each id's token
     * string as HF's decoder sees it (the vocab text, or an added token's
     * content in its normalized form) */
    int dec_chain;
    sl_decoder dec;
    uint32_t *dec_off, *dec_len;
    char *dec_pool;
    /* the tokenizer.json's post-processor (post_known = 1; a vocab.json +
     * merges.txt pair has none), handed to the tokenizer for
     * --add-special-tokens (tok_bpe.c), so the file is parsed once */
    int post_known;
    sl_postproc post;
};

/* The piece cache of one thread (bpe_merge.c): pieces of at most 16 bytes
 * whose ids are at most SL_PCACHE_IDS, one cache line each, in sets of two
 * side by side (the entry hit or filled last first: the lookup reads the
 * first, a miss of it the second), in front of the shared stretch cache
 * (no atomics, no key bytes to compare one by one: the key is two words).
 * Two ways against one: 30 % fewer misses on the bench corpus's GPT-2
 * pieces (143k against 209k of 10.7M; four ways 128k), and pre-tokenizing
 * and looking up 24 MB of it took 0.4-4.3 % less time (o200k least,
 * GPT-NeoX most; four ways were slower). 2^16 entries (4 MiB a thread):
 * with the sets of two, pre-tokenizing, looking up and encoding the pieces
 * of the 50 MB bench corpus in one pass took 0.3-4 % less time than with
 * 2^15 (GPT-2, cl100k, o200k, GPT-NeoX; paired in one process), 7-12 % on
 * 24 MB of it twice, where pieces recur as in a larger corpus (2^17 no
 * better than 2^16; docs/performance.md). */
#define SL_PCACHE_BITS 16
#define SL_PCACHE_IDS 11
typedef struct sl_pcache_entry {
    uint64_t a, b;
    uint32_t meta; /* piece length | id count << 8; 0: empty */
    uint32_t ids[SL_PCACHE_IDS];
} sl_pcache_entry;
/* The pieces of the piece cache's kind with more ids (12 to 16: runs of
 * spaces, of symbols, of multi-byte characters in a vocabulary without
 * tokens for them), in a smaller table beside it, two cache lines each.
 * A piece of at most 16 bytes has at most 16 ids (one per byte at most). */
#define SL_PWIDE_BITS 10
#define SL_PWIDE_IDS 16
typedef struct sl_pwide_entry {
    uint64_t a, b;
    uint32_t meta;
    uint32_t ids[SL_PWIDE_IDS];
    uint32_t pad[11];
} sl_pwide_entry;

struct sl_bpe_state {
    const sl_bpe *bpe;
    sl_pcache_entry *pc; /* 1 << SL_PCACHE_BITS entries, made at first use */
    sl_pwide_entry *pw;  /* 1 << SL_PWIDE_BITS entries, made with pc */
    pcre2_match_data *md;
    sl_scache cache; /* piece -> ids (short pieces in the shared b->cache) */
    uint64_t work;   /* merge lookups + heap operations (tests check it stays n log n) */
    int mode;        /* sl_special_mode of the current encode call */
    /* every added token of b->raw_trie (raw_special) or b->norm_trie
     * (norm_special) is special: in plain mode that split finds nothing */
    int raw_special, norm_special;
    size_t base; /* offset of the current valid-UTF-8 segment in the text */
    /* scratch */
    sl_buf norm, tmp, piece;
    sl_norm_scratch ns;
    sl_pretok_scratch ps1, ps2; /* general pre-tokenizer: before and after ByteLevel */
    sl_buf gp, bl, bl2;
    int32_t *sym, *prev, *next;
    uint32_t *link; /* 2 * sym_cap: merge_scan's links */
    size_t sym_cap;
    uint64_t *heap;
    size_t heap_cap;
    /* lazy_merges: pair -> (rank, id) of the lookups so far, direct-mapped,
     * 1 << SL_MEMO_BITS slots (rank UINT32_MAX: no merge), made at first
     * use; cat: room for max_len bytes */
    sl_merge_slot *memo;
    char *cat;
    /* lazy_merges: the pairs of ids below SL_GRID_IDS, dense, made with
     * memo: the pair's rank (UINT32_MAX: no merge; 0xFEFEFEFE: not looked
     * up yet) */
    uint32_t *grid;
    /* The piece being merged when symbol i is its byte i (set by
     * sl_bpe_encode_piece: no byte dropped, no affix, no unk): a memo miss
     * reads the pair's bytes from it instead of from the pool. */
    const uint8_t *bytes;
};
/* 2^10 memo slots (16 KiB): behind the grid, a larger memo kept few more
 * pairs than it pushed other tables out of the L2 (pre-tokenizing and
 * looking up 24 MB: 2^8-2^12 slots 3-5 % faster than 2^15 on cl100k and
 * o200k, 2^16 and 2^17 slower; docs/performance.md) */
#define SL_MEMO_BITS 10
#define SL_GRID_IDS 512

/* A words-table slot: an entry's first 11 bytes (zero after its end) and
 * its length, with its id. Entries of up to 11 bytes (four in five of the
 * lookups that find an entry) are told by the slot alone; a longer one by
 * its bytes from the twelfth on in the pool. */
typedef struct sl_word_slot {
    uint64_t head; /* bytes 0..7 */
    uint32_t tail; /* bytes 8..10 in bits 0..23, min(length, 255) in bits 24..31 */
    uint32_t id1;  /* id + 1; 0: empty */
} sl_word_slot;
/* The first min(n, 8) bytes of p as a word, zero after them (byte i in
 * bits 8i..8i+7 on a little-endian machine), read only from p[0..n): with
 * loads that overlap, not by bytes stored into a buffer and read back as a
 * word, which stalls on store forwarding. */
static inline uint64_t sl_head8(const uint8_t *p, size_t n)
{
    uint64_t w;
    uint32_t lo, hi;
    if (n >= 8) {
        memcpy(&w, p, 8);
        return w;
    }
    if (n >= 4) {
        memcpy(&lo, p, 4);
        memcpy(&hi, p + n - 4, 4);
        return lo | (uint64_t)hi << (8 * (n - 4));
    }
    if (n == 0)
        return 0;
    return p[0] | (uint64_t)p[n >> 1] << (8 * (n >> 1)) | (uint64_t)p[n - 1] << (8 * (n - 1));
}

/* The size of an open-addressing table for n entries (or of a Bloom
 * filter in bits): the smallest power of two from `from` on that is at
 * least `need`. */
static inline size_t sl_pow2_cap(size_t from, size_t need)
{
    size_t cap = from;
    while (cap < need)
        cap *= 2;
    return cap;
}

/* bpe_merge.c: the words table made empty, with room for n entries; */
void sl_words_init(sl_bpe *b, size_t n);
/* entry id put into it for bytes[0..n) (hash: their XXH3), unless an entry
 * has these bytes already: its id is returned then, else -1 (entries are
 * compared by their bytes in the pool, tok_off and tok_len); */
int64_t sl_words_put(sl_bpe *b, uint32_t id, const void *bytes, size_t n, uint64_t hash);
/* the id of the vocabulary entry of the words table whose bytes are
 * bytes[0..n) (ignore_merges, tiktoken's ordinary tokens), or -1. */
int64_t sl_bpe_find_word(const sl_bpe *b, const void *bytes, size_t n);

/* bpe_load.c: GPT-2's bytes_to_unicode() and its inverse (-1: none). */
void sl_bpe_byte_level_tables(uint32_t b2u[256], int16_t u2b[512]);

/* bpe_merge.c */
void sl_merge_insert(sl_bpe *b, uint32_t left, uint32_t right, uint32_t rank, uint32_t id);
void sl_merge_table_init(sl_bpe *b, size_t n);

/* pretok.c */
enum { SL_PRETOK_GPT2 = 0, SL_PRETOK_LLAMA3 = 1, SL_PRETOK_QWEN2 = 2, SL_PRETOK_O200K = 3, SL_PRETOK_TEKKEN = 4 };
/* The Split patterns as tokenizer.json files write them: Llama-3's (which
 * is tiktoken cl100k's) and Qwen2's (the same with single digits). */
extern const char sl_pretok_llama3_pattern[], sl_pretok_qwen2_pattern[];
int sl_pretok_compile(sl_bpe *b, sl_err *err);
/* Another pattern (tiktoken's Rust regex syntax, which PCRE2 reads for the
 * patterns in use): compiled with PCRE2 (UTF, UCP, $ only at the end, JIT);
 * no scanner. The error names `name` and the offset in the pattern. */
int sl_pretok_compile_regex(sl_bpe *b, const char *pattern, const char *name, sl_err *err);
/* The hand-written GPT-2 pre-tokenizer: end of the piece that starts at
 * pos (p valid UTF-8, pos < n). Same split as the PCRE2 pattern. */
size_t sl_pretok_scan(const uint8_t *p, size_t n, size_t pos);
/* The same for the Llama-3 and Qwen2 patterns. */
size_t sl_pretok_scan_llama3(const uint8_t *p, size_t n, size_t pos);
/* The scan_many forms of the scanners (see struct sl_bpe). */
/* The GPT-2, Llama-3 and Qwen2 patterns for PCRE2 (pretok.c; UTF mode). */
extern const char sl_pretok_gpt2_pcre2[], sl_pretok_llama3_pcre2[], sl_pretok_qwen2_pcre2[];
size_t sl_pretok_many_gpt2(const uint8_t *p, size_t n, size_t pos, size_t *ends, size_t cap);
size_t sl_pretok_many_llama3(const uint8_t *p, size_t n, size_t pos, size_t *ends, size_t cap);
size_t sl_pretok_many_qwen2(const uint8_t *p, size_t n, size_t pos, size_t *ends, size_t cap);
size_t sl_pretok_many_o200k(const uint8_t *p, size_t n, size_t pos, size_t *ends, size_t cap);
size_t sl_pretok_many_tekken(const uint8_t *p, size_t n, size_t pos, size_t *ends, size_t cap);
/* The same on the AVX-512BW window load (x86-64 with GCC or clang; callers
 * check the CPU: sl_pretok_many_isa). */
size_t sl_pretok_many_gpt2_v4(const uint8_t *p, size_t n, size_t pos, size_t *ends, size_t cap);
size_t sl_pretok_many_llama3_v4(const uint8_t *p, size_t n, size_t pos, size_t *ends, size_t cap);
size_t sl_pretok_many_qwen2_v4(const uint8_t *p, size_t n, size_t pos, size_t *ends, size_t cap);
size_t sl_pretok_many_o200k_v4(const uint8_t *p, size_t n, size_t pos, size_t *ends, size_t cap);
size_t sl_pretok_many_tekken_v4(const uint8_t *p, size_t n, size_t pos, size_t *ends, size_t cap);
typedef size_t (*sl_pretok_many_fn)(const uint8_t *p, size_t n, size_t pos, size_t *ends, size_t cap);
/* The scan_many form of pattern pretok (SL_PRETOK_*) on the window loads
 * of isa (0: SSE2, 4: AVX-512BW; -1: the widest this CPU runs), or NULL
 * where the CPU or the build has no such form. */
sl_pretok_many_fn sl_pretok_many_isa(int pretok, int isa);
/* bpe_merge.c: the BPE of the pieces p[start..ends[0]), p[ends[0]..ends[1]),
 * ... (m of them) of the text p[0..n), appended to out. */
void sl_bpe_pieces(const sl_bpe *b, sl_bpe_state *s, const uint8_t *p, size_t n, size_t start, const size_t *ends,
                   size_t m, sl_ids *out);
size_t sl_pretok_scan_qwen2(const uint8_t *p, size_t n, size_t pos);
/* pretok_o200k.c: tiktoken's o200k pattern and Mistral's tekken pattern
 * (as written by tiktoken and tekken files, and for PCRE2), their scanners
 * and character classes (0 other, 1 Lu/Lt, 2 Ll, 3 Lm/Lo, 4 M, 5 N, 6 space) */
extern const char sl_pretok_o200k_pattern[], sl_pretok_tekken_pattern[];
extern const char sl_pretok_o200k_pcre2[], sl_pretok_tekken_pcre2[];
size_t sl_pretok_scan_o200k(const uint8_t *p, size_t n, size_t pos);
size_t sl_pretok_scan_tekken(const uint8_t *p, size_t n, size_t pos);
void sl_pretok_o200k_init(void);
int sl_pretok_o200k_class(uint32_t cp);
/* Its character class of a code point: 1 letter, 2 number, 3 space, 4 other. */
int sl_pretok_class(uint32_t cp);
/* Digits(individual_digits) then ByteLevel with its regex (StarCoder,
 * Refact): every number a piece, GPT-2's pattern between them. */
enum { SL_PRETOK_GPT2_DIGITS = 16 };
int sl_pretok_compile_digits(sl_bpe *b, sl_err *err);
size_t sl_pretok_scan_digits(const uint8_t *p, size_t n, size_t pos);
/* Falcon's Punctuation(contiguous), ByteLevel, Digits, Split [0-9]{3}. */
enum { SL_PRETOK_FALCON = 17 };
int sl_pretok_compile_falcon(sl_bpe *b, sl_err *err);
size_t sl_pretok_scan_falcon(const uint8_t *p, size_t n, size_t pos);

/* The merge step on symbols given as ids, for families that make their
 * initial symbols themselves (tok_spbpe.c): sl_bpe_syms returns room for n
 * ids in s, which sl_bpe_merge_syms merges by b's merge table (ranks), the
 * result appended to out. Only b's merge table is used. */
int32_t *sl_bpe_syms(sl_bpe_state *s, size_t n);
void sl_bpe_merge_syms(const sl_bpe *b, sl_bpe_state *s, size_t n, sl_ids *out);

/* Test hooks (tests/unit/test_bpe_*.c, tests/fuzz/fuzz_bpe_encode.c):
 * work done by this state so far (merge-table lookups and heap operations),
 * to check that long pieces stay O(n log n); */
uint64_t sl_bpe_state_work(const sl_bpe_state *s);

/* the BPE of one pre-token (bytes), by the heap algorithm (heap = 1) or the
 * simple scan (heap = 0); */
void sl_bpe_encode_piece(const sl_bpe *b, sl_bpe_state *s, const uint8_t *p, size_t n, int heap, sl_ids *out);
/* the ids of one pre-token through the per-thread caches (bpe_merge.c); */
void sl_bpe_piece(const sl_bpe *b, sl_bpe_state *s, const uint8_t *p, size_t n, sl_ids *out);
/* the regex pre-tokenization of text as piece end offsets. */
int sl_bpe_pretokenize(const sl_bpe *b, sl_bpe_state *s, const char *text, size_t n, sl_ids *ends);

#endif

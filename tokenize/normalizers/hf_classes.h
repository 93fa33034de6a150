/* The Unicode classes of Hugging Face tokenizers' BERT-style components,
 * as HF itself gives them (measured on `tokenizers`, so with its Rust and
 * crate Unicode versions, not ICU's or PCRE2's). Internal. */
#ifndef SLUICE_TOKENIZE_HF_CLASSES_H
#define SLUICE_TOKENIZE_HF_CLASSES_H

#include <stdint.h>

enum {
    SL_HF_WS = 1,    /* char::is_whitespace (WhitespaceSplit, BertPreTokenizer, Strip) */
    SL_HF_CTRL = 2,  /* removed by BertNormalizer clean_text (NUL, U+FFFD, "other" but \t \n \r) */
    SL_HF_PUNC = 4,  /* ASCII punctuation or Unicode P* (Punctuation, BertPreTokenizer) */
    SL_HF_NUM = 8,   /* char::is_numeric (Digits) */
    SL_HF_MN = 16,   /* removed by BertNormalizer strip_accents after NFD (Mn) */
    SL_HF_COMB = 32, /* removed by the StripAccents normalizer (is_combining_mark) */
    SL_HF_WORD = 64, /* Rust regex \w (the Whitespace pre-tokenizer) */
};

/* Call once before sl_hf_class (idempotent, thread-safe). */
void sl_hf_classes_init(void);
/* The SL_HF_* flags of code point cp. */
uint8_t sl_hf_class(uint32_t cp);
/* BertNormalizer's "Chinese character" ranges (CJK ideographs). */
int sl_hf_is_chinese(uint32_t cp);

#endif

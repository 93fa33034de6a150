# tokenize/: NFC/NFKC/lowercase normalization comes from ICU (libicu-dev).
LDLIBS_ALL += -licuuc
# The components live in subfolders (normalizers/, pre_tokenizers/, models/,
# processors/, decoders/; tables/ holds generated headers): their sources join
# the library here, as the top-level LIB_SRC takes only tokenize/*.c.
TOKENIZE_SUB_SRC := $(sort $(wildcard tokenize/*/*.c))
LIB_OBJ += $(TOKENIZE_SUB_SRC:%.c=$(BUILD)/%.o)

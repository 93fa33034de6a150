# tokenize/: NFC/NFKC/lowercase normalization comes from ICU (libicu-dev).
LDLIBS_ALL += -licuuc

# kernels/: the CPU kernels' polynomial exp/log/softplus vectorize only when
# GCC may if-convert floating-point operations, which it does not do under
# the default -ftrapping-math without AVX-512's masked instructions: the
# AVX2 clones would run scalar. sluice never reads the FP exception flags,
# and the option changes no value (results are bit-identical to before).
$(BUILD)/kernels/%.o: CFLAGS_ALL += -fno-trapping-math
# `make CPU_MAX=v3`: compile the kernels' multi-versioned loops without the
# AVX-512 version, to measure an AVX2-only CPU on one that has AVX-512.
ifeq ($(CPU_MAX),v3)
$(BUILD)/kernels/%.o: CFLAGS_ALL += -DSL_CPU_MAX_V3
endif

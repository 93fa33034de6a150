/* A tiny CPU simulator for sluice's CUDA kernels, so that the kernels'
 * own source (kernels/cuda/NAME_kernel.cuh) runs in the CPU test suite.
 *
 * Each GPU thread of a block is a fiber (ucontext) on one OS thread; blocks
 * run one after another. __syncthreads() switches to the scheduler, which
 * resumes the block's fibers once all of them have reached the barrier.
 * Warp shuffles exchange values through a per-block buffer between two such
 * barriers (which is correct for kernels whose shuffles are reached by every
 * thread of the block, as sluice's are). __shared__ variables become
 * function statics: one copy, which is right because only one block runs at
 * a time. What this cannot show: timing, memory coalescing, real warp
 * divergence, races that depend on hardware interleaving (compute-sanitizer's
 * racecheck in `make test-cuda` covers those on a GPU).
 *
 * Include this before a kernel header, in C++ compiled by the host compiler. */
#ifndef SLUICE_TESTS_CUDA_SIM_H
#define SLUICE_TESTS_CUDA_SIM_H

#ifdef __CUDACC__
#error "tests/cuda/sim.h is for the host compiler"
#endif

#include <cuda_bf16.h> /* host implementations of the bf16 conversions */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include <functional>
#include <vector>

#ifndef __global__
#define __global__
#endif
#ifndef __device__
#define __device__
#endif
#ifndef __forceinline__
#define __forceinline__ inline
#endif
#undef __launch_bounds__
#define __launch_bounds__(...)
#undef __shared__
#define __shared__ static

struct sim_dim3 {
    unsigned x, y, z;
};

struct sim_block {
    sim_dim3 block_idx{0, 0, 0}, block_dim{1, 1, 1}, grid_dim{1, 1, 1};
    int cur = 0; /* the fiber running now */
    ucontext_t sched;
    std::vector<ucontext_t> ctx;
    std::vector<std::vector<char>> stacks;
    std::vector<int> state;  /* 0 runnable, 1 at a barrier, 2 finished */
    std::vector<float> xchg; /* shuffle exchange buffer */
    const std::function<void()> *body = nullptr;
    long barriers = 0;
};
inline sim_block sim;

inline sim_dim3 sim_thread_idx()
{
    return sim_dim3{(unsigned)sim.cur, 0, 0};
}
#define threadIdx (sim_thread_idx())
#define blockIdx (sim.block_idx)
#define blockDim (sim.block_dim)
#define gridDim (sim.grid_dim)

inline void __syncthreads()
{
    int me = sim.cur;
    sim.state[me] = 1;
    sim.barriers++;
    swapcontext(&sim.ctx[me], &sim.sched);
}

inline float __shfl_up_sync(unsigned mask, float v, int off)
{
    (void)mask;
    int me = sim.cur, lane = me % 32;
    sim.xchg[me] = v;
    __syncthreads();
    float r = lane >= off ? sim.xchg[me - off] : v; /* lanes below off keep their own value */
    __syncthreads();
    return r;
}

inline float __shfl_xor_sync(unsigned mask, float v, int off)
{
    (void)mask;
    int me = sim.cur;
    sim.xchg[me] = v;
    __syncthreads();
    float r = sim.xchg[(me & ~31) | ((me % 32) ^ off)];
    __syncthreads();
    return r;
}

inline float __int_as_float(int i)
{
    float f;
    memcpy(&f, &i, sizeof f);
    return f;
}

inline void sim_fiber_entry()
{
    (*sim.body)();
    sim.state[sim.cur] = 2;
    /* returning resumes uc_link: the scheduler */
}

/* Runs body() as `grid` blocks of `threads` GPU threads (1-D). */
inline void sim_launch(unsigned grid, unsigned threads, const std::function<void()> &body)
{
    const size_t stack = 256 * 1024;
    sim.body = &body;
    sim.grid_dim = sim_dim3{grid, 1, 1};
    sim.block_dim = sim_dim3{threads, 1, 1};
    sim.ctx.assign(threads, ucontext_t());
    sim.state.assign(threads, 0);
    sim.xchg.assign(threads, 0.0f);
    sim.stacks.resize(threads);
    for (auto &s : sim.stacks)
        s.resize(stack);
    for (unsigned b = 0; b < grid; b++) {
        sim.block_idx = sim_dim3{b, 0, 0};
        for (unsigned t = 0; t < threads; t++) {
            getcontext(&sim.ctx[t]);
            sim.ctx[t].uc_stack.ss_sp = sim.stacks[t].data();
            sim.ctx[t].uc_stack.ss_size = stack;
            sim.ctx[t].uc_link = &sim.sched;
            makecontext(&sim.ctx[t], sim_fiber_entry, 0);
            sim.state[t] = 0;
        }
        for (;;) {
            for (unsigned t = 0; t < threads; t++)
                if (sim.state[t] == 0) {
                    sim.cur = (int)t;
                    swapcontext(&sim.sched, &sim.ctx[t]);
                }
            unsigned waiting = 0, done = 0;
            for (unsigned t = 0; t < threads; t++)
                waiting += sim.state[t] == 1, done += sim.state[t] == 2;
            if (done == threads)
                break;
            if (done) {
                fprintf(stderr, "sim: block %u: %u threads finished while %u wait at a barrier\n", b, done, waiting);
                abort();
            }
            for (unsigned t = 0; t < threads; t++)
                sim.state[t] = 0; /* everyone arrived: release */
        }
    }
}

#endif

/* The CUDA kernels' own source (kernels/cuda/NAME_kernel.cuh) run on the CPU by
 * the simulator in tests/cuda/sim.h, one fiber per GPU thread, with the
 * launch configurations of kernels/cuda/NAME.cu. Part of `make test` (built by
 * kernels/cuda/cuda.mk when CUDA=1; needs the CUDA headers, not a GPU).
 *
 * Two checks per kernel:
 *  - bit-for-bit equal to the host emulation (kernels/scan_emu.c): compiled
 *    by the same host compiler, the kernel source and the emulation perform
 *    the same operations in the same order, so the emulation — which the
 *    other CPU tests compare with sequential references — is a faithful
 *    model of the kernel code, not of an idea of it;
 *  - within the GPU tests' tolerances of the CPU backend (fp32 rtol 6e-4,
 *    atol 2e-3), as `make test-cuda` checks on a GPU.
 * Prints "N passed, N failed". */
#include "tests/cuda/sim.h"

#include <math.h>

extern "C" {
#include "kernels/kernels.h"
#include "kernels/scan_emu.h"
}
#include "kernels/cuda/layout.h"

/* The kernel headers' own includes are all included above, so only their
 * sl_cuda_k namespace lands in `simulated`: distinct from the host stubs nvcc
 * generated for the real kernels in libsluice.a. */
namespace simulated
{
#include "kernels/cuda/conv_kernel.cuh"
#include "kernels/cuda/rows_kernel.cuh"
#include "kernels/cuda/scan_kernel.cuh"
#include "kernels/cuda/ssd_kernel.cuh"
} // namespace simulated

using namespace simulated::sl_cuda_k;

static int passed, failed;
static sl_backend *cpu;

static uint64_t rng_state = 42;
static float rnd(float lo, float hi)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return lo + (hi - lo) * (float)((z >> 40) / 16777216.0);
}
static std::vector<float> rvec(size_t n, float lo, float hi)
{
    std::vector<float> v(n);
    for (auto &x : v)
        x = rnd(lo, hi);
    return v;
}

static void check(bool ok, const char *what)
{
    if (ok) {
        passed++;
    } else {
        failed++;
        fprintf(stderr, "FAILED: %s\n", what);
    }
}

static bool same_bits(const std::vector<float> &a, const std::vector<float> &b)
{
    return a.size() == b.size() && memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

static bool allclose(const std::vector<float> &got, const std::vector<float> &want, double rtol, double atol)
{
    for (size_t i = 0; i < got.size(); i++)
        if (!(fabs((double)got[i] - want[i]) <= atol + rtol * fabs(want[i]))) {
            fprintf(stderr, "  [%zu] got %.9g want %.9g\n", i, got[i], want[i]);
            return false;
        }
    return got.size() == want.size();
}

/* --- selective scan: three layouts, as scan.cu launches them --------------- */
static void sim_scan(const sl_scan_args &a)
{
    scan_params p = {a.L, a.N,    a.u,     a.ldu, a.dt,  a.lddt,  a.dt_bias, a.A_log2e, a.B,
                     a.C, a.ldbc, a.Dskip, a.z,   a.ldz, a.state, a.reset,   a.y,       a.ldy};
    if (a.L <= 0)
        return;
    switch (sl_scan_layout_pick(a.L)) {
    case 0: sim_launch((unsigned)a.D, 32, [&] { scan_kernel<32, 4>(p); }); break;
    case 1: sim_launch((unsigned)a.D, 128, [&] { scan_kernel<128, 4>(p); }); break;
    default: sim_launch((unsigned)a.D, 128, [&] { scan_kernel<128, 8>(p); }); break;
    }
}

static void scan_case(int64_t L, int64_t D, int N, bool gate, bool resets, int pieces)
{
    int64_t ld = 2 * D + 1, ldbc = 2 * N + 2;
    auto xz = rvec((size_t)(L * ld), -2, 2), dt = rvec((size_t)(L * D), -3, 3), bc = rvec((size_t)(L * ldbc), -2, 2);
    auto dtb = rvec((size_t)D, -6, -2), Dk = rvec((size_t)D, 0.5f, 1.5f), st0 = rvec((size_t)(D * N), -1, 1);
    std::vector<float> A2((size_t)(D * N));
    for (int64_t i = 0; i < D * N; i++)
        A2[i] = -(float)(i % N + 1) * expf(rnd(-0.5f, 0.5f)) * SL_LOG2E;
    std::vector<uint8_t> rs((size_t)L);
    for (auto &r : rs)
        r = resets && rnd(0, 1) < 0.01f;
    if (resets)
        rs[0] = 1;
    std::vector<float> y[3], st[3];
    for (int k = 0; k < 3; k++) { /* 0 simulated kernel, 1 emulation, 2 CPU backend (one call) */
        y[k].assign((size_t)(L * D), 0.0f);
        st[k] = st0;
        int np = k == 2 ? 1 : pieces;
        for (int i = 0; i < np; i++) {
            int64_t t0 = L * i / np, t1 = L * (i + 1) / np;
            sl_scan_args a = {t1 - t0,
                              D,
                              N,
                              xz.data() + t0 * ld,
                              ld,
                              dt.data() + t0 * D,
                              D,
                              dtb.data(),
                              A2.data(),
                              bc.data() + t0 * ldbc + 2,
                              bc.data() + t0 * ldbc + 2 + N,
                              ldbc,
                              Dk.data(),
                              gate ? xz.data() + t0 * ld + D : nullptr,
                              ld,
                              st[k].data(),
                              resets ? rs.data() + t0 : nullptr,
                              y[k].data() + t0 * D,
                              D};
            sl_err err = {};
            if (k == 0)
                sim_scan(a);
            else if (k == 1)
                check(sl_scan_emu(&a, -1, &err) == 0, "emulation ran");
            else
                check(cpu->selective_scan(cpu, &a, &err) == 0, "cpu scan ran");
        }
    }
    char what[128];
    snprintf(what, sizeof what, "scan L=%lld D=%lld N=%d gate=%d resets=%d pieces=%d", (long long)L, (long long)D, N,
             gate, resets, pieces);
    check(same_bits(y[0], y[1]) && same_bits(st[0], st[1]), what);
    check(allclose(y[0], y[2], 6e-4, 2e-3) && allclose(st[0], st[2], 6e-4, 2e-3), what);
}

/* --- Mamba-2 SSD, chunked -------------------------------------------------- */
static void ssd_case(int64_t L, int H, int P, int G, int N, bool gate, bool resets, int pieces)
{
    const int64_t D = (int64_t)H * P, ldx = D + 1, ldbc = 2 * (int64_t)G * N;
    auto x = rvec((size_t)(L * ldx), -2, 2), z = rvec((size_t)(L * D), -2, 2), dt = rvec((size_t)(L * H), -3, 3);
    auto bc = rvec((size_t)(L * ldbc), -1, 1), bias = rvec((size_t)H, -4, -1), Dk = rvec((size_t)H, 0.5f, 1.5f);
    auto st0 = rvec((size_t)(D * N), -1, 1), A = rvec((size_t)H, -1, 2);
    for (auto &v : A)
        v = -expf(v);
    std::vector<uint8_t> rs((size_t)L);
    for (auto &r : rs)
        r = resets && rnd(0, 1) < 0.03f;
    std::vector<float> y[3], st[3];
    bool have_cpu = cpu->ssd_chunked != nullptr;
    for (int k = 0; k < (have_cpu ? 3 : 2); k++) { /* 0 simulated kernel, 1 emulation, 2 CPU backend (one call) */
        y[k].assign((size_t)(L * D), 0.0f);
        st[k] = st0;
        int np = k == 2 ? 1 : pieces;
        for (int i = 0; i < np; i++) {
            int64_t t0 = L * i / np, t1 = L * (i + 1) / np;
            sl_ssd_args a = {};
            a.L = t1 - t0, a.H = H, a.P = P, a.G = G, a.N = N, a.chunk = 0;
            a.x = x.data() + t0 * ldx, a.ldx = ldx, a.dt = dt.data() + t0 * H, a.lddt = H;
            a.dt_bias = bias.data(), a.A = A.data(), a.Dskip = Dk.data(), a.dt_min = 0.0f, a.dt_max = INFINITY;
            a.B = bc.data() + t0 * ldbc, a.C = bc.data() + t0 * ldbc + (int64_t)G * N, a.ldbc = ldbc;
            a.z = gate ? z.data() + t0 * D : nullptr, a.ldz = D, a.state = st[k].data();
            a.reset = resets ? rs.data() + t0 : nullptr, a.y = y[k].data() + t0 * D, a.ldy = D;
            sl_err err = {};
            if (k == 0) {
                ssd_params p = {a.L,    a.H,       a.P,   a.G,     a.N,      a.x,      a.ldx, a.dt,
                                a.lddt, a.dt_bias, a.A,   a.Dskip, a.dt_min, a.dt_max, a.B,   a.C,
                                a.ldbc, a.z,       a.ldz, a.state, a.reset,  a.y,      a.ldy};
                if (a.L > 0)
                    sim_launch((unsigned)(H * ((P + SL_SSD_PT - 1) / SL_SSD_PT)), SL_SSD_THREADS,
                               [&] { ssd_kernel(p); });
            } else if (k == 1) {
                check(sl_ssd_emu(&a, &err) == 0, "ssd emulation ran");
            } else {
                check(cpu->ssd_chunked(cpu, &a, &err) == 0, "cpu ssd ran");
            }
        }
    }
    char what[128];
    snprintf(what, sizeof what, "ssd L=%lld H=%d P=%d G=%d N=%d gate=%d resets=%d pieces=%d", (long long)L, H, P, G, N,
             gate, resets, pieces);
    check(same_bits(y[0], y[1]) && same_bits(st[0], st[1]), what);
    if (have_cpu)
        check(allclose(y[0], y[2], 6e-4, 2e-3) && allclose(st[0], st[2], 6e-4, 2e-3), what);
}

/* --- conv ------------------------------------------------------------------ */
static void conv_case(int64_t L, int64_t D, int K, bool resets, int pieces)
{
    int64_t ld = 2 * D;
    auto x = rvec((size_t)(L * ld), -2, 2), w = rvec((size_t)(D * K), -1, 1), bias = rvec((size_t)D, -0.5f, 0.5f);
    auto st0 = rvec((size_t)(D * (K - 1)), -2, 2);
    std::vector<uint8_t> rs((size_t)L);
    for (auto &r : rs)
        r = resets && rnd(0, 1) < 0.1f;
    std::vector<float> out[3], st[3];
    for (int k = 0; k < 3; k++) {
        out[k].assign((size_t)(L * D), 0.0f);
        st[k] = st0;
        int np = k == 2 ? 1 : pieces;
        for (int i = 0; i < np; i++) {
            int64_t t0 = L * i / np, t1 = L * (i + 1) / np;
            sl_conv_args a = {t1 - t0,
                              D,
                              K,
                              x.data() + t0 * ld,
                              ld,
                              w.data(),
                              bias.data(),
                              st[k].data(),
                              resets ? rs.data() + t0 : nullptr,
                              out[k].data() + t0 * D,
                              D};
            sl_err err = {};
            if (k == 0) { /* as conv.cu launches it */
                conv_params p = {a.L, a.D, a.K, a.x, a.ldx, a.w, a.bias, a.state, a.reset, a.out, a.ldout};
                if (a.L > 0) {
                    sim_launch((unsigned)((a.L * a.D + 255) / 256), 256, [&] { conv_out_kernel(p); });
                    if (K > 1)
                        sim_launch((unsigned)((a.D + 127) / 128), 128, [&] { conv_state_kernel(p); });
                }
            } else if (k == 1) {
                check(sl_conv_emu(&a, &err) == 0, "conv emulation ran");
            } else {
                check(cpu->conv1d_silu(cpu, &a, &err) == 0, "cpu conv ran");
            }
        }
    }
    char what[128];
    snprintf(what, sizeof what, "conv L=%lld D=%lld K=%d resets=%d pieces=%d", (long long)L, (long long)D, K, resets,
             pieces);
    check(same_bits(out[0], out[1]) && same_bits(st[0], st[1]), what);
    check(allclose(out[0], out[2], 6e-4, 2e-3) && same_bits(st[0], st[2]), what);
}

/* --- rows ------------------------------------------------------------------ */
static void norm_case(int64_t L, int64_t D, int mode, int64_t group = 0)
{
    auto x = rvec((size_t)(L * D), -3, 3), res0 = rvec((size_t)(L * D), -10, 10), w = rvec((size_t)D, 0.5f, 1.5f);
    std::vector<float> out[3], res[3];
    for (int k = 0; k < 3; k++) {
        out[k].assign((size_t)(L * D), 0.0f);
        res[k] = res0;
        sl_norm_args a = {
            L, D, mode == 2 ? nullptr : x.data(), res[k].data(), mode == 1, w.data(), 1e-5f, out[k].data(), group};
        sl_err err = {};
        if (k == 0)
            sim_launch((unsigned)(L * (group ? D / group : 1)), kRowT, [&] { norm_kernel(a); });
        else if (k == 1)
            check(sl_norm_emu(&a, &err) == 0, "norm emulation ran");
        else
            check(cpu->add_rmsnorm(cpu, &a, &err) == 0, "cpu norm ran");
    }
    char what[64];
    snprintf(what, sizeof what, "rmsnorm D=%lld mode=%d group=%lld", (long long)D, mode, (long long)group);
    check(same_bits(out[0], out[1]) && same_bits(res[0], res[1]), what);
    check(allclose(out[0], out[2], 6e-4, 2e-3) && allclose(res[0], res[2], 1e-6, 0), what);
}

static void logsoftmax_case(int64_t T, int64_t V, int64_t ld)
{
    auto lg = rvec((size_t)(T * ld), -20, 20);
    for (int64_t t = 0; t < T; t++)
        lg[t * ld + (t % V)] += t % 2 ? 60.0f : 0.0f;
    std::vector<int32_t> tg((size_t)T);
    for (int64_t t = 0; t < T; t++)
        tg[t] = t % 4 == 3 ? -1 : (int32_t)((t * 7919) % V);
    std::vector<float> lp[3];
    for (int k = 0; k < 3; k++) {
        lp[k].assign((size_t)T, 1.0f);
        sl_logsoftmax_args a = {T, V, lg.data(), ld, tg.data(), lp[k].data()};
        sl_err err = {};
        if (k == 0)
            sim_launch((unsigned)T, kRowT, [&] { logsoftmax_kernel(a); });
        else if (k == 1)
            check(sl_logsoftmax_emu(&a, &err) == 0, "logsoftmax emulation ran");
        else
            check(cpu->logsoftmax_gather(cpu, &a, &err) == 0, "cpu logsoftmax ran");
    }
    char what[64];
    snprintf(what, sizeof what, "logsoftmax V=%lld", (long long)V);
    check(same_bits(lp[0], lp[1]), what);
    check(allclose(lp[0], lp[2], 6e-4, 2e-3), what);
}

/* embed, bias fill and bf16 rounding against direct computation */
static void small_kernels()
{
    int64_t V = 50, D = 300, L = 20;
    auto emb = rvec((size_t)(V * D), -1, 1);
    std::vector<__nv_bfloat16> emb16((size_t)(V * D));
    for (size_t i = 0; i < emb.size(); i++)
        emb16[i] = __float2bfloat16_rn(emb[i]);
    std::vector<int32_t> ids((size_t)L);
    for (int64_t t = 0; t < L; t++)
        ids[t] = (int32_t)((t * 13) % V);
    ids[5] = (int32_t)V; /* outside the table: NaN, never a read out of bounds */
    for (int bf = 0; bf < 2; bf++) {
        std::vector<float> out((size_t)(L * (D + 1)), 7.0f);
        const void *table = bf ? (const void *)emb16.data() : (const void *)emb.data();
        sim_launch((unsigned)L, kRowT, [&] { embed_kernel(ids.data(), table, bf, V, D, out.data(), D + 1); });
        bool ok = true;
        for (int64_t t = 0; t < L; t++)
            for (int64_t c = 0; c < D; c++) {
                float want = t == 5 ? NAN : bf ? __bfloat162float(emb16[ids[t] * D + c]) : emb[ids[t] * D + c];
                float got = out[t * (D + 1) + c];
                ok &= t == 5 ? isnan(got) : got == want;
            }
        for (int64_t t = 0; t < L; t++)
            ok &= out[t * (D + 1) + D] == 7.0f; /* stride respected */
        check(ok, bf ? "embed bf16" : "embed f32");
    }
    int64_t N = 70, ldy = 75;
    auto bias = rvec((size_t)N, -1, 1);
    std::vector<float> y((size_t)(L * ldy), 3.0f);
    sim_launch((unsigned)((L * N + 255) / 256), 256, [&] { bias_kernel(y.data(), ldy, bias.data(), L, N); });
    bool ok = true;
    for (int64_t t = 0; t < L; t++)
        for (int64_t c = 0; c < ldy; c++)
            ok &= y[t * ldy + c] == (c < N ? bias[c] : 3.0f);
    check(ok, "bias fill");
    int64_t K = 33, lds = 40;
    auto src = rvec((size_t)(L * lds), -100, 100);
    std::vector<__nv_bfloat16> dst((size_t)(L * K));
    sim_launch((unsigned)((L * K + 255) / 256), 256, [&] { bf16_kernel(dst.data(), src.data(), lds, L, K); });
    ok = true;
    for (int64_t t = 0; t < L; t++)
        for (int64_t k = 0; k < K; k++) {
            /* round to nearest even by hand */
            uint32_t u;
            float f = src[t * lds + k];
            memcpy(&u, &f, 4);
            uint16_t want = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16), got;
            memcpy(&got, &dst[t * K + k], 2);
            ok &= got == want;
        }
    check(ok, "bf16 conversion");
}

int main()
{
    sl_err err = {};
    cpu = sl_backend_cpu(1, &err);
    if (!cpu)
        return fprintf(stderr, "%s\n", err.msg), 1;
    /* every layout and chunk boundary: 32x4 (<=128), 128x4 (<=512), 128x8 (1024-token chunks) */
    const int64_t Ls[] = {1, 2, 100, 128, 129, 512, 513, 2100};
    for (int64_t L : Ls) {
        scan_case(L, 2, 16, true, false, 1);
        scan_case(L, 2, 16, true, true, 1);
    }
    scan_case(1200, 2, 16, true, true, 4); /* state carried across calls */
    scan_case(300, 2, SL_SCAN_MAX_N, false, true, 2);
    scan_case(70, 2, 1, true, false, 1);
    for (int64_t L : {1, 2, 3, 50, 600})
        for (int K : {2, 4}) {
            conv_case(L, 37, K, false, 1);
            conv_case(L, 37, K, true, L >= 3 ? 3 : 1);
        }
    for (int64_t D : {33, 768, 2560})
        for (int mode = 0; mode < 3; mode++)
            norm_case(3, D, mode);
    for (int mode = 0; mode < 3; mode++)
        norm_case(3, 3072, mode, 768); /* Mamba-2, ngroups 4 */
    norm_case(2, 1000, 0, 250);
    logsoftmax_case(5, 1, 4);
    logsoftmax_case(9, 300, 301);
    logsoftmax_case(4, 50277, 50280);
    for (int64_t L : {1, 2, 33, 70})
        ssd_case(L, 2, 40, 1, 16, true, L > 2, 1);         /* ragged tile and chunk */
    ssd_case(100, 4, 64, 2, SL_SSD_MAX_N, false, true, 3); /* the largest d_state, 2 groups, carried */
    ssd_case(40, 3, 8, 3, 6, true, true, 2);
    small_kernels();
    sl_backend_close(cpu);
    printf("test_cuda_sim: kernel source simulated on the CPU, %ld barriers\n", sim.barriers);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}

// gemm.cu - dense matrix products for the Tally kernel library.
//
// NVRTC compiles it with no include path; the library prepends prelude.cuh
// (u16/u32, f16 conversions, the mma wrapper and the warp-tile k-step shared
// with conv.cu) when it compiles this file. f16/bf16 values are raw 16-bit
// patterns in unsigned short.
// Determinism: every block computes its own output tile from the inputs and
// its blockIdx only; the reduction order over k is fixed, so outputs are
// bit-identical whatever the block order or grid slicing.

// ---------------------------------------------------------------------------
// Tensor-core GEMM: C[m,n] = alpha * A[m,k] x B[k,n], A and B row-major,
// f32 accumulation with mma.sync.m16n8k16.
//
// Block tile 64x64x32, 128 threads = 4 warps in a 2x2 layout, each warp owns
// a 32x32 sub-tile = 2 (m16) x 4 (n8) mma tiles. The next k-tile is fetched
// into registers while the current one is multiplied out of shared memory.
// A is staged as As[m][k]; B is staged transposed as Bs[n][k] so both mma
// operands are read as aligned 32-bit pairs along k (the .row.col layout).
// Rows are padded by 8 halves (80-byte stride), which makes the fragment
// reads conflict-free.
//
// Shapes: any m, n, k >= 1. When k % 8 == 0 (A) and n % 8 == 0 (B) the
// global loads are 16-byte vectors; otherwise a scalar, zero-filling path
// handles the ragged edges. Pointers must be 16-byte aligned (cudaMalloc).
// ---------------------------------------------------------------------------

#define GM_BM 64
#define GM_BN 64
#define GM_BK 32
#define GM_PAD 8
#define GM_THREADS 128

// One chunk of a row-major [rows, cols] f16/bf16 matrix: 8 consecutive
// values of row `row` from column `col` (a multiple of 8), zero outside
// [rows) x [cols). A chunks are gm_load(A, m, k, ...), B chunks
// gm_load(B, k, n, ...).
__device__ __forceinline__ uint4 gm_load(const u16* __restrict__ X, int rows, int cols, int row, int col) {
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (row >= rows) return v;
    const u16* p = X + (size_t)row * (size_t)cols + col;
    if ((cols & 7) == 0 && col + 8 <= cols) {
        v = *reinterpret_cast<const uint4*>(p);
    } else {
        v = load8_zero_fill(p, col, cols);
    }
    return v;
}

__device__ __forceinline__ u16 gm_half(const uint4& v, int j) {
    u32 w = (j < 2) ? v.x : (j < 4) ? v.y : (j < 6) ? v.z : v.w;
    return (u16)((j & 1) ? (w >> 16) : (w & 0xffffu));
}

// The body of both tensor-core entries: bf16 (BF16) or f16 operands; C is
// f16 (T = u16, rounded to nearest even) or f32 (T = float).
template <bool BF16, class T>
__device__ __forceinline__ void gemm_mma_body(const u16* __restrict__ A, const u16* __restrict__ B,
                                              T* __restrict__ C, int m, int n, int k, float alpha) {
    __shared__ __align__(16) u16 As[GM_BM][GM_BK + GM_PAD];
    __shared__ __align__(16) u16 Bs[GM_BN][GM_BK + GM_PAD];

    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int wm = (warp >> 1) * 32;  // warp row offset in the block tile
    const int wn = (warp & 1) * 32;   // warp col offset in the block tile
    const int g = lane >> 2;          // mma "groupID"
    const int t = lane & 3;           // mma "threadID_in_group"
    const int bm = blockIdx.y * GM_BM;
    const int bn = blockIdx.x * GM_BN;

    // Global->shared mapping. A: 256 chunks of 8 halves, two per thread.
    // B: 128 chunks of 2 k-rows x 8 n-cols, one per thread; kp varies fastest
    // so the transposing 32-bit stores hit mostly distinct banks.
    const int a_row0 = tid >> 2, a_col0 = (tid & 3) * 8;
    const int a_row1 = (tid + GM_THREADS) >> 2, a_col1 = ((tid + GM_THREADS) & 3) * 8;
    const int b_kp = tid & 15, b_nc = (tid >> 4) * 8;

    float acc[2][4][4];
    warp_tile_zero(acc);

    const int ktiles = (k + GM_BK - 1) / GM_BK;
    uint4 ra0 = gm_load(A, m, k, bm + a_row0, a_col0);
    uint4 ra1 = gm_load(A, m, k, bm + a_row1, a_col1);
    uint4 rb0 = gm_load(B, k, n, 2 * b_kp, bn + b_nc);
    uint4 rb1 = gm_load(B, k, n, 2 * b_kp + 1, bn + b_nc);

    for (int kt = 0; kt < ktiles; ++kt) {
        *reinterpret_cast<uint4*>(&As[a_row0][a_col0]) = ra0;
        *reinterpret_cast<uint4*>(&As[a_row1][a_col1]) = ra1;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            u32 w = (u32)gm_half(rb0, j) | ((u32)gm_half(rb1, j) << 16);
            *reinterpret_cast<u32*>(&Bs[b_nc + j][2 * b_kp]) = w;
        }
        __syncthreads();

        // Prefetch the next k-tile into registers; it lands in shared memory
        // after the barrier at the end of this iteration.
        if (kt + 1 < ktiles) {
            const int k0 = (kt + 1) * GM_BK;
            ra0 = gm_load(A, m, k, bm + a_row0, k0 + a_col0);
            ra1 = gm_load(A, m, k, bm + a_row1, k0 + a_col1);
            rb0 = gm_load(B, k, n, k0 + 2 * b_kp, bn + b_nc);
            rb1 = gm_load(B, k, n, k0 + 2 * b_kp + 1, bn + b_nc);
        }

        warp_tile_mma<BF16, GM_BK>(acc, As, Bs, wm, wn, g, t);
        __syncthreads();
    }

    // Epilogue: C = alpha * acc.
    warp_tile_store(C, m, n, acc, bm, bn, wm, wn, g, t, [alpha](float a) { return alpha * a; });
}

// gemm_f16_mma: C (f16) = alpha * A (f16, [m,k] row-major) x B (f16, [k,n]
// row-major), f32 accumulation on tensor cores.
// block = (128,1,1); grid = (ceil(n/64), ceil(m/64), 1).
extern "C" __global__ void __launch_bounds__(GM_THREADS)
gemm_f16_mma(const u16* __restrict__ A, const u16* __restrict__ B, u16* __restrict__ C,
             int m, int n, int k, float alpha) {
    gemm_mma_body<false>(A, B, C, m, n, k, alpha);
}

// gemm_bf16_mma: C (f32) = alpha * A (bf16, [m,k] row-major) x B (bf16, [k,n]
// row-major), f32 accumulation on tensor cores.
// block = (128,1,1); grid = (ceil(n/64), ceil(m/64), 1).
extern "C" __global__ void __launch_bounds__(GM_THREADS)
gemm_bf16_mma(const u16* __restrict__ A, const u16* __restrict__ B, float* __restrict__ C,
              int m, int n, int k, float alpha) {
    gemm_mma_body<true>(A, B, C, m, n, k, alpha);
}

// ---------------------------------------------------------------------------
// gemm_f32: C = alpha * A[m,k] x B[k,n], all f32 row-major, CUDA-core
// fallback. Block tile 64x64, k-tile 16, 256 threads, 4x4 outputs per thread
// (rows ty+16i, cols tx+16j, so shared reads are broadcast/conflict-free and
// global stores coalesce). A is staged transposed (As[k][m]).
// block = (256,1,1); grid = (ceil(n/64), ceil(m/64), 1). Any m, n, k >= 1.
// ---------------------------------------------------------------------------
#define GF_BM 64
#define GF_BN 64
#define GF_BK 16

extern "C" __global__ void __launch_bounds__(256)
gemm_f32(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
         int m, int n, int k, float alpha) {
    __shared__ float As[GF_BK][GF_BM + 4];
    __shared__ float Bs[GF_BK][GF_BN + 4];
    const int tid = threadIdx.x;
    const int tx = tid & 15, ty = tid >> 4;
    const int bm = blockIdx.y * GF_BM, bn = blockIdx.x * GF_BN;

    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < k; k0 += GF_BK) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int e = tid + i * 256;
            const int ar = e >> 4, ak = e & 15;  // A: 64 rows x 16 k, k fastest
            const int gr = bm + ar, gk = k0 + ak;
            As[ak][ar] = (gr < m && gk < k) ? A[(size_t)gr * k + gk] : 0.0f;
            const int bk = e >> 6, bc = e & 63;  // B: 16 k x 64 cols, cols fastest
            const int gk2 = k0 + bk, gc = bn + bc;
            Bs[bk][bc] = (gk2 < k && gc < n) ? B[(size_t)gk2 * n + gc] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < GF_BK; ++kk) {
            float a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) a[i] = As[kk][ty + 16 * i];
#pragma unroll
            for (int j = 0; j < 4; ++j) b[j] = Bs[kk][tx + 16 * j];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int r = bm + ty + 16 * i;
        if (r >= m) continue;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int c = bn + tx + 16 * j;
            if (c < n) C[(size_t)r * n + c] = alpha * acc[i][j];
        }
    }
}

// ---------------------------------------------------------------------------
// gemv_f16: y[m] (f16) = A[m,k] (f16 row-major) x x[k] (f16), f32 math.
// Decode-shaped: one warp per output row, 8 rows per block; lanes stride the
// row in 16-byte vectors (scalar path when k % 8 != 0), then a fixed
// butterfly of __shfl_xor_sync sums the lanes.
// block = (256,1,1); grid = (ceil(m/8), 1, 1). Any m, k >= 1.
// ---------------------------------------------------------------------------
extern "C" __global__ void __launch_bounds__(256)
gemv_f16(const u16* __restrict__ A, const u16* __restrict__ x, u16* __restrict__ y, int m, int k) {
    const int lane = threadIdx.x & 31;
    const int row = blockIdx.x * 8 + (threadIdx.x >> 5);
    if (row >= m) return;  // whole warp leaves together: row is warp-uniform
    const u16* a = A + (size_t)row * (size_t)k;
    float sum = 0.0f;
    if ((k & 7) == 0) {
        for (int c = lane * 8; c < k; c += 32 * 8) {
            const uint4 av = *reinterpret_cast<const uint4*>(a + c);
            const uint4 xv = *reinterpret_cast<const uint4*>(x + c);
            const u32 aw[4] = {av.x, av.y, av.z, av.w};
            const u32 xw[4] = {xv.x, xv.y, xv.z, xv.w};
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                sum = fmaf(f16_to_f32((u16)(aw[j] & 0xffffu)), f16_to_f32((u16)(xw[j] & 0xffffu)), sum);
                sum = fmaf(f16_to_f32((u16)(aw[j] >> 16)), f16_to_f32((u16)(xw[j] >> 16)), sum);
            }
        }
    } else {
        for (int c = lane; c < k; c += 32) sum = fmaf(f16_to_f32(a[c]), f16_to_f32(x[c]), sum);
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
    if (lane == 0) y[row] = f32_to_f16(sum);
}

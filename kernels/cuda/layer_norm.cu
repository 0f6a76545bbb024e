// layer_norm.cu - LayerNorm and RMSNorm over the last dimension.
//
// f16 in/out, f32 statistics. One block per row; the row is cached in
// shared memory as f32 when it fits (cols <= LN_CACHE), else re-read from
// global memory. Mean and variance are two-pass (no E[x^2]-E[x]^2
// cancellation). Block reductions use a fixed tree (warp butterfly, then
// warp 0 over the per-warp partials), so results are bit-reproducible.
// NVRTC compiles it with no include path; the library prepends prelude.cuh
// (u16, f16 conversions) when it compiles this file.

#define LN_THREADS 256
#define LN_WARPS (LN_THREADS / 32)
#define LN_CACHE 4096

__device__ __forceinline__ float ln_block_sum(float v, float* red) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    __syncthreads();  // red may still be read by the previous reduction
    if (lane == 0) red[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = (lane < LN_WARPS) ? red[lane] : 0.0f;
#pragma unroll
        for (int off = LN_WARPS / 2; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
        if (lane == 0) red[LN_WARPS] = v;
    }
    __syncthreads();
    return red[LN_WARPS];
}

// Loads row x into the f32 cache (if it fits) and returns this thread's
// partial sum of x (or of x^2 when SQ).
template <bool SQ>
__device__ __forceinline__ float ln_load(const u16* __restrict__ xr, int cols, float* cache, bool cached) {
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += LN_THREADS) {
        const float v = f16_to_f32(xr[c]);
        if (cached) cache[c] = v;
        s = SQ ? fmaf(v, v, s) : s + v;
    }
    return s;
}

// layer_norm_f16: y[r,c] = (x[r,c] - mean_r) * rsqrt(var_r + eps) * gamma[c] + beta[c]
// on a [rows, cols] row-major matrix (biased variance, as PyTorch).
// block = (256,1,1); grid = (rows, 1, 1). Any rows, cols >= 1.
extern "C" __global__ void __launch_bounds__(LN_THREADS)
layer_norm_f16(const u16* __restrict__ x, const u16* __restrict__ gamma, const u16* __restrict__ beta,
               u16* __restrict__ y, int rows, int cols, float eps) {
    __shared__ float cache[LN_CACHE];
    __shared__ float red[LN_WARPS + 1];
    const int row = blockIdx.x;
    if (row >= rows) return;  // block-uniform
    const bool cached = cols <= LN_CACHE;
    const u16* xr = x + (size_t)row * cols;
    u16* yr = y + (size_t)row * cols;

    const float mean = ln_block_sum(ln_load<false>(xr, cols, cache, cached), red) / (float)cols;
    // Each thread re-reads only the cache slots it wrote, so no barrier is
    // needed before this pass (the reduction above has barriers anyway).
    float sq = 0.0f;
    for (int c = threadIdx.x; c < cols; c += LN_THREADS) {
        const float d = (cached ? cache[c] : f16_to_f32(xr[c])) - mean;
        sq = fmaf(d, d, sq);
    }
    const float rstd = rsqrtf(ln_block_sum(sq, red) / (float)cols + eps);
    for (int c = threadIdx.x; c < cols; c += LN_THREADS) {
        const float v = cached ? cache[c] : f16_to_f32(xr[c]);
        yr[c] = f32_to_f16(fmaf((v - mean) * rstd, f16_to_f32(gamma[c]), f16_to_f32(beta[c])));
    }
}

// rms_norm_f16: y[r,c] = x[r,c] * rsqrt(mean_c(x[r,:]^2) + eps) * gamma[c]
// (LLaMA RMSNorm). block = (256,1,1); grid = (rows, 1, 1). Any rows, cols >= 1.
extern "C" __global__ void __launch_bounds__(LN_THREADS)
rms_norm_f16(const u16* __restrict__ x, const u16* __restrict__ gamma, u16* __restrict__ y,
             int rows, int cols, float eps) {
    __shared__ float cache[LN_CACHE];
    __shared__ float red[LN_WARPS + 1];
    const int row = blockIdx.x;
    if (row >= rows) return;
    const bool cached = cols <= LN_CACHE;
    const u16* xr = x + (size_t)row * cols;
    u16* yr = y + (size_t)row * cols;

    const float rms = rsqrtf(ln_block_sum(ln_load<true>(xr, cols, cache, cached), red) / (float)cols + eps);
    for (int c = threadIdx.x; c < cols; c += LN_THREADS) {
        const float v = cached ? cache[c] : f16_to_f32(xr[c]);
        yr[c] = f32_to_f16(v * rms * f16_to_f32(gamma[c]));
    }
}

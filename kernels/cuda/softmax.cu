// softmax.cu - numerically stable row softmax, f16 in/out, f32 math.
//
// NVRTC compiles it with no include path; the library prepends prelude.cuh
// (u16, f16 conversions) when it compiles this file. Determinism: one block
// owns one row; the block reductions use a fixed tree (warp butterfly via
// __shfl_xor_sync, then the 8 warp partials combined through shared memory
// by warp 0), so the result does not depend on scheduling.

#define SM_THREADS 256
#define SM_WARPS (SM_THREADS / 32)

// Block-wide max or sum; every thread gets the result. `red` is reused by
// successive calls, hence the leading barrier.
template <bool MAX>
__device__ __forceinline__ float sm_block_reduce(float v, float* red) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const float o = __shfl_xor_sync(0xffffffffu, v, off);
        v = MAX ? fmaxf(v, o) : v + o;
    }
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    __syncthreads();
    if (lane == 0) red[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = (lane < SM_WARPS) ? red[lane] : (MAX ? -3.402823466e38f : 0.0f);
#pragma unroll
        for (int off = SM_WARPS / 2; off > 0; off >>= 1) {
            const float o = __shfl_xor_sync(0xffffffffu, v, off);
            v = MAX ? fmaxf(v, o) : v + o;
        }
        if (lane == 0) red[SM_WARPS] = v;
    }
    __syncthreads();
    return red[SM_WARPS];
}

// softmax_rows_f16: y[r,:] = softmax(scale * x[r,:]) for a [rows, cols]
// row-major matrix. Three passes over the row (max, sum of exp, write); the
// row is re-read from L1/L2 rather than cached, so cols is unbounded.
// block = (256,1,1); grid = (rows, 1, 1). Any rows, cols >= 1.
extern "C" __global__ void __launch_bounds__(SM_THREADS)
softmax_rows_f16(const u16* __restrict__ x, u16* __restrict__ y, int rows, int cols, float scale) {
    __shared__ float red[SM_WARPS + 1];
    const int row = blockIdx.x;
    if (row >= rows) return;  // block-uniform
    const u16* xr = x + (size_t)row * cols;
    u16* yr = y + (size_t)row * cols;
    const float l2e = 1.4426950408889634f * scale;  // exp(s*(x-m)) = exp2((x-m)*s*log2e)

    float m = -3.402823466e38f;
    for (int c = threadIdx.x; c < cols; c += SM_THREADS) m = fmaxf(m, f16_to_f32(xr[c]));
    m = sm_block_reduce<true>(m, red);

    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += SM_THREADS) s += exp2f((f16_to_f32(xr[c]) - m) * l2e);
    s = sm_block_reduce<false>(s, red);

    const float inv = 1.0f / s;
    for (int c = threadIdx.x; c < cols; c += SM_THREADS) yr[c] = f32_to_f16(exp2f((f16_to_f32(xr[c]) - m) * l2e) * inv);
}

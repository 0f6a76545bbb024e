// reduction.cu - per-row reductions.
//
// One block per row, 256 threads; each thread accumulates a strided slice
// (16-byte vector loads when the row is aligned), then a fixed-shape tree
// combines them: a shared-memory halving tree down to one warp, then a warp
// butterfly. Fixed order -> bit-reproducible. Self-contained: no #include.

typedef unsigned short u16;
typedef unsigned int u32;

__device__ __forceinline__ float f16_to_f32(u16 h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

#define RD_THREADS 256

// Classic shared-memory tree (256 -> 32), then shuffles; returns the total
// in thread 0.
__device__ __forceinline__ float rd_block_sum(float v, float* buf) {
    const int tid = threadIdx.x;
    buf[tid] = v;
    __syncthreads();
#pragma unroll
    for (int s = RD_THREADS / 2; s >= 32; s >>= 1) {
        if (tid < s) buf[tid] += buf[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        v = buf[tid];
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    }
    return v;
}

// row_sum_f32: out[r] = sum_c x[r,c] for a [rows, cols] f32 row-major matrix.
// block = (256,1,1); grid = (rows, 1, 1). Any rows, cols >= 1.
extern "C" __global__ void __launch_bounds__(RD_THREADS)
row_sum_f32(const float* __restrict__ x, float* __restrict__ out, int rows, int cols) {
    __shared__ float buf[RD_THREADS];
    const int row = blockIdx.x;
    if (row >= rows) return;
    const float* xr = x + (size_t)row * cols;
    float s = 0.0f;
    if ((cols & 3) == 0) {
        for (int c = threadIdx.x * 4; c < cols; c += RD_THREADS * 4) {
            const float4 v = *reinterpret_cast<const float4*>(xr + c);
            s += (v.x + v.y) + (v.z + v.w);
        }
    } else {
        for (int c = threadIdx.x; c < cols; c += RD_THREADS) s += xr[c];
    }
    s = rd_block_sum(s, buf);
    if (threadIdx.x == 0) out[row] = s;
}

// row_mean_f16: out[r] (f32) = mean_c x[r,c] for a [rows, cols] f16 matrix.
// block = (256,1,1); grid = (rows, 1, 1). Any rows, cols >= 1.
extern "C" __global__ void __launch_bounds__(RD_THREADS)
row_mean_f16(const u16* __restrict__ x, float* __restrict__ out, int rows, int cols) {
    __shared__ float buf[RD_THREADS];
    const int row = blockIdx.x;
    if (row >= rows) return;
    const u16* xr = x + (size_t)row * cols;
    float s = 0.0f;
    if ((cols & 7) == 0) {
        for (int c = threadIdx.x * 8; c < cols; c += RD_THREADS * 8) {
            const uint4 v = *reinterpret_cast<const uint4*>(xr + c);
            const u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int j = 0; j < 4; ++j) s += f16_to_f32((u16)(w[j] & 0xffffu)) + f16_to_f32((u16)(w[j] >> 16));
        }
    } else {
        for (int c = threadIdx.x; c < cols; c += RD_THREADS) s += f16_to_f32(xr[c]);
    }
    s = rd_block_sum(s, buf);
    if (threadIdx.x == 0) out[row] = s / (float)cols;
}

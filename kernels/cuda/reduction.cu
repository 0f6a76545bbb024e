// reduction.cu - per-row reductions.
//
// One block per row, 256 threads; each thread accumulates a strided slice
// (16-byte vector loads when the row is aligned), then a fixed-shape tree
// combines them: a shared-memory halving tree down to one warp, then a warp
// butterfly. Fixed order -> bit-reproducible. NVRTC compiles it with no
// include path; the library prepends prelude.cuh (u16/u32, f16 conversions)
// when it compiles this file.

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

// One element as f32, for the scalar path.
__device__ __forceinline__ float rd_f32(float v) { return v; }
__device__ __forceinline__ float rd_f32(u16 h) { return f16_to_f32(h); }

// s plus one aligned 16-byte vector at p, in each type's fixed order: the 4
// floats as one pairwise partial; the 8 halves pair by pair.
__device__ __forceinline__ float rd_add_vec(float s, const float* p) {
    const float4 v = *reinterpret_cast<const float4*>(p);
    return s + ((v.x + v.y) + (v.z + v.w));
}
__device__ __forceinline__ float rd_add_vec(float s, const u16* p) {
    const uint4 v = *reinterpret_cast<const uint4*>(p);
    const u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) s += f16_to_f32((u16)(w[j] & 0xffffu)) + f16_to_f32((u16)(w[j] >> 16));
    return s;
}

// The body of both entries: out[row] = the sum of row `row` = blockIdx.x of
// x [rows, cols] (divided by cols when MEAN), written by thread 0. Each
// thread sums a strided slice: 16-byte vectors of VEC elements when
// cols % VEC == 0 (so every vector is aligned), else single elements; then
// rd_block_sum combines the slices. Rows past `rows` leave at once
// (block-uniform, before any barrier).
template <bool MEAN, class T>
__device__ __forceinline__ void rd_row(const T* __restrict__ x, float* __restrict__ out, int rows, int cols,
                                       float* buf) {
    constexpr int VEC = 16 / sizeof(T);
    const int row = blockIdx.x;
    if (row >= rows) return;
    const T* xr = x + (size_t)row * cols;
    float s = 0.0f;
    if ((cols & (VEC - 1)) == 0) {
        for (int c = threadIdx.x * VEC; c < cols; c += RD_THREADS * VEC) s = rd_add_vec(s, xr + c);
    } else {
        for (int c = threadIdx.x; c < cols; c += RD_THREADS) s += rd_f32(xr[c]);
    }
    s = rd_block_sum(s, buf);
    if (threadIdx.x == 0) out[row] = MEAN ? s / (float)cols : s;
}

// row_sum_f32: out[r] = sum_c x[r,c] for a [rows, cols] f32 row-major matrix.
// block = (256,1,1); grid = (rows, 1, 1). Any rows, cols >= 1.
extern "C" __global__ void __launch_bounds__(RD_THREADS)
row_sum_f32(const float* __restrict__ x, float* __restrict__ out, int rows, int cols) {
    __shared__ float buf[RD_THREADS];
    rd_row<false>(x, out, rows, cols, buf);
}

// row_mean_f16: out[r] (f32) = mean_c x[r,c] for a [rows, cols] f16 matrix.
// block = (256,1,1); grid = (rows, 1, 1). Any rows, cols >= 1.
extern "C" __global__ void __launch_bounds__(RD_THREADS)
row_mean_f16(const u16* __restrict__ x, float* __restrict__ out, int rows, int cols) {
    __shared__ float buf[RD_THREADS];
    rd_row<true>(x, out, rows, cols, buf);
}

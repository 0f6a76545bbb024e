// elementwise.cu - pointwise operators (f16 unless noted, f32 math).
//
// NVRTC compiles it with no include path; the library prepends prelude.cuh
// (u16/u32, f16 conversions) when it compiles this file. f16 values are raw
// bits in unsigned short.
// Each thread handles 8 consecutive elements: a 16-byte vector access when
// the whole group is in bounds and n % 8 == 0 (so every group is aligned),
// otherwise a scalar tail loop. Threads past the end return at once.
// block = (256,1,1); grid = (ceil(n / 2048), 1, 1) for every entry here
// (2048 = 256 threads x 8 elements). Pointers 16-byte aligned.
// Determinism: pure per-element functions; results depend only on inputs.

#define EW_VEC 8

__device__ __forceinline__ void unpack8(const uint4 v, float (&f)[8]) {
    const u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        f[2 * j] = f16_to_f32((u16)(w[j] & 0xffffu));
        f[2 * j + 1] = f16_to_f32((u16)(w[j] >> 16));
    }
}
__device__ __forceinline__ uint4 pack8(const float (&f)[8]) {
    u32 w[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) w[j] = (u32)f32_to_f16(f[2 * j]) | ((u32)f32_to_f16(f[2 * j + 1]) << 16);
    return make_uint4(w[0], w[1], w[2], w[3]);
}

__device__ __forceinline__ float gelu_tanh(float x) {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    const float k0 = 0.7978845608028654f, k1 = 0.044715f;
    return 0.5f * x * (1.0f + tanhf(k0 * fmaf(k1 * x, x * x, x)));
}
__device__ __forceinline__ float silu(float x) { return x / (1.0f + __expf(-x)); }

// The binary entries' shared body: c[i] = op(a[i], b[i]) for i < n, in f32
// and rounded to f16, with the per-thread 8-element layout described at the
// top (vector path when n % 8 == 0).
template <class Op>
__device__ __forceinline__ void ew_binary(const u16* __restrict__ a, const u16* __restrict__ b, u16* __restrict__ c,
                                          int n, Op op) {
    const int i0 = (blockIdx.x * blockDim.x + threadIdx.x) * EW_VEC;
    if (i0 >= n) return;
    if ((n & 7) == 0) {
        float x[8], y[8];
        unpack8(*reinterpret_cast<const uint4*>(a + i0), x);
        unpack8(*reinterpret_cast<const uint4*>(b + i0), y);
#pragma unroll
        for (int j = 0; j < 8; ++j) x[j] = op(x[j], y[j]);
        *reinterpret_cast<uint4*>(c + i0) = pack8(x);
    } else {
        for (int i = i0; i < n && i < i0 + EW_VEC; ++i) c[i] = f32_to_f16(op(f16_to_f32(a[i]), f16_to_f32(b[i])));
    }
}

// add_f16: c[i] = a[i] + b[i], i < n.
extern "C" __global__ void __launch_bounds__(256)
add_f16(const u16* __restrict__ a, const u16* __restrict__ b, u16* __restrict__ c, int n) {
    ew_binary(a, b, c, n, [](float x, float y) { return x + y; });
}

// bias_relu_f16: y[r,c] = max(x[r,c] + bias[c], 0) on a [rows, cols]
// row-major matrix; n = rows*cols, cols > 0.
extern "C" __global__ void __launch_bounds__(256)
bias_relu_f16(const u16* __restrict__ x, const u16* __restrict__ bias, u16* __restrict__ y, int n, int cols) {
    const int i0 = (blockIdx.x * blockDim.x + threadIdx.x) * EW_VEC;
    if (i0 >= n) return;
    if ((n & 7) == 0 && (cols & 7) == 0) {
        // cols % 8 == 0: the 8 elements share a row and the bias slice is aligned.
        float v[8], bb[8];
        unpack8(*reinterpret_cast<const uint4*>(x + i0), v);
        unpack8(*reinterpret_cast<const uint4*>(bias + (i0 % cols)), bb);
#pragma unroll
        for (int j = 0; j < 8; ++j) v[j] = fmaxf(v[j] + bb[j], 0.0f);
        *reinterpret_cast<uint4*>(y + i0) = pack8(v);
    } else {
        for (int i = i0; i < n && i < i0 + EW_VEC; ++i)
            y[i] = f32_to_f16(fmaxf(f16_to_f32(x[i]) + f16_to_f32(bias[i % cols]), 0.0f));
    }
}

// gelu_tanh_f16: y[i] = gelu(x[i]) with the tanh approximation.
extern "C" __global__ void __launch_bounds__(256)
gelu_tanh_f16(const u16* __restrict__ x, u16* __restrict__ y, int n) {
    const int i0 = (blockIdx.x * blockDim.x + threadIdx.x) * EW_VEC;
    if (i0 >= n) return;
    if ((n & 7) == 0) {
        float v[8];
        unpack8(*reinterpret_cast<const uint4*>(x + i0), v);
#pragma unroll
        for (int j = 0; j < 8; ++j) v[j] = gelu_tanh(v[j]);
        *reinterpret_cast<uint4*>(y + i0) = pack8(v);
    } else {
        for (int i = i0; i < n && i < i0 + EW_VEC; ++i) y[i] = f32_to_f16(gelu_tanh(f16_to_f32(x[i])));
    }
}

// silu_mul_f16: y[i] = silu(gate[i]) * up[i]  (SwiGLU MLP activation).
extern "C" __global__ void __launch_bounds__(256)
silu_mul_f16(const u16* __restrict__ gate, const u16* __restrict__ up, u16* __restrict__ y, int n) {
    ew_binary(gate, up, y, n, [](float g, float u) { return silu(g) * u; });
}

// cast_f32_to_f16: y[i] = (f16) x[i], round to nearest even.
extern "C" __global__ void __launch_bounds__(256)
cast_f32_to_f16(const float* __restrict__ x, u16* __restrict__ y, int n) {
    const int i0 = (blockIdx.x * blockDim.x + threadIdx.x) * EW_VEC;
    if (i0 >= n) return;
    if ((n & 7) == 0) {
        const float4 lo = *reinterpret_cast<const float4*>(x + i0);
        const float4 hi = *reinterpret_cast<const float4*>(x + i0 + 4);
        const float v[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
        *reinterpret_cast<uint4*>(y + i0) = pack8(v);
    } else {
        for (int i = i0; i < n && i < i0 + EW_VEC; ++i) y[i] = f32_to_f16(x[i]);
    }
}

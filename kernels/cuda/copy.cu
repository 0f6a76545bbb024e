// copy.cu - vectorised device-to-device copy.
//
// Uses nothing from prelude.cuh, which the library prepends to every file
// when it compiles it (NVRTC, no include path). Determinism: trivially,
// dst == src.

// copy_f32_vec: dst[i] = src[i] for i < n (f32 elements; any 4-byte data).
//   Each block owns a contiguous span of 4096 floats (so the mapping does
//   not depend on gridDim); thread t moves float4s t, t+256, t+512, t+768
//   of it, so each warp-wide access is a contiguous 512 bytes. The last
//   n % 4 floats are copied with scalar accesses. src/dst 16-byte aligned,
//   non-overlapping.
// block = (256,1,1); grid = (ceil(n/4096), 1, 1).
extern "C" __global__ void __launch_bounds__(256)
copy_f32_vec(const float* __restrict__ src, float* __restrict__ dst, int n) {
    const int base = blockIdx.x * 4096;
    const int n4 = n >> 2;  // whole float4s in the buffer
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const int e = base + (threadIdx.x + j * 256) * 4;  // first float of this vector
        if (e >= n) return;  // later vectors of this thread are further on
        if ((e >> 2) < n4) {
            reinterpret_cast<float4*>(dst)[e >> 2] = reinterpret_cast<const float4*>(src)[e >> 2];
        } else {
            for (int i = e; i < n; ++i) dst[i] = src[i];  // last 1..3 floats
        }
    }
}

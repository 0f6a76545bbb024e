// conv.cu - 2-D convolutions (NHWC, f16 in/out, f32 accumulation).
//
// NVRTC compiles it with no include path; the library prepends prelude.cuh
// (u16/u32, f16 conversions, the mma wrapper and the warp-tile k-step shared
// with gemm.cu) when it compiles this file. f16 values are raw bits in
// unsigned short.
// Determinism: each block computes a fixed output tile from the inputs and
// its blockIdx only, with a fixed reduction order.

// ---------------------------------------------------------------------------
// Implicit-GEMM convolution on tensor cores.
//   in  [N,H,W,C]  f16 (NHWC)
//   w   [K,R,S,C]  f16 (KRSC: one filter per output channel)
//   out [N,P,Q,K]  f16 (NHWC), P = (H + 2*pad_h - R)/stride_h + 1, same for Q.
// As a GEMM: M = N*P*Q output pixels, Ngemm = K, Kgemm = R*S*C. The A tile
// (pixels x filter taps) is gathered from the input on the fly, with zeros
// for padding; the B tile is a 64-row slice of w, which is already the
// column-major B that mma .row.col wants, so it is stored as Bs[k_out][tap].
// Block tile 64 pixels x 64 output channels x 32 taps, 4 warps (2x2, 32x32
// each), register prefetch of the next tap tile, dilation 1, groups 1.
//
// Shapes: any sizes. C % 8 == 0 gives 16-byte gathers (8 channels of one
// tap); otherwise a scalar gather is used. R*S*C % 8 == 0 gives 16-byte
// weight loads. Pointers 16-byte aligned.
// block = (128,1,1); grid = (ceil(K/64), ceil(N*P*Q/64), 1).
// ---------------------------------------------------------------------------
#define CV_BM 64
#define CV_BN 64
#define CV_BK 32
#define CV_PAD 8
#define CV_THREADS 128

struct CvPixel {
    const u16* img;  // start of this pixel's image, or nullptr if pixel >= M
    int ih0, iw0;    // top-left input coordinate of its receptive field
};

__device__ __forceinline__ CvPixel cv_pixel(const u16* in, int mrow, int M, int H, int W, int C, int P, int Q,
                                            int sh, int sw, int ph, int pw) {
    CvPixel px;
    if (mrow >= M) {
        px.img = nullptr;
        px.ih0 = px.iw0 = 0;
        return px;
    }
    const int q = mrow % Q;
    const int t = mrow / Q;
    const int p = t % P;
    const int nimg = t / P;
    px.img = in + (size_t)nimg * H * W * C;
    px.ih0 = p * sh - ph;
    px.iw0 = q * sw - pw;
    return px;
}

__device__ __forceinline__ u16 cv_tap(const CvPixel& px, int kk, int Kg, int H, int W, int C, int S) {
    if (kk >= Kg) return 0;
    const int c = kk % C;
    const int rs = kk / C;
    const int ih = px.ih0 + rs / S;
    const int iw = px.iw0 + rs % S;
    if (ih < 0 || ih >= H || iw < 0 || iw >= W) return 0;
    return px.img[((size_t)ih * W + iw) * C + c];
}

// 8 consecutive taps kk..kk+7 of one output pixel.
__device__ __forceinline__ uint4 cv_load_a(const CvPixel& px, int kk, int Kg, int H, int W, int C, int S) {
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (px.img == nullptr || kk >= Kg) return v;
    if ((C & 7) == 0) {
        // kk % 8 == 0 and C % 8 == 0: all 8 taps share (r, s) and are
        // contiguous channels, so one aligned 16-byte load (or zero padding).
        const int c = kk % C;
        const int rs = kk / C;
        const int ih = px.ih0 + rs / S;
        const int iw = px.iw0 + rs % S;
        if (ih >= 0 && ih < H && iw >= 0 && iw < W)
            v = *reinterpret_cast<const uint4*>(px.img + ((size_t)ih * W + iw) * C + c);
    } else {
        u32 w[4];
#pragma unroll
        for (int j = 0; j < 4; ++j)
            w[j] = (u32)cv_tap(px, kk + 2 * j, Kg, H, W, C, S) | ((u32)cv_tap(px, kk + 2 * j + 1, Kg, H, W, C, S) << 16);
        v = make_uint4(w[0], w[1], w[2], w[3]);
    }
    return v;
}

// 8 consecutive taps of filter `ko`.
__device__ __forceinline__ uint4 cv_load_b(const u16* __restrict__ wt, int ko, int K, int kk, int Kg) {
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (ko >= K || kk >= Kg) return v;
    const u16* p = wt + (size_t)ko * Kg + kk;
    if ((Kg & 7) == 0) {
        v = *reinterpret_cast<const uint4*>(p);
    } else {
        v = load8_zero_fill(p, kk, Kg);
    }
    return v;
}

// conv2d_implicit_gemm_f16: see the block comment above for layout and launch.
extern "C" __global__ void __launch_bounds__(CV_THREADS)
conv2d_implicit_gemm_f16(const u16* __restrict__ in, const u16* __restrict__ wt, u16* __restrict__ out,
                         int N, int H, int W, int C, int K, int R, int S, int P, int Q,
                         int stride_h, int stride_w, int pad_h, int pad_w) {
    __shared__ __align__(16) u16 As[CV_BM][CV_BK + CV_PAD];
    __shared__ __align__(16) u16 Bs[CV_BN][CV_BK + CV_PAD];
    (void)R;

    const int M = N * P * Q;
    const int Kg = R * S * C;
    const int tid = threadIdx.x;
    const int lane = tid & 31, warp = tid >> 5;
    const int wm = (warp >> 1) * 32, wn = (warp & 1) * 32;
    const int g = lane >> 2, t = lane & 3;
    const int bm = blockIdx.y * CV_BM, bn = blockIdx.x * CV_BN;

    // Each thread gathers two (row, 8-tap) chunks of A and two of B per tile.
    const int r0 = tid >> 2, c0 = (tid & 3) * 8;
    const int r1 = (tid + CV_THREADS) >> 2, c1 = ((tid + CV_THREADS) & 3) * 8;
    const CvPixel px0 = cv_pixel(in, bm + r0, M, H, W, C, P, Q, stride_h, stride_w, pad_h, pad_w);
    const CvPixel px1 = cv_pixel(in, bm + r1, M, H, W, C, P, Q, stride_h, stride_w, pad_h, pad_w);

    float acc[2][4][4];
    warp_tile_zero(acc);

    const int ktiles = (Kg + CV_BK - 1) / CV_BK;
    uint4 ra0 = cv_load_a(px0, c0, Kg, H, W, C, S);
    uint4 ra1 = cv_load_a(px1, c1, Kg, H, W, C, S);
    uint4 rb0 = cv_load_b(wt, bn + r0, K, c0, Kg);
    uint4 rb1 = cv_load_b(wt, bn + r1, K, c1, Kg);

    for (int kt = 0; kt < ktiles; ++kt) {
        *reinterpret_cast<uint4*>(&As[r0][c0]) = ra0;
        *reinterpret_cast<uint4*>(&As[r1][c1]) = ra1;
        *reinterpret_cast<uint4*>(&Bs[r0][c0]) = rb0;
        *reinterpret_cast<uint4*>(&Bs[r1][c1]) = rb1;
        __syncthreads();

        if (kt + 1 < ktiles) {
            const int k0 = (kt + 1) * CV_BK;
            ra0 = cv_load_a(px0, k0 + c0, Kg, H, W, C, S);
            ra1 = cv_load_a(px1, k0 + c1, Kg, H, W, C, S);
            rb0 = cv_load_b(wt, bn + r0, K, k0 + c0, Kg);
            rb1 = cv_load_b(wt, bn + r1, K, k0 + c1, Kg);
        }

        warp_tile_mma<false, CV_BK>(acc, As, Bs, wm, wn, g, t);
        __syncthreads();
    }

    // Epilogue: out [M, K] (pixels x output channels) = acc, rounded to f16.
    warp_tile_store(out, M, K, acc, bm, bn, wm, wn, g, t, [](float a) { return a; });
}

// ---------------------------------------------------------------------------
// conv2d_depthwise_f16: direct depthwise convolution (channel multiplier 1).
//   in [N,H,W,C] f16, w [R,S,C] f16, out [N,P,Q,C] f16, f32 accumulation.
// One thread per output element; threads of a block walk (q, c) of one
// output row with c fastest, so loads and stores coalesce along channels.
// block = (256,1,1); grid = (ceil(Q*C/256), P, N)  (3-D grid).
// ---------------------------------------------------------------------------
extern "C" __global__ void __launch_bounds__(256)
conv2d_depthwise_f16(const u16* __restrict__ in, const u16* __restrict__ wt, u16* __restrict__ out,
                     int N, int H, int W, int C, int R, int S, int P, int Q,
                     int stride_h, int stride_w, int pad_h, int pad_w) {
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= Q * C) return;
    const int c = idx % C;
    const int q = idx / C;
    const int p = blockIdx.y;
    const int nimg = blockIdx.z;
    (void)N;
    const u16* img = in + (size_t)nimg * H * W * C;
    const int ih0 = p * stride_h - pad_h;
    const int iw0 = q * stride_w - pad_w;
    float acc = 0.0f;
    for (int r = 0; r < R; ++r) {
        const int ih = ih0 + r;
        if (ih < 0 || ih >= H) continue;
        for (int s = 0; s < S; ++s) {
            const int iw = iw0 + s;
            if (iw < 0 || iw >= W) continue;
            acc = fmaf(f16_to_f32(img[((size_t)ih * W + iw) * C + c]), f16_to_f32(wt[(r * S + s) * C + c]), acc);
        }
    }
    out[(((size_t)nimg * P + p) * Q + q) * C + c] = f32_to_f16(acc);
}

// prelude.cuh - definitions shared by the files of the Tally kernel library.
//
// NVRTC compiles each library file on its own with no include path, so no
// file can #include this one. Instead `kernels/src/library.rs` prepends it to
// every .cu file at build time (`concat!` of the two `include_str!`s), and
// `library::SOURCES` holds the complete text NVRTC compiles. Everything here
// is a typedef, a `__forceinline__` function or a template, so it emits no
// PTX of its own: a file's PTX holds only what that file uses.

// f16 and bf16 values travel as their raw 16-bit patterns (no cuda_fp16.h
// without an include path); two of them pack into one 32-bit word, which is
// also the register type of the mma operands.
typedef unsigned short u16;
typedef unsigned int u32;

// f16 -> f32, exact. Inline PTX because the cuda_fp16.h intrinsics are not
// available.
__device__ __forceinline__ float f16_to_f32(u16 h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

// f32 -> f16, rounded to nearest even (the rounding every kernel's f16
// output uses).
__device__ __forceinline__ u16 f32_to_f16(float f) {
    u16 h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}

// Eight consecutive halves p[0..7], packed two per 32-bit word (even index
// in the low half), for the ragged edge of a row: they stand at positions
// col..col+7 of a row of `len` halves, and those at positions >= len are
// zero and not read. The GEMM and conv tile loaders' scalar fallback.
__device__ __forceinline__ uint4 load8_zero_fill(const u16* p, int col, int len) {
    u32 w[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        u32 lo = (col + 2 * j < len) ? (u32)p[2 * j] : 0u;
        u32 hi = (col + 2 * j + 1 < len) ? (u32)p[2 * j + 1] : 0u;
        w[j] = lo | (hi << 16);
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}

// One tensor-core product c += a x b, mma.sync m16n8k16 .row.col with f32
// accumulation, on bf16 (BF16) or f16 operands; a and b are the per-thread
// fragments of the PTX ISA's m16n8k16 layout. Used by the GEMMs (f16 and
// bf16) and the implicit-GEMM conv (f16).
template <bool BF16>
__device__ __forceinline__ void mma_m16n8k16(float (&c)[4], const u32 (&a)[4], const u32 (&b)[2]) {
    if (BF16) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
            "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    } else {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
            "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
}

// The tensor-core tile kernels (gemm_f16_mma, gemm_bf16_mma,
// conv2d_implicit_gemm_f16) share one tiling: 4 warps in a 2x2 layout, each
// owning a 32x32 sub-tile of the block's output = 2 (m16) x 4 (n8) mma
// tiles, with f32 accumulators acc[mi][ni][e]. The two helpers below are
// that tiling's common parts; g = lane >> 2 and t = lane & 3 are the mma
// "groupID" and "threadID_in_group", (wm, wn) the warp's offset in the
// block tile.

// Zeroes a warp sub-tile's accumulators before the k loop.
__device__ __forceinline__ void warp_tile_zero(float (&acc)[2][4][4]) {
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
}

// Multiplies one staged k-tile (BK columns of k, a multiple of 16) into a
// warp's accumulators: As[m][k] holds the block's A rows and Bs[n][k] its B
// columns (B transposed), both padded rows of LD halves, so each fragment
// register is an aligned 32-bit pair along k. For each 16-wide k step it
// reads the A fragments of both m16 tiles, then the B fragments of all four
// n8 tiles, then issues the 8 mma in (mi, ni) order; the k order, and so the
// accumulation order, is fixed.
template <bool BF16, int BK, int BM, int BN, int LD>
__device__ __forceinline__ void warp_tile_mma(float (&acc)[2][4][4], const u16 (&As)[BM][LD], const u16 (&Bs)[BN][LD],
                                              int wm, int wn, int g, int t) {
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
        u32 af[2][4];
        u32 bfr[4][2];
#pragma unroll
        for (int mi = 0; mi < 2; ++mi) {
            const int r = wm + mi * 16 + g;
            af[mi][0] = *reinterpret_cast<const u32*>(&As[r][kk + 2 * t]);
            af[mi][1] = *reinterpret_cast<const u32*>(&As[r + 8][kk + 2 * t]);
            af[mi][2] = *reinterpret_cast<const u32*>(&As[r][kk + 2 * t + 8]);
            af[mi][3] = *reinterpret_cast<const u32*>(&As[r + 8][kk + 2 * t + 8]);
        }
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) {
            const int c = wn + ni * 8 + g;
            bfr[ni][0] = *reinterpret_cast<const u32*>(&Bs[c][kk + 2 * t]);
            bfr[ni][1] = *reinterpret_cast<const u32*>(&Bs[c][kk + 2 * t + 8]);
        }
#pragma unroll
        for (int mi = 0; mi < 2; ++mi)
#pragma unroll
            for (int ni = 0; ni < 4; ++ni) mma_m16n8k16<BF16>(acc[mi][ni], af[mi], bfr[ni]);
    }
}

// The epilogue's stores of f32 results into the output C: one element, or
// two adjacent ones p[0], p[1] as one aligned store (p 4-byte aligned for
// f16, 8-byte for f32). f16 outputs are rounded to nearest even here, so a
// value is converted only on the path that stores it.
__device__ __forceinline__ void store_one(u16* p, float v) { *p = f32_to_f16(v); }
__device__ __forceinline__ void store_one(float* p, float v) { *p = v; }
__device__ __forceinline__ void store_pair(u16* p, float v0, float v1) {
    *reinterpret_cast<u32*>(p) = (u32)f32_to_f16(v0) | ((u32)f32_to_f16(v1) << 16);
}
__device__ __forceinline__ void store_pair(float* p, float v0, float v1) {
    *reinterpret_cast<float2*>(p) = make_float2(v0, v1);
}

// The tile epilogue: writes a warp's accumulators, each passed through
// `scale` (f32 -> f32: the GEMMs' alpha, the identity for conv), into the
// row-major [rows, cols] output C (T = u16 for f16, float for f32). The
// block tile starts at (bm, bn) of C and the warp's sub-tile at (wm, wn)
// within it; acc[mi][ni][e] sits at row bm + wm + 16 mi + g (+8 for e >= 2),
// column bn + wn + 8 ni + 2t + (e & 1). Elements outside C are not written.
// When cols is even, row * cols + col is even, so an in-range pair of
// columns goes out as one aligned store_pair; otherwise element by element.
template <class T, class F>
__device__ __forceinline__ void warp_tile_store(T* C, int rows, int cols, const float (&acc)[2][4][4], int bm, int bn,
                                                int wm, int wn, int g, int t, F scale) {
    const bool pair_ok = (cols & 1) == 0;
#pragma unroll
    for (int mi = 0; mi < 2; ++mi) {
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) {
            const int col = bn + wn + ni * 8 + 2 * t;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = bm + wm + mi * 16 + g + h * 8;
                if (row >= rows || col >= cols) continue;
                const float v0 = scale(acc[mi][ni][2 * h]);
                const float v1 = scale(acc[mi][ni][2 * h + 1]);
                const size_t off = (size_t)row * (size_t)cols + col;
                if (pair_ok && col + 1 < cols) {
                    store_pair(C + off, v0, v1);
                } else {
                    store_one(C + off, v0);
                    if (col + 1 < cols) store_one(C + off + 1, v1);
                }
            }
        }
    }
}

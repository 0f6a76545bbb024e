// attention.cu - flash-style attention forward, head_dim 64.
//
// NVRTC compiles it with no include path; the library prepends prelude.cuh
// (u16/u32, f16 conversions) when it compiles this file. f16 values are raw
// bits in unsigned short.
// Determinism: one block owns one (batch*head, 16-query tile); it walks the
// key/value sequence in a fixed order, so outputs are bit-reproducible.

#define AT_D 64        // head dimension (fixed)
#define AT_BQ 16       // query rows per block
#define AT_BKV 64      // keys per shared-memory tile
#define AT_TPR 8       // threads per query row
#define AT_THREADS (AT_BQ * AT_TPR)  // 128

// flash_attn_fwd_f16: O = softmax(scale * Q K^T [+ causal mask]) V.
//   Q [BH, q_len, 64], K and V [BH, kv_len, 64], O [BH, q_len, 64]; f16,
//   contiguous, 16-byte aligned; f32 math.
//   causal != 0: query i sees key j iff j <= i + (kv_len - q_len) (aligned
//   to the end, so q_len == 1 decoding against a KV cache sees every key).
//   A query row that sees no key gets zeros.
// block = (128,1,1); grid = (ceil(q_len/16), BH, 1)  (2-D grid).
//
// Each query row is owned by 8 adjacent lanes. Per 64-key tile staged in
// shared memory (as f32): lane l scores keys l, l+8, ... (full 64-dim dots),
// the row max/sum are combined over the 8 lanes with __shfl_xor_sync, the
// online-softmax state (m, l) rescales the running output, and lane l
// accumulates output dims l, l+8, ..., l+56 (interleaved so the V reads of
// the 8 lanes hit 8 different banks). Rows are padded to 65 floats so that
// the per-lane key reads are conflict-free. Threads whose query row is past
// q_len keep joining the barriers but skip the math.
extern "C" __global__ void __launch_bounds__(AT_THREADS)
flash_attn_fwd_f16(const u16* __restrict__ Q, const u16* __restrict__ K, const u16* __restrict__ V,
                   u16* __restrict__ O, int q_len, int kv_len, float scale, int causal) {
    __shared__ float Qs[AT_BQ][AT_D + 1];
    __shared__ float Ks[AT_BKV][AT_D + 1];
    __shared__ float Vs[AT_BKV][AT_D];
    __shared__ float Ps[AT_BQ][AT_BKV];

    const int tid = threadIdx.x;
    const int r = tid / AT_TPR;  // query row within the tile
    const int l = tid % AT_TPR;  // lane within the row group
    const int q0 = blockIdx.x * AT_BQ;
    const int bh = blockIdx.y;
    const int qi = q0 + r;
    const bool active = qi < q_len;
    const size_t qbase = (size_t)bh * q_len * AT_D;
    const size_t kbase = (size_t)bh * kv_len * AT_D;
    const float NEG_INF = __int_as_float(0xff800000);
    const float sl2 = scale * 1.4426950408889634f;  // work in base 2
    const int shift = kv_len - q_len;

    // Stage the query tile: 16 rows x 8 chunks of 8 halves = one chunk each.
    {
        const int cr = tid >> 3, cc = (tid & 7) * 8;
        uint4 v = make_uint4(0u, 0u, 0u, 0u);
        if (q0 + cr < q_len) v = *reinterpret_cast<const uint4*>(Q + qbase + (size_t)(q0 + cr) * AT_D + cc);
        const u32 w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            Qs[cr][cc + 2 * j] = f16_to_f32((u16)(w[j] & 0xffffu));
            Qs[cr][cc + 2 * j + 1] = f16_to_f32((u16)(w[j] >> 16));
        }
    }

    // Keys past this bound are masked for every row of the tile: skip them.
    int kv_end = kv_len;
    if (causal) {
        const int last_q = min(q0 + AT_BQ, q_len) - 1;
        kv_end = max(0, min(kv_len, last_q + shift + 1));
    }

    float o[AT_D / AT_TPR];
#pragma unroll
    for (int e = 0; e < AT_D / AT_TPR; ++e) o[e] = 0.0f;
    float m_run = NEG_INF, l_run = 0.0f;
    const int my_end = causal ? min(kv_len, qi + shift + 1) : kv_len;  // keys this row may see
    // Lanes of inactive rows skip the math, so the row-group shuffles and
    // the warp sync name only the active lanes (whole 8-lane groups).
    const unsigned amask = __ballot_sync(0xffffffffu, active);

    for (int k0 = 0; k0 < kv_end; k0 += AT_BKV) {
        __syncthreads();  // previous tile fully consumed (and Qs written, first time)
        // Stage K and V: 64 rows x 8 chunks each = 4 chunks per thread per tensor.
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int ch = tid + i * AT_THREADS;
            const int kr = ch >> 3, kc = (ch & 7) * 8;
            uint4 kv = make_uint4(0u, 0u, 0u, 0u), vv = make_uint4(0u, 0u, 0u, 0u);
            if (k0 + kr < kv_len) {
                const size_t off = kbase + (size_t)(k0 + kr) * AT_D + kc;
                kv = *reinterpret_cast<const uint4*>(K + off);
                vv = *reinterpret_cast<const uint4*>(V + off);
            }
            const u32 kw[4] = {kv.x, kv.y, kv.z, kv.w};
            const u32 vw[4] = {vv.x, vv.y, vv.z, vv.w};
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                Ks[kr][kc + 2 * j] = f16_to_f32((u16)(kw[j] & 0xffffu));
                Ks[kr][kc + 2 * j + 1] = f16_to_f32((u16)(kw[j] >> 16));
                Vs[kr][kc + 2 * j] = f16_to_f32((u16)(vw[j] & 0xffffu));
                Vs[kr][kc + 2 * j + 1] = f16_to_f32((u16)(vw[j] >> 16));
            }
        }
        __syncthreads();

        if (active) {
            // Scores for keys l, l+8, ..., l+56 of this tile (base-2 logits).
            float s[AT_BKV / AT_TPR];
            float tmax = NEG_INF;
#pragma unroll
            for (int jj = 0; jj < AT_BKV / AT_TPR; ++jj) {
                const int j = l + jj * AT_TPR;
                float dot = 0.0f;
#pragma unroll 16
                for (int d = 0; d < AT_D; ++d) dot = fmaf(Qs[r][d], Ks[j][d], dot);
                s[jj] = (k0 + j < my_end) ? dot * sl2 : NEG_INF;
                tmax = fmaxf(tmax, s[jj]);
            }
            // The 8 lanes of a row are adjacent and 8-aligned: xor 1,2,4 stays
            // inside the group, all of whose lanes are in amask.
#pragma unroll
            for (int off = 1; off < AT_TPR; off <<= 1) tmax = fmaxf(tmax, __shfl_xor_sync(amask, tmax, off, AT_TPR));
            const float m_new = fmaxf(m_run, tmax);
            // m_new == -inf: nothing visible yet; keep the state unchanged.
            const float alpha = (m_new == NEG_INF) ? 1.0f : exp2f(m_run - m_new);
            float psum = 0.0f;
#pragma unroll
            for (int jj = 0; jj < AT_BKV / AT_TPR; ++jj) {
                const float p = (s[jj] == NEG_INF) ? 0.0f : exp2f(s[jj] - m_new);
                Ps[r][l + jj * AT_TPR] = p;
                psum += p;
            }
#pragma unroll
            for (int off = 1; off < AT_TPR; off <<= 1) psum += __shfl_xor_sync(amask, psum, off, AT_TPR);
            l_run = l_run * alpha + psum;
            m_run = m_new;
            __syncwarp(amask);  // Ps[r] is written and read by the same 8 lanes of one warp
            const int jn = min(AT_BKV, kv_end - k0);
#pragma unroll
            for (int e = 0; e < AT_D / AT_TPR; ++e) o[e] *= alpha;
            for (int j = 0; j < jn; ++j) {
                const float p = Ps[r][j];
#pragma unroll
                for (int e = 0; e < AT_D / AT_TPR; ++e) o[e] = fmaf(p, Vs[j][l + e * AT_TPR], o[e]);
            }
        }
    }

    if (!active) return;
    const float inv = (l_run > 0.0f) ? 1.0f / l_run : 0.0f;
    u16* orow = O + qbase + (size_t)qi * AT_D;
#pragma unroll
    for (int e = 0; e < AT_D / AT_TPR; ++e) orow[l + e * AT_TPR] = f32_to_f16(o[e] * inv);
}

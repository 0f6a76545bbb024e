// embedding.cu - embedding-table gather.
//
// NVRTC compiles it with no include path; the library prepends prelude.cuh
// (u16) when it compiles this file. f16 values are raw bits in unsigned short.
// Determinism: pure gather; each output element depends only on the inputs.

// embedding_gather_f16: out[t, :] = table[ids[t], :] for t < n_tokens;
//   ids [n_tokens] i32, table [vocab, dim] f16, out [n_tokens, dim] f16.
//   An id outside [0, vocab) yields a zero row (no out-of-bounds read).
// Each thread moves 8 halves (16-byte vectors when dim % 8 == 0).
// block = (128,1,1); grid = (ceil(dim/1024), n_tokens, 1)  (2-D grid).
extern "C" __global__ void __launch_bounds__(128)
embedding_gather_f16(const int* __restrict__ ids, const u16* __restrict__ table, u16* __restrict__ out,
                     int n_tokens, int dim, int vocab) {
    const int tok = blockIdx.y;
    const int c0 = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
    if (tok >= n_tokens || c0 >= dim) return;
    const int id = ids[tok];
    const bool valid = id >= 0 && id < vocab;
    const u16* src = table + (size_t)(valid ? id : 0) * dim;
    u16* dst = out + (size_t)tok * dim;
    if ((dim & 7) == 0) {
        const uint4 v = valid ? *reinterpret_cast<const uint4*>(src + c0) : make_uint4(0u, 0u, 0u, 0u);
        *reinterpret_cast<uint4*>(dst + c0) = v;
    } else {
        for (int c = c0; c < dim && c < c0 + 8; ++c) dst[c] = valid ? src[c] : (u16)0;
    }
}

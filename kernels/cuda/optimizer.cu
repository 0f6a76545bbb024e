// optimizer.cu - fused optimizer steps (f32).
//
// Uses nothing from prelude.cuh, which the library prepends to every file
// when it compiles it (NVRTC, no include path). Determinism: pure
// per-element update.

// adam_step_f32: one fused Adam/AdamW step over n parameters, in place.
//   m = b1*m + (1-b1)*g;  v = b2*v + (1-b2)*g*g
//   p -= lr * ( (m/bc1) / (sqrt(v/bc2) + eps) + weight_decay * p )
//   with bc1 = 1 - b1^step and bc2 = 1 - b2^step computed on the host (so
//   the kernel carries no pow and every launch of a step is identical).
//   weight_decay is decoupled (AdamW); pass 0 for plain Adam.
// Each thread updates 4 elements (float4 when n % 4 == 0, else scalar).
// block = (256,1,1); grid = (ceil(n/1024), 1, 1).
__device__ __forceinline__ void adam_one(float& p, float g, float& m, float& v, float lr, float b1, float b2,
                                         float eps, float wd, float inv_bc1, float inv_bc2) {
    m = fmaf(b1, m, (1.0f - b1) * g);
    v = fmaf(b2, v, (1.0f - b2) * g * g);
    const float mhat = m * inv_bc1;
    const float vhat = v * inv_bc2;
    p -= lr * (mhat / (sqrtf(vhat) + eps) + wd * p);
}

extern "C" __global__ void __launch_bounds__(256)
adam_step_f32(float* __restrict__ param, const float* __restrict__ grad, float* __restrict__ exp_avg,
              float* __restrict__ exp_avg_sq, int n, float lr, float beta1, float beta2, float eps,
              float weight_decay, float bias_correction1, float bias_correction2) {
    const int i0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (i0 >= n) return;
    const float ib1 = 1.0f / bias_correction1, ib2 = 1.0f / bias_correction2;
    if ((n & 3) == 0) {
        float4 p = *reinterpret_cast<float4*>(param + i0);
        const float4 g = *reinterpret_cast<const float4*>(grad + i0);
        float4 m = *reinterpret_cast<float4*>(exp_avg + i0);
        float4 v = *reinterpret_cast<float4*>(exp_avg_sq + i0);
        adam_one(p.x, g.x, m.x, v.x, lr, beta1, beta2, eps, weight_decay, ib1, ib2);
        adam_one(p.y, g.y, m.y, v.y, lr, beta1, beta2, eps, weight_decay, ib1, ib2);
        adam_one(p.z, g.z, m.z, v.z, lr, beta1, beta2, eps, weight_decay, ib1, ib2);
        adam_one(p.w, g.w, m.w, v.w, lr, beta1, beta2, eps, weight_decay, ib1, ib2);
        *reinterpret_cast<float4*>(param + i0) = p;
        *reinterpret_cast<float4*>(exp_avg + i0) = m;
        *reinterpret_cast<float4*>(exp_avg_sq + i0) = v;
    } else {
        for (int i = i0; i < n && i < i0 + 4; ++i)
            adam_one(param[i], grad[i], exp_avg[i], exp_avg_sq[i], lr, beta1, beta2, eps, weight_decay, ib1, ib2);
    }
}

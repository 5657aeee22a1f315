// Row i of x (k values) times w, negative products dropped, summed in order; the sum starts
// at -0.0 like Rust's `Sum for f32`. Counterpart of `ours::iter_chain` (an iterator chain).
extern "C" __global__ void iter_chain(const float* __restrict__ x, const float* __restrict__ w,
                                      unsigned int k, float* __restrict__ out, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float* row = x + (size_t)i * k;
        float acc = -0.0f;
        for (unsigned int j = 0; j < k; ++j) {
            float p = row[j] * w[j];
            if (p > 0.0f) {
                acc += p;
            }
        }
        out[i] = acc;
    }
}

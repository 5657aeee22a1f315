// The naive SGEMM: one output per thread, c = a x b (a is m x k, b is k x n), 2-D grid of
// 16 x 16 blocks. Counterpart of `ours::sgemm_naive_fmad` (sgemm_naive.cu under the name of the benchmark with `#[kernel(fmad)]`).
extern "C" __global__ void sgemm_naive_fmad(const float* __restrict__ a, const float* __restrict__ b,
                                       float* __restrict__ c, unsigned int m, unsigned int n,
                                       unsigned int k) {
    size_t row = blockIdx.y * blockDim.y + threadIdx.y;
    size_t col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m && col < n) {
        float sum = 0.0f;
        for (size_t i = 0; i < k; ++i) {
            sum += a[row * k + i] * b[i * n + col];
        }
        c[row * n + col] = sum;
    }
}

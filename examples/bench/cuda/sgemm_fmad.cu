// c = a x b for n x n row-major matrices: 16 x 16 shared tiles, one output per thread,
// 2-D grid of 16 x 16 blocks. Counterpart of `ours::sgemm_fmad` (sgemm.cu under the name of the benchmark that compares it with `#[kernel(fmad)]`).
#define T 16
extern "C" __global__ void sgemm_fmad(const float* __restrict__ a, const float* __restrict__ b,
                                 unsigned int n, float* __restrict__ c) {
    __shared__ float as[T * T];
    __shared__ float bs[T * T];
    unsigned int tx = threadIdx.x, ty = threadIdx.y;
    unsigned int row = blockIdx.y * T + ty;
    unsigned int col = blockIdx.x * T + tx;
    float acc = 0.0f;
    for (unsigned int k0 = 0; k0 < n; k0 += T) {
        as[ty * T + tx] = (row < n && k0 + tx < n) ? a[(size_t)row * n + k0 + tx] : 0.0f;
        bs[ty * T + tx] = (k0 + ty < n && col < n) ? b[(size_t)(k0 + ty) * n + col] : 0.0f;
        __syncthreads();
        for (unsigned int k = 0; k < T; ++k) {
            acc += as[ty * T + k] * bs[k * T + tx];
        }
        __syncthreads();
    }
    if (row < n && col < n) {
        c[(size_t)row * n + col] = acc;
    }
}

// PolyBench/GPU (Grauer-Gray et al., "Auto-tuning a high-level language targeted to GPU
// codes", InPar 2012), written here from the published algorithm: its standard sizes and
// constants, float data, 32 x 8 blocks for 2-D kernels and 256 threads for 1-D ones.
// atax: tmp = a x x, then y = a^T x tmp. Counterpart of `ours::pb_atax`.
#define N 4096
extern "C" __global__ void pb_atax(const float* __restrict__ a, const float* __restrict__ x,
                                   float* __restrict__ tmp) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        for (int j = 0; j < N; j++) {
            tmp[i] += a[i * N + j] * x[j];
        }
    }
}
extern "C" __global__ void pb_atax_2(const float* __restrict__ a, const float* __restrict__ tmp,
                                     float* __restrict__ y) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < N) {
        for (int i = 0; i < N; i++) {
            y[j] += a[i * N + j] * tmp[i];
        }
    }
}

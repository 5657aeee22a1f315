// PolyBench/GPU (Grauer-Gray et al., "Auto-tuning a high-level language targeted to GPU
// codes", InPar 2012), written here from the published algorithm: its standard sizes and
// constants, float data, 32 x 8 blocks for 2-D kernels and 256 threads for 1-D ones.
// gesummv: y = alpha * a x x + beta * b x x. Counterpart of `ours::pb_gesummv`.
#define N 4096
#define ALPHA 43532.0f
#define BETA 12313.0f
extern "C" __global__ void pb_gesummv(const float* __restrict__ a, const float* __restrict__ b,
                                      const float* __restrict__ x, float* __restrict__ y,
                                      float* __restrict__ tmp) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        for (int j = 0; j < N; j++) {
            tmp[i] += a[i * N + j] * x[j];
            y[i] += b[i * N + j] * x[j];
        }
        y[i] = ALPHA * tmp[i] + BETA * y[i];
    }
}

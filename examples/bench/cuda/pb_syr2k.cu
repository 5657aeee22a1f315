// PolyBench/GPU (Grauer-Gray et al., "Auto-tuning a high-level language targeted to GPU
// codes", InPar 2012), written here from the published algorithm: its standard sizes and
// constants, float data, 32 x 8 blocks for 2-D kernels and 256 threads for 1-D ones.
// syr2k: c = alpha * a x b^T + alpha * b x a^T + beta * c. Counterpart of `ours::pb_syr2k`.
#define N 2048
#define ALPHA 12435.0f
#define BETA 4546.0f
extern "C" __global__ void pb_syr2k(const float* __restrict__ a, const float* __restrict__ b,
                                    float* __restrict__ c) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < N && j < N) {
        c[i * N + j] *= BETA;
        for (int k = 0; k < N; k++) {
            c[i * N + j] += ALPHA * a[i * N + k] * b[j * N + k] + ALPHA * b[i * N + k] * a[j * N + k];
        }
    }
}

// PolyBench/GPU (Grauer-Gray et al., "Auto-tuning a high-level language targeted to GPU
// codes", InPar 2012), written here from the published algorithm: its standard sizes and
// constants, float data, 32 x 8 blocks for 2-D kernels and 256 threads for 1-D ones.
// correlation: column means and standard deviations, columns centred and scaled, then the
// correlation matrix (upper triangle, mirrored). Counterpart of `ours::pb_correlation`.
#define N 2048
#define FLOAT_N 3214212.01f
#define EPS 0.005f
extern "C" __global__ void pb_correlation(const float* __restrict__ data,
                                          float* __restrict__ symmat) {
    int j1 = blockIdx.x * blockDim.x + threadIdx.x;
    if (j1 < N - 1) {
        symmat[j1 * N + j1] = 1.0f;
        for (int j2 = j1 + 1; j2 < N; j2++) {
            symmat[j1 * N + j2] = 0.0f;
            for (int i = 0; i < N; i++) {
                symmat[j1 * N + j2] += data[i * N + j1] * data[i * N + j2];
            }
            symmat[j2 * N + j1] = symmat[j1 * N + j2];
        }
    }
}
extern "C" __global__ void pb_mean(const float* __restrict__ data, float* __restrict__ mean) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < N) {
        mean[j] = 0.0f;
        for (int i = 0; i < N; i++) {
            mean[j] += data[i * N + j];
        }
        mean[j] /= FLOAT_N;
    }
}
extern "C" __global__ void pb_std(const float* __restrict__ data, const float* __restrict__ mean,
                                  float* __restrict__ std) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < N) {
        std[j] = 0.0f;
        for (int i = 0; i < N; i++) {
            std[j] += (data[i * N + j] - mean[j]) * (data[i * N + j] - mean[j]);
        }
        std[j] /= FLOAT_N;
        std[j] = sqrtf(std[j]);
        if (std[j] <= EPS) {
            std[j] = 1.0f;
        }
    }
}
extern "C" __global__ void pb_normalize(const float* __restrict__ mean,
                                        const float* __restrict__ std, float* __restrict__ data) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < N && j < N) {
        data[i * N + j] -= mean[j];
        data[i * N + j] /= sqrtf(FLOAT_N) * std[j];
    }
}

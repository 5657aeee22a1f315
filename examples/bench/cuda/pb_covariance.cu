// PolyBench/GPU (Grauer-Gray et al., "Auto-tuning a high-level language targeted to GPU
// codes", InPar 2012), written here from the published algorithm: its standard sizes and
// constants, float data, 32 x 8 blocks for 2-D kernels and 256 threads for 1-D ones.
// covariance: column means, columns centred, then the symmetric covariance matrix (its upper
// triangle, mirrored). Counterpart of `ours::pb_covariance`.
#define N 2048
#define FLOAT_N 3214212.01f
extern "C" __global__ void pb_covariance(const float* __restrict__ data,
                                         float* __restrict__ symmat) {
    int j1 = blockIdx.x * blockDim.x + threadIdx.x;
    if (j1 < N) {
        for (int j2 = j1; j2 < N; j2++) {
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
extern "C" __global__ void pb_center(const float* __restrict__ mean, float* __restrict__ data) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < N && j < N) {
        data[i * N + j] -= mean[j];
    }
}

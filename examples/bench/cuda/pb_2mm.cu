// PolyBench/GPU (Grauer-Gray et al., "Auto-tuning a high-level language targeted to GPU
// codes", InPar 2012), written here from the published algorithm: its standard sizes and
// constants, float data, 32 x 8 blocks for 2-D kernels and 256 threads for 1-D ones.
// 2mm: tmp = alpha * a x b, then d = beta * d + tmp x c. Counterpart of `ours::pb_2mm`.
#define N 2048
#define ALPHA 32412.0f
#define BETA 2123.0f
extern "C" __global__ void pb_2mm(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ tmp) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < N && j < N) {
        tmp[i * N + j] = 0.0f;
        for (int k = 0; k < N; k++) {
            tmp[i * N + j] += ALPHA * a[i * N + k] * b[k * N + j];
        }
    }
}
extern "C" __global__ void pb_2mm_2(const float* __restrict__ tmp, const float* __restrict__ c,
                                    float* __restrict__ d) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < N && j < N) {
        d[i * N + j] *= BETA;
        for (int k = 0; k < N; k++) {
            d[i * N + j] += tmp[i * N + k] * c[k * N + j];
        }
    }
}

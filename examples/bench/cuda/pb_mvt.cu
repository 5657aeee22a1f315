// PolyBench/GPU (Grauer-Gray et al., "Auto-tuning a high-level language targeted to GPU
// codes", InPar 2012), written here from the published algorithm: its standard sizes and
// constants, float data, 32 x 8 blocks for 2-D kernels and 256 threads for 1-D ones.
// mvt: x1 += a x y1, then x2 += a^T x y2. Counterpart of `ours::pb_mvt`.
#define N 4096
extern "C" __global__ void pb_mvt(const float* __restrict__ a, float* __restrict__ x1,
                                  const float* __restrict__ y1) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        for (int j = 0; j < N; j++) {
            x1[i] += a[i * N + j] * y1[j];
        }
    }
}
extern "C" __global__ void pb_mvt_2(const float* __restrict__ a, float* __restrict__ x2,
                                    const float* __restrict__ y2) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        for (int j = 0; j < N; j++) {
            x2[i] += a[j * N + i] * y2[j];
        }
    }
}

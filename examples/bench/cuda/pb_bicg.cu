// PolyBench/GPU (Grauer-Gray et al., "Auto-tuning a high-level language targeted to GPU
// codes", InPar 2012), written here from the published algorithm: its standard sizes and
// constants, float data, 32 x 8 blocks for 2-D kernels and 256 threads for 1-D ones.
// bicg: s = r^T x a, then q = a x p. Counterpart of `ours::pb_bicg`.
#define N 4096
extern "C" __global__ void pb_bicg(const float* __restrict__ a, const float* __restrict__ r,
                                   float* __restrict__ s) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < N) {
        s[j] = 0.0f;
        for (int i = 0; i < N; i++) {
            s[j] += r[i] * a[i * N + j];
        }
    }
}
extern "C" __global__ void pb_bicg_2(const float* __restrict__ a, const float* __restrict__ p,
                                     float* __restrict__ q) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        q[i] = 0.0f;
        for (int j = 0; j < N; j++) {
            q[i] += a[i * N + j] * p[j];
        }
    }
}

// PolyBench/GPU (Grauer-Gray et al., "Auto-tuning a high-level language targeted to GPU
// codes", InPar 2012), written here from the published algorithm: its standard sizes and
// constants, float data, 32 x 8 blocks for 2-D kernels and 256 threads for 1-D ones.
// gramschmidt: for each column k, its norm (one thread), the column of q, then row k of r and
// the columns of a right of k. Counterpart of `ours::pb_gramschmidt`.
#define N 512
extern "C" __global__ void pb_gramschmidt(const float* __restrict__ a, float* __restrict__ r,
                                          unsigned int k) {
    if (blockIdx.x * blockDim.x + threadIdx.x == 0) {
        float nrm = 0.0f;
        for (int i = 0; i < N; i++) {
            nrm += a[i * N + k] * a[i * N + k];
        }
        r[k * N + k] = sqrtf(nrm);
    }
}
extern "C" __global__ void pb_gramschmidt_2(const float* __restrict__ a,
                                            const float* __restrict__ r, float* __restrict__ q,
                                            unsigned int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        q[i * N + k] = a[i * N + k] / r[k * N + k];
    }
}
extern "C" __global__ void pb_gramschmidt_3(float* __restrict__ a, float* __restrict__ r,
                                            const float* __restrict__ q, unsigned int k) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j > (int)k && j < N) {
        r[k * N + j] = 0.0f;
        for (int i = 0; i < N; i++) {
            r[k * N + j] += q[i * N + k] * a[i * N + j];
        }
        for (int i = 0; i < N; i++) {
            a[i * N + j] -= q[i * N + k] * r[k * N + j];
        }
    }
}

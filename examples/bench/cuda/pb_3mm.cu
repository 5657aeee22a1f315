// PolyBench/GPU (Grauer-Gray et al., "Auto-tuning a high-level language targeted to GPU
// codes", InPar 2012), written here from the published algorithm: its standard sizes and
// constants, float data, 32 x 8 blocks for 2-D kernels and 256 threads for 1-D ones.
// 3mm: e = a x b, f = c x d, g = e x f, each product by this kernel. Counterpart of
// `ours::pb_3mm`.
#define N 512
extern "C" __global__ void pb_3mm(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ e) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < N && j < N) {
        e[i * N + j] = 0.0f;
        for (int k = 0; k < N; k++) {
            e[i * N + j] += a[i * N + k] * b[k * N + j];
        }
    }
}

// PolyBench/GPU (Grauer-Gray et al., "Auto-tuning a high-level language targeted to GPU
// codes", InPar 2012), written here from the published algorithm: its standard sizes and
// constants, float data, 32 x 8 blocks for 2-D kernels and 256 threads for 1-D ones.
// 3-D convolution of plane i (launched once per plane). Counterpart of `ours::pb_conv3d`.
#define N 256
#define C11 0.2f
#define C21 0.5f
#define C31 (-0.8f)
#define C12 (-0.3f)
#define C22 0.6f
#define C32 (-0.9f)
#define C13 0.4f
#define C23 0.7f
#define C33 0.10f
#define AT(i, j, k) ((i) * N * N + (j) * N + (k))
extern "C" __global__ void pb_conv3d(const float* __restrict__ a, float* __restrict__ b,
                                     unsigned int i) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i > 0 && i < N - 1 && j > 0 && j < N - 1 && k > 0 && k < N - 1) {
        b[AT(i, j, k)] = C11 * a[AT(i - 1, j - 1, k - 1)] + C13 * a[AT(i + 1, j - 1, k - 1)]
                       + C21 * a[AT(i - 1, j - 1, k - 1)] + C23 * a[AT(i + 1, j - 1, k - 1)]
                       + C31 * a[AT(i - 1, j - 1, k - 1)] + C33 * a[AT(i + 1, j - 1, k - 1)]
                       + C12 * a[AT(i, j - 1, k)] + C22 * a[AT(i, j, k)] + C32 * a[AT(i, j + 1, k)]
                       + C11 * a[AT(i - 1, j - 1, k + 1)] + C13 * a[AT(i + 1, j - 1, k + 1)]
                       + C21 * a[AT(i - 1, j, k + 1)] + C23 * a[AT(i + 1, j, k + 1)]
                       + C31 * a[AT(i - 1, j + 1, k + 1)] + C33 * a[AT(i + 1, j + 1, k + 1)];
    }
}

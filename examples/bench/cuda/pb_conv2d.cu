// PolyBench/GPU (Grauer-Gray et al., "Auto-tuning a high-level language targeted to GPU
// codes", InPar 2012), written here from the published algorithm: its standard sizes and
// constants, float data, 32 x 8 blocks for 2-D kernels and 256 threads for 1-D ones.
// 2-D convolution: a 3 x 3 stencil over the interior. Counterpart of `ours::pb_conv2d`.
#define N 4096
#define C11 0.2f
#define C21 0.5f
#define C31 (-0.8f)
#define C12 (-0.3f)
#define C22 0.6f
#define C32 (-0.9f)
#define C13 0.4f
#define C23 0.7f
#define C33 0.10f
extern "C" __global__ void pb_conv2d(const float* __restrict__ a, float* __restrict__ b) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i > 0 && i < N - 1 && j > 0 && j < N - 1) {
        b[i * N + j] = C11 * a[(i - 1) * N + (j - 1)] + C21 * a[(i - 1) * N + j]
                     + C31 * a[(i - 1) * N + (j + 1)] + C12 * a[i * N + (j - 1)]
                     + C22 * a[i * N + j] + C32 * a[i * N + (j + 1)]
                     + C13 * a[(i + 1) * N + (j - 1)] + C23 * a[(i + 1) * N + j]
                     + C33 * a[(i + 1) * N + (j + 1)];
    }
}

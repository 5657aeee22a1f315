// PolyBench/GPU (Grauer-Gray et al., "Auto-tuning a high-level language targeted to GPU
// codes", InPar 2012), written here from the published algorithm: its standard sizes and
// constants, float data, 32 x 8 blocks for 2-D kernels and 256 threads for 1-D ones.
// fdtd-2d: per time step, ey from hz (row 0 from the source), ex from hz, hz from ex and ey.
// ex is N x (N + 1), ey (N + 1) x N, hz N x N. Counterpart of `ours::pb_fdtd2d`.
#define N 2048
extern "C" __global__ void pb_fdtd2d(const float* __restrict__ fict, float* __restrict__ ey,
                                     const float* __restrict__ hz, unsigned int t) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < N && j < N) {
        if (i == 0) {
            ey[j] = fict[t];
        } else {
            ey[i * N + j] -= 0.5f * (hz[i * N + j] - hz[(i - 1) * N + j]);
        }
    }
}
extern "C" __global__ void pb_fdtd2d_2(float* __restrict__ ex, const float* __restrict__ hz) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < N && j < N && j > 0) {
        ex[i * (N + 1) + j] -= 0.5f * (hz[i * N + j] - hz[i * N + (j - 1)]);
    }
}
extern "C" __global__ void pb_fdtd2d_3(const float* __restrict__ ex, const float* __restrict__ ey,
                                       float* __restrict__ hz) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < N && j < N) {
        hz[i * N + j] -= 0.7f * (ex[i * (N + 1) + (j + 1)] - ex[i * (N + 1) + j]
                                 + ey[(i + 1) * N + j] - ey[i * N + j]);
    }
}

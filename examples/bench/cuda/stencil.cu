// 7-point 1-D stencil, out[i] = sum_k w[k] * x[i + k - 3] (zero outside x); each block of 256
// threads stages its inputs and a 3-element halo per side in shared memory.
// Counterpart of `ours::stencil`.
#define R 3
#define B 256
extern "C" __global__ void stencil(const float* __restrict__ x, const float* __restrict__ w,
                                   unsigned int n, float* __restrict__ out) {
    __shared__ float tile[B + 2 * R];
    unsigned int t = threadIdx.x;
    unsigned int g = blockIdx.x * blockDim.x + t;
    tile[t + R] = g < n ? x[g] : 0.0f;
    if (t < R) {
        tile[t] = (g >= R && g - R < n) ? x[g - R] : 0.0f;
        tile[t + B + R] = g + B < n ? x[g + B] : 0.0f;
    }
    __syncthreads();
    if (g < n) {
        float acc = 0.0f;
        for (int k = 0; k < 2 * R + 1; ++k) {
            acc += w[k] * tile[t + k];
        }
        out[g] = acc;
    }
}

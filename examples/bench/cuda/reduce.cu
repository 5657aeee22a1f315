// Block sums of 256 elements: shared-memory tree down to one warp, then shuffles.
// Counterpart of `ours::reduce`. Launched with blocks of 256 threads.
extern "C" __global__ void reduce(const float* __restrict__ x, unsigned int n,
                                  float* __restrict__ partial) {
    __shared__ float tile[256];
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + t;
    tile[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned int stride = 128; stride >= 32; stride /= 2) {
        if (t < stride) {
            tile[t] += tile[t + stride];
        }
        __syncthreads();
    }
    if (t < 32) {
        float v = tile[t];
        for (int offset = 16; offset > 0; offset /= 2) {
            v += __shfl_down_sync(0xffffffffu, v, offset);
        }
        if (t == 0) {
            partial[blockIdx.x] = v;
        }
    }
}

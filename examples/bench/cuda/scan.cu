// Inclusive prefix sum (wrapping unsigned) within each block of 1024 threads: warp scans with
// __shfl_up_sync, then a scan of the 32 warp totals. Counterpart of `ours::scan`.
extern "C" __global__ void scan(const unsigned int* __restrict__ x, unsigned int n,
                                unsigned int* __restrict__ out) {
    __shared__ unsigned int warp_sums[32];
    unsigned int t = threadIdx.x;
    unsigned int lane = t % 32;
    unsigned int warp = t / 32;
    unsigned int i = blockIdx.x * blockDim.x + t;
    unsigned int v = i < n ? x[i] : 0;
    for (unsigned int d = 1; d < 32; d *= 2) {
        unsigned int below = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) {
            v += below;
        }
    }
    if (lane == 31) {
        warp_sums[warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        unsigned int s = warp_sums[lane];
        for (unsigned int d = 1; d < 32; d *= 2) {
            unsigned int below = __shfl_up_sync(0xffffffffu, s, d);
            if (lane >= d) {
                s += below;
            }
        }
        warp_sums[lane] = s;
    }
    __syncthreads();
    if (warp > 0) {
        v += warp_sums[warp - 1];
    }
    if (i < n) {
        out[i] = v;
    }
}

// 256-bin histogram of x % 256: block-private shared bins (block-scoped atomics), merged
// into the global bins. Counterpart of `ours::histogram`. Blocks of 256 threads.
extern "C" __global__ void histogram(const unsigned int* __restrict__ x, unsigned int n,
                                     unsigned int* bins) {
    __shared__ unsigned int local[256];
    unsigned int t = threadIdx.x;
    local[t] = 0;
    __syncthreads();
    unsigned int stride = blockDim.x * gridDim.x;
    for (unsigned int i = blockIdx.x * blockDim.x + t; i < n; i += stride) {
        atomicAdd_block(&local[x[i] % 256], 1u);
    }
    __syncthreads();
    unsigned int count = local[t];
    if (count != 0) {
        atomicAdd(&bins[t], count);
    }
}

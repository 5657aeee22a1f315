// c[i] = a[i] + b[i]. Counterpart of `ours::vecadd` (src/kernels.rs).
extern "C" __global__ void vecadd(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ c, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

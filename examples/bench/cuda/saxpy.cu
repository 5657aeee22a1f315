// out[i] = alpha * x[i] + y[i]. Counterpart of `ours::saxpy`. With NVRTC's default
// --fmad=true (as nvcc) the multiply and add are contracted into one fma.
extern "C" __global__ void saxpy(float alpha, const float* __restrict__ x,
                                 const float* __restrict__ y, float* __restrict__ out,
                                 unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = alpha * x[i] + y[i];
    }
}

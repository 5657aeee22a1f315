// out[i] = alpha * x[i] + y[i]. Counterpart of `ours::saxpy_fmad` (saxpy.cu under the name of the benchmark that compares it with `#[kernel(fmad)]`). With NVRTC's default
// --fmad=true (as nvcc) the multiply and add are contracted into one fma.
extern "C" __global__ void saxpy_fmad(float alpha, const float* __restrict__ x,
                                 const float* __restrict__ y, float* __restrict__ out,
                                 unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = alpha * x[i] + y[i];
    }
}

// out[i] = alpha * x[i] + y[i] as a template, instantiated for float: the counterpart of the
// generic `ours::axpy::<f32>`. With NVRTC's default --fmad=true (as nvcc) the multiply and add
// are contracted into one fma.
template <typename T>
__device__ void axpy(T alpha, const T* __restrict__ x, const T* __restrict__ y,
                     T* __restrict__ out, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = alpha * x[i] + y[i];
    }
}

extern "C" __global__ void saxpy_generic(float alpha, const float* __restrict__ x,
                                         const float* __restrict__ y, float* __restrict__ out,
                                         unsigned int n) {
    axpy<float>(alpha, x, y, out, n);
}

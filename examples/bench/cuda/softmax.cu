// Row softmax, one block of 256 threads per row: block max and block sum of expf(x - max)
// by tree reductions in shared memory. Counterpart of `ours::softmax`.
extern "C" __global__ void softmax(const float* __restrict__ x, unsigned int cols,
                                   float* __restrict__ out) {
    __shared__ float red[256];
    unsigned int t = threadIdx.x;
    unsigned int threads = blockDim.x;
    size_t base = (size_t)blockIdx.x * cols;

    float m = -__int_as_float(0x7f800000);  // -infinity (NVRTC has no <math.h>)
    for (unsigned int j = t; j < cols; j += threads) {
        m = fmaxf(m, x[base + j]);
    }
    red[t] = m;
    __syncthreads();
    for (unsigned int stride = threads / 2; stride > 0; stride /= 2) {
        if (t < stride) {
            red[t] = fmaxf(red[t], red[t + stride]);
        }
        __syncthreads();
    }
    m = red[0];
    __syncthreads();

    float s = 0.0f;
    for (unsigned int j = t; j < cols; j += threads) {
        s += expf(x[base + j] - m);
    }
    red[t] = s;
    __syncthreads();
    for (unsigned int stride = threads / 2; stride > 0; stride /= 2) {
        if (t < stride) {
            red[t] += red[t + stride];
        }
        __syncthreads();
    }
    s = red[0];

    for (unsigned int j = t; j < cols; j += threads) {
        out[base + j] = expf(x[base + j] - m) / s;
    }
}

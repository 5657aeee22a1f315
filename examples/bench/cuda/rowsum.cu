// One thread per row of a row-major matrix, summed in order. Counterpart of `ours::rowsum`.
extern "C" __global__ void rowsum(const float* __restrict__ m, unsigned int cols,
                                  float* __restrict__ sums, unsigned int rows) {
    unsigned int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        const float* r = m + (size_t)row * cols;
        float acc = 0.0f;
        for (unsigned int j = 0; j < cols; ++j) {
            acc += r[j];
        }
        sums[row] = acc;
    }
}

// Collatz steps from first + i down to 1. Counterpart of `ours::collatz`.
extern "C" __global__ void collatz(unsigned long long first, unsigned int* __restrict__ steps,
                                   unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned long long v = first + i;
        unsigned int count = 0;
        while (v != 1) {
            v = (v % 2 == 0) ? v / 2 : 3 * v + 1;
            ++count;
        }
        steps[i] = count;
    }
}

// out = input^T through a 32 x 33 shared tile; blocks of 32 x 8 threads on a 2-D grid.
// Counterpart of `ours::transpose`.
#define TILE 32
#define ROWS 8
extern "C" __global__ void transpose(const float* __restrict__ input, unsigned int width,
                                     unsigned int height, float* __restrict__ out) {
    __shared__ float tile[TILE][TILE + 1];
    unsigned int bx = blockIdx.x * TILE;
    unsigned int by = blockIdx.y * TILE;
    unsigned int tx = threadIdx.x;
    unsigned int ty = threadIdx.y;
    for (unsigned int j = 0; j < TILE; j += ROWS) {
        unsigned int x = bx + tx, y = by + ty + j;
        if (x < width && y < height) {
            tile[ty + j][tx] = input[(size_t)y * width + x];
        }
    }
    __syncthreads();
    for (unsigned int j = 0; j < TILE; j += ROWS) {
        unsigned int x = by + tx, y = bx + ty + j;
        if (x < height && y < width) {
            out[(size_t)y * height + x] = tile[tx][ty + j];
        }
    }
}

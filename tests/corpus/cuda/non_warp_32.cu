// 32 that is not a warp width: tiles, bit widths, block sizes synchronised with
// __syncthreads, shared-memory tree reductions. No expect markers: no findings.
#define TILE_DIM 32
#define BLOCK_ROWS 8
#define BITS_PER_WORD 32

__global__ void transpose(float* out, const float* in, int width) {
  __shared__ float tile[TILE_DIM][TILE_DIM + 1];
  int x = blockIdx.x * 32 + threadIdx.x;
  int y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += BLOCK_ROWS) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
  __syncthreads();
  int col = threadIdx.x % 32;
  out[y * width + col] = tile[threadIdx.x][threadIdx.y];
}

__global__ void block_tree_sum(float* data) {
  __shared__ float s[256];
  int t = threadIdx.x;
  s[t] = data[t];
  __syncthreads();
  for (int stride = 16; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) data[0] = s[0];
}

__device__ unsigned bit_of(const unsigned* words, int i) {
  return (words[i / 32] >> (i & 31)) & 1u;
}

__device__ unsigned long long pack(unsigned hi, unsigned lo) {
  return ((unsigned long long)hi << 32) | (lo & 0xffffffffu);
}

__global__ void hash(unsigned* h, int n) {
  unsigned v = h[blockIdx.x];
  v ^= v >> 5;
  h[blockIdx.x] = v * 0x9e3779b9u + n / 32;
}

// The CUDA half of a per-vendor folder pair (cuda/ beside rocm/, a same-named twin there): the build
// compiles rocm/warp_sum.h for AMD, so nothing here is a portability break.
__device__ inline float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
  return v;
}

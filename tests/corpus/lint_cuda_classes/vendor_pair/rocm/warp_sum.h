// The AMD half: HIP's mask-free shuffles over the native wavefront.
__device__ inline float warp_sum(float v) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down(v, offset);
  return v;
}

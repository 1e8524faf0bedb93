// A header written for AMD alone (one per vendor, beside a CUDA twin): it asks
// the hardware for its wavefront size through an AMDGCN builtin, which no
// NVIDIA compiler knows, and keeps 32-lane logical warps on purpose. Nothing
// here is CUDA to port.
#pragma once

template <typename T>
__device__ T group_sum(T value) {
  const int wave = __builtin_amdgcn_wavefrontsize();
  for (int hop = 16; hop > 0; hop >>= 1) {
    value += __shfl_xor(value, hop, 32);
  }
  return wave == 64 ? value : value;
}

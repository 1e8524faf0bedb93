// In the same cuda/ folder, but with no twin in rocm/: this file is what AMD
// builds get (hipified), so its 32-lane mask is a finding.
__device__ inline float warp_first(float v) {
  return __shfl_sync(0xffffffff, v, 0);  // expect: PG501
}

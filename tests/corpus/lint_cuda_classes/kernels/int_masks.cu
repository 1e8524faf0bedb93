// Full masks written as plain ints: all ones in value, 32 bits in type, so
// HIP's 64-bit *_sync masks reject them. Traps: the same values as 64-bit
// literals.
__device__ float int_masks(float v) {
  v += __shfl_xor_sync(~0, v, 16);  // expect: PG505 PG501
  v += __shfl_xor_sync(-1, v, 8);  // expect: PG501
  v += __shfl_xor_sync(~0ull, v, 4);
  v += __shfl_xor_sync(-1ll, v, 2);
  v += __shfl_xor_sync(~0ul, v, 1);
  return v;
}

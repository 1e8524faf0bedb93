// Warp code that writes its 32 lanes without a plain 32: shuffle offsets as
// powers of two (`1 << k`), and a warp's lanes split among the items it
// holds (`32 / ITEMS_PER_WARP`). Traps: a bit loop that never shuffles, and
// 32 divided by a count that is not per warp.
constexpr int ITEMS_PER_WARP = 4;

__device__ unsigned swap_bits(unsigned bits) {
  for (int k = 4; k >= 0; --k) {  // expect: PG505
    const int hop = 1 << k;
    unsigned other = __shfl_xor_sync(~0ull, bits, hop);
    bits = (bits & 0x0000ffffu) | (other & 0xffff0000u);
  }
  return bits;
}

__device__ float spread_sum(float v) {
  for (int e = 0; e < 5; ++e) v += __shfl_xor_sync(~0ull, v, 1 << e);  // expect: PG505
  return v;
}

__device__ int item_lane(int lane) {
  constexpr int kLanesPerItem = 32 / ITEMS_PER_WARP;  // expect: PG504
  return lane % kLanesPerItem;
}

__device__ unsigned reverse_low(unsigned x) {
  unsigned r = 0;
  for (int k = 4; k >= 0; --k) r |= ((x >> k) & 1u) << (4 - k);
  return r;
}

constexpr int ITEMS_PER_BLOCK = 8;
__device__ int chunk(int i) { return i * (32 / ITEMS_PER_BLOCK); }

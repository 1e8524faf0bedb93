// A warp width kept as a member of a traits struct, beside ones that are not
// warp widths: the member is reported where it is defined, as a namespace or
// function constant would be.
#pragma once

template <int Lanes> struct LaneTile { float cells[Lanes]; };

struct ScanTraits {
  static constexpr int kWarpSize = 32;  // expect: PG508
  static constexpr int kItemsPerThread = 32;
  LaneTile<kWarpSize> tile;
};

class BucketTable {
  constexpr static unsigned WARP_SIZE = 32;  // expect: PG508
  int buckets_ = 32;
};

__device__ inline int lane_slot(int tid) { return tid % ScanTraits::kWarpSize; }

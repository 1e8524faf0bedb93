// A warp's width hidden behind names that do not say "warp": a group width
// set to 32 whose half starts a shuffle loop (reported where it is set), and
// a scan total read from source lane 31, the last lane of a 32-lane warp.
// Traps: a group width of 8 used the same way, a width that is a parameter,
// lane 31 read inside explicit 32-lane groups, and a 32 that only sizes a
// loop with no shuffle.
#define ALL (~0ull)

__device__ float group_dot(const float *a, const float *b) {
  constexpr int cols = 32;  // expect: PG508
  float s = a[threadIdx.x % cols] * b[threadIdx.x % cols];
  for (int step = cols / 2; step > 0; step /= 2) {
    s += __shfl_down_sync(ALL, s, step);
  }
  return s;
}

__device__ float small_groups(float s) {
  constexpr int cols = 8;
  for (int step = cols / 2; step > 0; step /= 2) {
    s += __shfl_xor_sync(ALL, s, step);
  }
  return s;
}

__device__ float any_width(float s, int cols) {
  for (int step = cols / 2; step > 0; step /= 2) {
    s += __shfl_down_sync(ALL, s, step);
  }
  return s;
}

__device__ int scan_total(int running) {
  return __shfl_sync(ALL, running, 31);  // expect: PG505
}

__device__ int grouped_total(int running) {
  return __shfl_sync(ALL, running, 31, 32);
}

__device__ float tile_sum(const float *x) {
  const int len = 32;
  float s = 0.f;
  for (int i = len / 2; i > 0; i /= 2) s += x[i];
  return s;
}

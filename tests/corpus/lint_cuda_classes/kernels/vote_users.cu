// Callers of ballot functions defined in another file (one named like a
// ballot is taken for one), and host code whose "ballot" is an election.
#include "vote_wrappers.cuh"

int tally_ballot(const int* votes, int n) {
  int sum = 0;
  for (int i = 0; i < n; ++i) sum += votes[i];
  return sum;
}

__global__ void count_votes(int* out, const int* flags) {
  bool p = flags[threadIdx.x] != 0;
  uint32_t bits = warp_ballot(p);  // expect: PG503
  unsigned other = mylib::warpBallot(p);  // expect: PG503
  unsigned long long wide = warp_ballot(p);
  auto kept = warp_ballot(p);
  int total = tally_ballot(flags, 4);
#if defined(__HIP_PLATFORM_AMD__)
  int ported = warp_ballot(p);
  out[1] = ported;
#endif
  out[0] = (int)bits + (int)other + (int)(wide >> 32) + (int)(kept >> 32) + total;
}

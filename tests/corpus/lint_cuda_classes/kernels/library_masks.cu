// Masks handed to RAPIDS' warp helpers (raft::shfl(val, lane, width, mask),
// raft::any(flag, mask)), which pass them on to *_sync builtins: a 32-bit
// full mask there covers half a 64-lane wavefront.
#include <cuda_runtime.h>
#include <raft/util/cuda_utils.cuh>

struct Candidate {
  float score;
  int index;
  __device__ Candidate exchange(int src, int width = 16, unsigned lanes = 0xffffffffu) {  // expect: PG501
    Candidate other = *this;
    other.score = raft::shfl(score, src, width, lanes);
    other.index = raft::shfl(index, src, width, lanes);
    return other;
  }
};

__device__ bool any_hit(bool found) { return raft::any(found, 0xffffffffu); }  // expect: PG501

// a project's own helper named like raft's, arguments in another order: not raft's
__device__ float shfl(float value, unsigned flags, int src, int width);
__device__ float own(float v) { return shfl(v, 0xffffffffu, 1, 8); }

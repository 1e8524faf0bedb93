// A project's own ballot functions. Their callers (vote_users.cu here, or
// any file that includes this one) keep the result; a 32-bit keep drops the
// upper half of a wave64 vote.
#pragma once

__device__ inline unsigned long long warp_vote(bool p) {
  return __ballot_sync(~0ull, p);
}

__device__ inline unsigned long long warp_vote_held(bool p) {
  unsigned long long held = 0;
  held = __ballot_sync(~0ull, p);
  return held;
}

// a wrapper of a wrapper is a ballot too
__device__ inline unsigned long long vote_again(bool p) { return warp_vote(p); }

// named like a ballot, but returns a count: keeping it in an int is fine
__device__ inline int ballot_count(bool p) {
  return __popcll(__ballot_sync(~0ull, p));
}

__device__ inline int lanes_first(bool p) {
  int a = warp_vote(p);  // expect: PG503
  unsigned b;
  b = warp_vote_held(p);  // expect: PG503
  unsigned c = (unsigned)vote_again(p);  // expect: PG503
  unsigned long long d = warp_vote(p);
  int n = ballot_count(p);
  if (warp_vote(p) != 0) return n;
  return a + b + c + (int)(d >> 32);
}

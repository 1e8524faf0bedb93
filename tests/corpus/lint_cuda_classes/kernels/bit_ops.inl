// Inline definitions kept in an .inl file included by a .cu translation unit.
__device__ __inline__ unsigned bit_find(unsigned v) {
  unsigned r;
  asm("bfind.u32 %0, %1;" : "=r"(r) : "r"(v));  // expect: PG601
  return r;
}

__device__ __inline__ bool first_active() {
  unsigned who = __ballot_sync(~0u, true);  // expect: PG501 PG503
  return (who & 1u) != 0;
}

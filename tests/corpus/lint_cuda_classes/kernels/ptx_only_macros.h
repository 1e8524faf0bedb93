// A header of inline-PTX helpers and nothing else that names device code.
#pragma once
#define LOAD_STREAMING(dst, ptr) asm volatile("ld.global.cs.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(dst.x), "=r"(dst.y), "=r"(dst.z), "=r"(dst.w) : "l"(ptr))  // expect: PG601
#define READ_LANE(out) \
  __asm__ __volatile__("mov.u32 %0, %%laneid;" : "=r"(out))  // expect: PG601

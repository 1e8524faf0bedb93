// Host-only x86 assembly: not CUDA, never linted as such.
#pragma once
static inline void spin_pause() { asm volatile("pause" ::: "memory"); }
static inline unsigned top_bit(unsigned x) {
  unsigned r;
  __asm__("bsrl %1, %0" : "=r"(r) : "r"(x));
  return r;
}

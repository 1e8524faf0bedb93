// A plain C++ header: nothing GPU in it, so it is not linted (and never as Python).
#pragma once
#include <vector>

inline int buckets(int n) { return (n + 31) / 32; }

struct Histogram {
  std::vector<unsigned> bins = std::vector<unsigned>(32, 0xffffffffu);
  void add(int x) { bins[x & 31] += 1; }
};

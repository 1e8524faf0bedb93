// Plain C++ with no CUDA at all: discovered, sniffed, never parsed as Python.
#include <vector>

int bucket_sum(const std::vector<int>& values) {
  int total = 0;
  for (int v : values) total += v % 32;  // a non-warp 32
  return total;
}

# CUDA sources embedded in Python, as real code bases write them.
# An "expect" marker comment on a line means a finding at that Python line.
import cupy as cp
import torch
from torch.utils.cpp_extension import load_inline

BLOCK = 256

_REDUCE = r"""
extern "C" __global__ void reduce(const float* x, float* out) {
    float v = x[threadIdx.x];
    for (int o = 16; o > 0; o >>= 1)  // expect: PG505
        v += __shfl_down_sync(0xffffffff, v, o);  // expect: PG501
    if ((threadIdx.x & 31) == 0) atomicAdd(out, v);  // expect: PG504
}
"""
reduce_kernel = cp.RawKernel(_REDUCE, "reduce")

votes = cp.RawKernel(
    "extern \"C\" __global__ void votes(const int* p, int* n) {\n"
    "  unsigned b = __ballot_sync(~0u, p[threadIdx.x]);\n"  # expect: PG501 PG503
    "  if (threadIdx.x == 0) *n = __popc(b);\n"  # expect: PG503
    "}\n",
    "votes",
)

module = cp.RawModule(code="""
#include <cub/cub.cuh>
extern "C" __global__ void k(float* x) { asm volatile("trap;"); }
""")  # expect on lines above: PG604 (line 28) and PG601 (line 29)

scaled = cp.ElementwiseKernel(
    "float32 x", "float32 y",
    "y = __shfl_xor_sync(0xffffffff, x, 1)",  # expect: PG501
    "scaled",
)

fmt = cp.RawKernel("""
extern "C" __global__ void f(float* x) {
  __shared__ float s[%d / 32];  // expect: PG507
  x[0] = s[0];
}
""" % BLOCK, "f")


def build(dtype):
    src = f"""
extern "C" __global__ void g({dtype}* x) {{  // expect: PG699
  x[threadIdx.x % 32] = __shfl_sync(0xffffffff, x[0], 0);  // expect: PG501 PG504
}}
"""
    return cp.RawKernel(src, "g")


ext = load_inline(
    "ext",
    cpp_sources="",
    cuda_sources=["#define WARP_SIZE 32\n__global__ void h() {}\n"],  # expect: PG508
)

if torch.version.hip:
    hip_only = cp.RawKernel("__global__ void z() { __shfl_down_sync(0xffffffff, 1, 1); }", "z")

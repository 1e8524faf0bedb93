"""CUDA sources that reach no known kernel-building call directly."""

import string

# a module constant handed to a wrapper class
SCAN_SRC = r"""
extern "C" __global__ void scan(float* x) {
  float v = x[threadIdx.x];
  for (int o = 16; o > 0; o >>= 1)  // expect: PG505
    v += __shfl_down_sync(0xffffffff, v, o);  // expect: PG501
  x[threadIdx.x] = v;
}
"""

# a template filled in with str.format (literal braces doubled)
TEMPLATE = """
extern "C" __global__ void fill_{name}({ctype}* out) {{
  int lane = threadIdx.x & 31;  // expect: PG504
  out[lane] = ({ctype}){value};
}}
"""

# a template for string.Template and str.replace
PTX_HELPER = string.Template("""
__device__ unsigned laneid_$suffix() {
  unsigned r; asm("mov.u32 %0, %%laneid;" : "=r"(r));  // expect: PG601
  return r;
}
""")

GENERATED = "__global__ void k_NAME(float* p) { p[threadIdx.x / 32] = __shfl_sync(~0ull, p[0], 0); }".replace("NAME", "gen")  # expect: PG504


class Kernel:
    def __init__(self, source, name):
        self.source, self.name = source, name


SCAN = Kernel(SCAN_SRC, "scan")
FILLS = [TEMPLATE.format(name=n, ctype=t, value=0) for n, t in (("f", "float"), ("i", "int"))]
HELP = "threadIdx.x & 31 gives the lane on NVIDIA GPUs"  # prose, not a kernel

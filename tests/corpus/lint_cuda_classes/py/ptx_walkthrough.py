# An NVIDIA word in the file name describes the topic, not a vendor backend:
# the file is still linted.
from pycuda.compiler import SourceModule  # expect: PG304
import pycuda.autoinit  # expect: PG304

mod = SourceModule("""
__device__ int lane_id() { int id; asm("mov.u32 %0, %%laneid;" : "=r"(id)); return id; }  // expect: PG601
""")

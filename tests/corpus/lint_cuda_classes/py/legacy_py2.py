# Python 2 code that still carries a PyCUDA kernel: it does not parse as Python 3.
import pycuda.autoinit  # expect: PG304
import pycuda.driver as drv  # expect: PG304
from pycuda.compiler import SourceModule  # expect: PG304

mod = SourceModule("""
__global__ void twice(float *a)
{
  int lane = threadIdx.x % 32;  // expect: PG504
  a[threadIdx.x] = 2 * __shfl_sync(0xffffffff, a[lane], 0);  // expect: PG501
}
""")

print "compiled", mod  # expect: PG901

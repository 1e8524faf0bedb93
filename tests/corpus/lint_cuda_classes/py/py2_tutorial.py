# A Python 2 walkthrough that prints on nearly every line: each print is one
# line Python 3 rejects, more than a handful, and the imports must survive.
import numpy as np
import pycuda.autoinit  # expect: PG304
import pycuda.driver as drv  # expect: PG304
from pycuda.compiler import SourceModule  # expect: PG304

kernel = SourceModule("""
__global__ void lanes(int *out)
{
    out[threadIdx.x] = threadIdx.x & 31;  // expect: PG504
}
""")
lanes = kernel.get_function("lanes")
out = np.zeros(64, dtype=np.int32)
print "step 1"  # expect: PG901
print "step 2"
print "step 3"
print "step 4"
print "step 5"
print "step 6"
print "step 7"
print "step 8"
print "step 9"
print "step 10"
print "step 11"
print "step 12"
print "step 13"
print "step 14"
print "step 15"
print "step 16"
print "step 17"
print "step 18"
print "step 19"
print "step 20"
print "step 21"
print "step 22"
print "step 23"
print "step 24"
print "step 25"
print "step 26"
print "step 27"
print "step 28"
print "step 29"
print "step 30"
print "step 31"
print "step 32"
print "step 33"
print "step 34"
lanes(drv.Out(out), block=(64, 1, 1))
print out[:4]

import pytest

from portagpu.cuda import KernelNotFoundError, kernel_signature, scalar_dtype

SOURCE = r"""
#include <cuda_fp16.h>
extern "C" __global__ void __launch_bounds__(256)
saxpy(const float* __restrict__ x, float *y, int n, float alpha, unsigned long long seed,
      double d[], const size_t stride, __half h) { }

template <typename T, int BLOCK>
__global__ void scale(T* __restrict__ out, const T factor) { }

__device__ float helper(float v);
extern "C" { __global__ void noargs(void) { } }
"""


def test_params_in_order_with_types_and_pointerness():
    params = kernel_signature(SOURCE, "saxpy")
    assert [p.name for p in params] == ["x", "y", "n", "alpha", "seed", "d", "stride", "h"]
    assert [p.is_pointer for p in params] == [True, True, False, False, False, True, False, False]
    assert params[0].ctype == "const float* __restrict__"
    assert params[5].ctype == "double*"
    assert [p.dtype for p in params] == [
        None, None, "int32", "float32", "uint64", None, "uint64", "float16",
    ]


def test_template_kernel_name_with_arguments():
    params = kernel_signature(SOURCE, "scale<float, 128>")
    assert [(p.name, p.base_type, p.is_pointer) for p in params] == [
        ("out", "T", True), ("factor", "T", False),
    ]
    assert params[1].dtype is None  # template type: the caller decides


def test_void_parameter_list_is_empty():
    assert kernel_signature(SOURCE, "noargs") == []


def test_missing_kernel_is_a_clear_error():
    with pytest.raises(KernelNotFoundError, match="'missing'"):
        kernel_signature(SOURCE, "missing")


@pytest.mark.parametrize(
    ("ctype", "dtype"),
    [("const int", "int32"), ("unsigned", "uint32"), ("long", "int64"), ("std::int64_t", "int64"),
     ("double", "float64"), ("my_struct", None), ("bool", "bool")],
)
def test_scalar_dtype(ctype, dtype):
    assert scalar_dtype(ctype) == dtype

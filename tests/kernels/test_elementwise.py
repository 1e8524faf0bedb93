import portagpu.kernels as K
import pytest
import torch

FLOATS = [torch.float32, torch.float16, torch.bfloat16]


@pytest.mark.parametrize("impl", ["triton", None])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [1, 40_003])  # 40,003: not a multiple of any block
def test_add_matches_torch(inputs, runnable, impl, dtype, n):
    impl = runnable(impl)
    x, y = inputs.randn(n, dtype=dtype), inputs.randn(n, dtype=dtype)
    out = inputs.poisoned(n, dtype=dtype)
    result = K.add(x, y, alpha=0.5, out=out, impl=impl)
    assert result is out
    inputs.assert_close(out, x.double() + 0.5 * y.double(), dtype, f"add n={n}")
    if impl:
        assert K.last_impl() == impl


def test_add_keeps_shape_and_broadcasts_through_torch(inputs):
    x, y = inputs.randn(3, 5), inputs.randn(5)
    result = K.add(x, y)
    inputs.assert_close(result, x.double() + y.double(), torch.float32, "broadcast add")
    assert K.last_impl() == "torch"

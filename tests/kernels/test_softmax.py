import portagpu.kernels as K
import pytest
import torch

FLOATS = [torch.float32, torch.float16, torch.bfloat16]
# 77x100: short rows, several per program (77 is no multiple of any ROWS);
# 300: one block; 5,000: longer than the CPU table's fused limit (looped kernel);
# 40,000: longer than the GPU tables' fused limit
SHAPES = [(77, 100), (37, 300), (6, 5_000), pytest.param((3, 40_000), marks=pytest.mark.gpu)]


@pytest.mark.parametrize("impl", ["triton", None])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
def test_softmax_rows(inputs, runnable, impl, dtype, shape):
    impl = runnable(impl)
    if shape[1] > 10_000 and inputs.device == "cpu":
        pytest.skip("long rows are for the GPU")
    x = inputs.randn(*shape, dtype=dtype, scale=4.0)
    out = inputs.poisoned(*shape, dtype=dtype)
    K.softmax(x, dim=-1, out=out, impl=impl)
    inputs.assert_close(out, torch.softmax(x.double(), -1), dtype, f"softmax {shape}")


@pytest.mark.parametrize("impl", ["triton", None])
def test_softmax_is_stable_for_huge_logits_and_other_dims(inputs, runnable, impl):
    impl = runnable(impl)
    x = inputs.randn(20, 33, scale=1e4)  # exp would overflow without subtracting the max
    inputs.assert_close(K.softmax(x, dim=0, impl=impl), torch.softmax(x.double(), 0), torch.float32,
                        "softmax dim=0")

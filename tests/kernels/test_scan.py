import portagpu.kernels as K
import pytest
import torch

FLOATS = [torch.float32, torch.float16, torch.bfloat16]


@pytest.mark.parametrize("impl", ["triton", "cuda", None])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(37, 300), (5_003,), (2, 9_000)])  # several blocks per row
def test_cumsum_rows(inputs, runnable, impl, dtype, shape):
    impl = runnable(impl)
    if impl == "cuda" and dtype != torch.float32:
        pytest.skip("the CUDA C scan is float32")
    x = inputs.randn(*shape, dtype=dtype) + 0.1
    out = inputs.poisoned(*shape, dtype=dtype)
    K.cumsum(x, dim=-1, out=out, impl=impl)
    inputs.assert_close(out, x.double().cumsum(-1), dtype, f"cumsum {shape}")


@pytest.mark.parametrize("impl", ["triton", "cuda", None])
def test_cumsum_along_the_first_dim(inputs, runnable, impl):
    impl = runnable(impl)
    x = inputs.randn(700, 3) + 0.1
    inputs.assert_close(K.cumsum(x, dim=0, impl=impl), x.double().cumsum(0), torch.float32, "dim=0")


@pytest.mark.gpu
@pytest.mark.parametrize("impl", ["triton", "cuda"])
def test_cumsum_long_vector_recurses_twice(inputs, runnable, impl):
    impl = runnable(impl)
    if inputs.device == "cpu":
        pytest.skip("large sizes are for the GPU")
    x = inputs.randn(20_000_003).abs()  # > 4096 blocks of 4096 (or 1024 threads): two levels of totals
    inputs.assert_close(K.cumsum(x, impl=impl), x.double().cumsum(0), torch.float32, "long cumsum")

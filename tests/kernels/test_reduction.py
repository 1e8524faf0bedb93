import portagpu.kernels as K
import pytest
import torch

FLOATS = [torch.float32, torch.float16, torch.bfloat16]


@pytest.mark.parametrize("impl", ["triton", "cuda", None])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [7, 50_001])
def test_sum_and_max_of_a_vector(inputs, runnable, impl, dtype, n):
    impl = runnable(impl)
    if impl == "cuda" and dtype != torch.float32:
        pytest.skip("the CUDA C reductions are float32")
    x = inputs.randn(n, dtype=dtype) + 0.25  # a sum far from zero keeps the relative error meaningful
    total = K.sum(x, impl=impl)
    assert total.shape == ()
    inputs.assert_close(total.reshape(1), x.double().sum().reshape(1), dtype, f"sum n={n}")
    peak = K.max(x, impl=impl)
    assert peak.shape == ()
    assert float(peak) == float(x.max())


@pytest.mark.parametrize("impl", ["triton", "cuda", None])
@pytest.mark.parametrize("dtype", FLOATS)
# 77x100: several short rows per program; 5,000 columns: more than one block
@pytest.mark.parametrize("shape", [(77, 100), (37, 300), (5, 5_000)])
def test_sum_and_max_per_row(inputs, runnable, impl, dtype, shape):
    impl = runnable(impl)
    if impl == "cuda" and dtype != torch.float32:
        pytest.skip("the CUDA C reductions are float32")
    x = inputs.randn(*shape, dtype=dtype) + 0.25
    inputs.assert_close(K.sum(x, dim=1, impl=impl), x.double().sum(1), dtype, "row sum")
    if impl == "cuda":
        return  # the CUDA C row max has no indices; max(dim=) runs Triton or torch
    got, expected = K.max(x, dim=-1, impl=impl), x.max(dim=-1)
    assert torch.equal(got.values.cpu(), expected.values.cpu())
    assert torch.equal(got.indices.cpu(), expected.indices.cpu())


@pytest.mark.parametrize("impl", ["triton", None])
def test_reduce_along_other_dims_and_keepdim(inputs, runnable, impl):
    impl = runnable(impl)
    x = inputs.randn(6, 130, 3) + 0.25
    got = K.sum(x, dim=1, keepdim=True, impl=impl)
    inputs.assert_close(got, x.double().sum(1, keepdim=True), torch.float32, "sum dim=1")
    values, indices = K.max(x, dim=0, impl=impl)
    assert torch.equal(indices.cpu(), x.max(0).indices.cpu())
    assert torch.equal(values.cpu(), x.max(0).values.cpu())

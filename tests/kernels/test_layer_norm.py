import portagpu.kernels as K
import pytest
import torch
import torch.nn.functional as F

FLOATS = [torch.float32, torch.float16, torch.bfloat16]


@pytest.mark.parametrize("impl", ["triton", None])
@pytest.mark.parametrize("dtype", FLOATS)
# 77x100: several short rows per program; 5,000: looped kernel on CPU, 40,000 on the GPU
@pytest.mark.parametrize("shape", [(77, 100), (37, 300), (6, 5_000), pytest.param((3, 40_000), marks=pytest.mark.gpu)])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_rows(inputs, runnable, impl, dtype, shape, affine):
    impl = runnable(impl)
    cols = shape[-1]
    x = inputs.randn(*shape, dtype=dtype, scale=3.0) + 5.0  # an offset mean tests the centring
    weight = inputs.randn(cols, dtype=dtype) if affine else None
    bias = inputs.randn(cols, dtype=dtype) if affine else None
    out = inputs.poisoned(*shape, dtype=dtype)
    K.layer_norm(x, cols, weight, bias, eps=1e-5, out=out, impl=impl)
    reference = F.layer_norm(x.double(), (cols,), None if weight is None else weight.double(),
                             None if bias is None else bias.double(), 1e-5)
    inputs.assert_close(out, reference, dtype, f"layer_norm {shape} affine={affine}")


@pytest.mark.parametrize("impl", ["triton", None])
def test_layer_norm_over_two_trailing_dims(inputs, runnable, impl):
    impl = runnable(impl)
    x, weight = inputs.randn(4, 6, 50), inputs.randn(6, 50)
    got = K.layer_norm(x, (6, 50), weight, None, impl=impl)
    inputs.assert_close(got, F.layer_norm(x.double(), (6, 50), weight.double()), torch.float32, "2-D shape")


def test_layer_norm_rejects_a_shape_that_does_not_end_x():
    from portagpu.errors import LaunchError

    with pytest.raises(LaunchError, match="normalized_shape"):
        K.layer_norm(torch.zeros(3, 4), (5,))

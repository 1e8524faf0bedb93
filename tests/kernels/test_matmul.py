import portagpu.kernels as K
import pytest
import torch
import torch.nn.functional as F

ACTS = {"gelu": F.gelu, "gelu_tanh": lambda y: F.gelu(y, approximate="tanh"), "relu": F.relu,
        "silu": F.silu, "none": lambda y: y}


@pytest.mark.parametrize("impl", ["triton", None])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("act", list(ACTS))
def test_matmul_bias_act(inputs, runnable, impl, dtype, act):
    impl = runnable(impl)
    a, b, bias = inputs.randn(70, 50, dtype=dtype), inputs.randn(50, 45, dtype=dtype), inputs.randn(45, dtype=dtype)
    out = inputs.poisoned(70, 45, dtype=dtype)
    K.matmul_bias_act(a, b, bias, act=act, out=out, impl=impl)
    reference = ACTS[act](a.double() @ b.double() + bias.double())
    inputs.assert_close(out, reference, dtype, f"act={act}")


@pytest.mark.parametrize("impl", ["triton", None])
def test_matmul_without_bias_on_transposed_input(inputs, runnable, impl):
    impl = runnable(impl)
    a, b = inputs.randn(33, 70).t(), inputs.randn(33, 20)  # a is (70, 33), not contiguous
    got = K.matmul_bias_act(a, b, None, act="relu", impl=impl)
    inputs.assert_close(got, F.relu(a.double() @ b.double()), torch.float32, "no bias")


@pytest.mark.parametrize("impl", ["triton", None])
def test_a_strided_bias_and_repeated_calls(inputs, runnable, impl):
    """A bias that is a strided view is read as its values (the kernel reads a
    contiguous row); later calls of the same shapes reuse the plan with new data."""
    impl = runnable(impl)
    for _ in range(2):
        a, b = inputs.randn(40, 30), inputs.randn(30, 20)
        bias = inputs.randn(20, 3)[:, 1]  # stride 3
        got = K.matmul_bias_act(a, b, bias, act="none", impl=impl)
        inputs.assert_close(got, a.double() @ b.double() + bias.double(), torch.float32, "strided bias")


@pytest.mark.gpu
def test_matmul_bias_gelu_at_gpu_size(inputs):
    if inputs.device == "cpu":
        pytest.skip("large sizes are for the GPU")
    a, b = inputs.randn(1000, 2048, dtype=torch.bfloat16), inputs.randn(2048, 1500, dtype=torch.bfloat16)
    bias = inputs.randn(1500, dtype=torch.bfloat16)
    got = K.matmul_bias_act(a, b, bias)
    inputs.assert_close(got, F.gelu(a.double() @ b.double() + bias.double()), torch.bfloat16, "bf16 GEMM")


def test_plain_matmul_goes_to_the_vendor_blas(inputs):
    import portagpu

    a, b = inputs.randn(30, 20), inputs.randn(20, 10)
    inputs.assert_close(K.matmul(a, b), a.double() @ b.double(), torch.float32, "matmul")
    assert portagpu.last_backend() is not None


def test_bad_shapes_and_activations_are_refused():
    from portagpu.errors import LaunchError

    with pytest.raises(LaunchError, match="cannot multiply"):
        K.matmul_bias_act(torch.zeros(3, 4), torch.zeros(5, 6))
    with pytest.raises(LaunchError, match="act="):
        K.matmul_bias_act(torch.zeros(3, 4), torch.zeros(4, 6), act="tanh")


def test_a_bias_on_another_device_is_not_given_to_the_fused_kernel():
    """The fused kernel reads the bias through a raw pointer: one on another
    device (here torch's meta device) takes the torch sequence, or is refused
    when the kernel is asked for, instead of a kernel reading foreign memory."""
    from portagpu.errors import LaunchError

    a, b, bias = torch.zeros(3, 4), torch.zeros(4, 6), torch.zeros(6, device="meta")
    with pytest.raises(LaunchError, match="bias on their device"):
        K.matmul_bias_act(a, b, bias, impl="triton")
    with pytest.raises(RuntimeError):  # torch's own refusal of the mix
        K.matmul_bias_act(a, b, bias)
    assert K.last_impl() == "torch"

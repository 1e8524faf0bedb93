"""On an NVIDIA GPU: what the offline check says is what the driver does. A kernel it
says fits the device's arch launches (and its registers, spills and shared memory are
the driver's), one it says does not fit raises Triton's OutOfResources.

Run by the GPU suite (`pytest -m cuda --portagpu-device cuda`); skipped elsewhere."""

from pathlib import Path

import pytest

from portagpu.kernelcheck.check import check_specs
from portagpu.kernelcheck.discover import load_path, spec_from_declaration
from portagpu.kernelcheck.targets import resolve
from portagpu.kernelcheck.verdict import DOES_NOT_FIT, FITS

pytestmark = pytest.mark.cuda

SAMPLES = Path(__file__).with_name("kernelcheck_samples.py")


@pytest.fixture(scope="module")
def gpu():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    major, minor = torch.cuda.get_device_capability(0)
    return torch, resolve(f"sm_{major}{minor}")


def test_a_kernel_the_check_says_fits_launches_with_the_figures_it_gave(gpu, kc_cache):
    """The pytest plugin's path on a GPU: record the launch, then check what was recorded."""
    from portagpu.kernelcheck.record import Recorder

    torch, target = gpu
    samples = load_path(SAMPLES)
    x = torch.arange(4000, device="cuda", dtype=torch.float32)
    out = torch.empty_like(x)
    with Recorder() as recorder:
        compiled = samples.add_kernel[(4,)](x, x, out, 4000, BLOCK=1024, num_warps=4)
    torch.cuda.synchronize()
    assert torch.equal(out, x * 2)
    (spec,) = recorder.specs
    (check,) = check_specs([spec], [target], cache=kc_cache).checks
    assert check.status == FITS, check
    assert check.threads == compiled.metadata.num_warps * 32
    assert check.shared == compiled.metadata.shared
    assert check.registers["regs"] == compiled.n_regs and check.spills == compiled.n_spills


def test_a_kernel_the_check_says_does_not_fit_raises_out_of_resources(gpu, kc_cache):
    from triton.runtime.errors import OutOfResources

    torch, target = gpu
    samples = load_path(SAMPLES)
    # 256 x 256 x 128 fp16 tiles, 3 stages: 256 KiB of shared memory on sm_90 (227 KiB there),
    # 192 KiB on sm_80 (163 KiB there), with Triton 3.6 and 3.9 alike
    tiles = {"BM": 256, "BN": 256, "BK": 128, "num_warps": 8, "num_stages": 3}
    declared = {"a": "*fp16", "b": "*fp16", "c": "*fp32", "K": "i32", **tiles}
    dot = samples.tiled_dot_kernel.fn  # the kernel under its autotuner, launched with fixed tiles
    spec = spec_from_declaration(dot, declared, origin="test")
    (check,) = check_specs([spec], [target], cache=kc_cache).checks
    if check.status != DOES_NOT_FIT:
        pytest.skip(
            f"this tile fits {target.name} ({check.shared} B of shared memory): no proof here"
        )
    assert check.outcome == "launch raises OutOfResources"
    a = torch.randn(256, 256, device="cuda", dtype=torch.float16)
    b = torch.randn(256, 256, device="cuda", dtype=torch.float16)
    c = torch.empty(256, 256, device="cuda", dtype=torch.float32)
    with pytest.raises(OutOfResources, match="shared memory"):
        dot[(1,)](a, b, c, 256, **tiles)

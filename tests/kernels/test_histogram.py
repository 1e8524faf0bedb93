import portagpu.kernels as K
import pytest
import torch


@pytest.mark.parametrize("impl", ["triton", "cuda", None])
# 16: in registers (Triton) / shared memory (CUDA C); 5,000: beyond Triton's block
# histograms; 13,000: beyond the 48 KiB of shared memory of the CUDA C kernel
@pytest.mark.parametrize("bins", [16, 5_000, 13_000])
def test_histogram_counts_exactly_on_bin_centres(inputs, runnable, impl, bins):
    impl = runnable(impl)
    n = 30_011
    # values k + 0.5 over the range [0, bins] sit in the middle of bin k: no rounding
    # can move them, so the counts must be exact
    x = inputs.randint(0, bins, n).float() + 0.5
    got = K.histogram(x, bins, range=(0.0, float(bins)), impl=impl)
    expected = torch.bincount(x.long().cpu(), minlength=bins)
    assert got.dtype == torch.int64
    assert torch.equal(got.cpu(), expected)


@pytest.mark.parametrize("impl", ["triton", "cuda", None])
def test_histogram_of_random_floats_matches_histc(inputs, runnable, impl):
    impl = runnable(impl)
    x = inputs.randn(20_000)
    got = K.histogram(x, 100, range=(-2.0, 2.0), impl=impl).cpu()  # values outside are dropped
    expected = torch.histc(x.double().cpu(), 100, -2.0, 2.0).long()
    # a value within rounding of an edge may land on either side: allow a few moves
    assert int(got.sum()) == int(expected.sum())
    assert int((got - expected).abs().sum()) <= 4, (got - expected).nonzero()


@pytest.mark.parametrize("impl", ["triton", None])
def test_histogram_default_range_is_the_data_range(inputs, runnable, impl):
    impl = runnable(impl)
    x = inputs.randint(-3, 4, 999).float()  # min -3 and max 3 are included
    got = K.histogram(x, 7, impl=impl).cpu()
    assert torch.equal(got, torch.bincount((x.long() + 3).cpu(), minlength=7))


@pytest.mark.parametrize("impl", ["triton", "cuda", None])
def test_histogram_of_crowded_data_aggregates_correctly(inputs, runnable, impl):
    impl = runnable(impl)
    # 90% of the values in one bin: whole warps agree, the CUDA C kernel takes its
    # warp-aggregated path (one atomic per group of lanes)
    x = inputs.randint(0, 64, 40_000).float() + 0.5  # bin centres: exact counts
    x[inputs.randint(0, 10, 40_000) != 0] = 7.5
    got = K.histogram(x, 64, range=(0.0, 64.0), impl=impl)
    assert torch.equal(got.cpu(), torch.bincount(x.long().cpu(), minlength=64))

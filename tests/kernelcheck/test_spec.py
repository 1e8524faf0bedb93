"""Specialisations from launches and declarations, as Triton's own binder makes them
(nothing is compiled here)."""

import pytest

from portagpu.kernelcheck.discover import pointer_params, specs_for_kernel
from portagpu.kernelcheck.spec import KernelSpec, source_hash, specs_of_call, unwrap

torch = pytest.importorskip("torch")


def test_a_launch_becomes_types_constexprs_and_options(samples):
    x = torch.zeros(64)
    (spec,) = specs_of_call(samples.add_kernel, (x, x, x, 64), {"BLOCK": 256, "num_warps": 8})
    assert spec.kernel.short == "add_kernel" and spec.kernel.file.endswith("kernelcheck_samples.py")
    assert spec.arg_types() == {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32"}
    assert spec.constexprs() == {"BLOCK": 256}
    assert spec.options == {"num_warps": 8} and spec.mode == "fixed" and not spec.problem
    # Triton specialises aligned pointers and multiples of 16 ("D"); AMD adds buffer-op ranges
    assert spec.families["cuda"][0] == ["*fp32", "D"] and spec.families["cuda"][3] == ["i32", "D"]
    assert spec.families["hip"][0][1].startswith("D")


def test_an_int_equal_to_one_is_a_constexpr_as_in_triton(samples):
    x = torch.zeros(4)
    (spec,) = specs_of_call(samples.add_kernel, (x, x, x, 1), {"BLOCK": 16})
    assert spec.constexprs() == {"n": 1, "BLOCK": 16}


def test_an_autotuned_launch_gives_one_spec_per_config_in_one_group(samples):
    h = torch.zeros(64, 64, dtype=torch.float16)
    specs = specs_of_call(samples.tiled_dot_kernel, (h, h, h.float(), 64), {})
    assert [s.config for s in specs] == ["1/2", "2/2"] and {s.mode for s in specs} == {"autotune"}
    assert len({s.group for s in specs}) == 1
    assert [s.constexprs()["BK"] for s in specs] == [32, 128]
    assert [s.options["num_stages"] for s in specs] == [2, 4]


def test_unsendable_constexpr_is_a_problem_not_a_crash(samples):
    x = torch.zeros(4)
    (spec,) = specs_of_call(samples.add_kernel, (x, x, x, 4), {"BLOCK": object()})
    assert "cannot be sent to the compiler process" in spec.problem


def test_json_round_trip(samples):
    x = torch.zeros(64)
    (spec,) = specs_of_call(samples.add_kernel, (x, x, x, 64), {"BLOCK": 256})
    again = KernelSpec.from_json(spec.to_json())
    assert again == spec and again.identity() == spec.identity()


def test_source_hash_follows_the_source_of_called_jit_functions(tmp_path):
    from portagpu.kernelcheck.discover import load_path

    body = (
        "import triton\nimport triton.language as tl\n\n@triton.jit\ndef helper(x):\n    return x {op} 1\n\n"
        "@triton.jit\ndef kernel(p):\n    tl.store(p, helper(tl.load(p)))\n"
    )
    one, two = tmp_path / "hash_one.py", tmp_path / "hash_two.py"
    one.write_text(body.format(op="+"))
    two.write_text(body.format(op="-"))
    first, second = load_path(one).kernel, load_path(two).kernel
    assert source_hash(unwrap(first)[0]) != source_hash(unwrap(second)[0])
    assert source_hash(unwrap(first)[0]) == source_hash(unwrap(first)[0])


def test_declarations_and_inferred_pointer_types(samples):
    specs, note = specs_for_kernel(samples.add_kernel)
    assert note == "" and [s.options for s in specs] == [{"num_warps": 32}, {"num_warps": 4}]
    assert [s.origin for s in specs] == ["declared #1", "declared #2"]  # in source order
    assert specs[0].assumed == ""
    assert pointer_params(unwrap(samples.tiled_dot_kernel)[0].fn) == {"a", "b", "c"}
    tuned, _ = specs_for_kernel(samples.tiled_dot_kernel, pointer_dtype="bf16")
    assert [s.config for s in tuned] == ["1/2", "2/2"]
    assert tuned[0].arg_types() == {"a": "*bf16", "b": "*bf16", "c": "*bf16", "K": "i32"}
    assert "argument types assumed: a:*bf16" in tuned[0].assumed


def test_a_kernel_stating_nothing_is_named_not_checked(samples):
    specs, note = specs_for_kernel(samples.no_declaration_kernel)
    assert (
        specs == []
        and "no_declaration_kernel" in note
        and "@portagpu.kernelcheck.signature" in note
    )


def test_signature_is_a_no_op_at_run_time(samples):
    import triton

    assert type(samples.add_kernel).__name__ in ("JITFunction", "InterpretedFunction")
    assert isinstance(samples.add_kernel, triton.runtime.KernelInterface)

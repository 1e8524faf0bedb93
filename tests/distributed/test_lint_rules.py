"""The distributed rule family (rules/distributed.yaml, PG8xx) beyond its YAML
examples: one finding per problem, and the target-awareness of PG801."""

from __future__ import annotations

from portagpu.lint.catalogue import load_catalogue
from portagpu.lint.engine import lint_source
from portagpu.lint.model import LintSettings

SCRIPT = b"""import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group(backend="nccl")
os.environ["CUDA_VISIBLE_DEVICES"] = str(local_rank)
model = DDP(model, device_ids=[local_rank])
"""


def codes(targets, select=None, text=SCRIPT):
    # as the CLI chooses them: the rules that break on one of the targets
    rules = [
        r for r in load_catalogue() if (select is None or r.id in select) and r.applies_to(targets)
    ]
    found = lint_source(text, path="train.py", language="python", rules=rules,
                        settings=LintSettings(targets=targets))  # fmt: skip
    return sorted((f.line, f.code) for f in found if f.code.startswith(("PG8", "PG101")))


def test_each_problem_is_reported_once_per_target():
    assert codes(("cpu",)) == [(7, "PG802"), (8, "PG801"), (10, "PG804")]
    assert codes(("rocm",)) == [(9, "PG803")]  # NCCL, set_device and device_ids work on ROCm
    assert codes(("mps",)) == [(7, "PG802"), (8, "PG801"), (10, "PG804")]


def test_pg802_replaces_pg101_on_the_same_call_only_while_enabled():
    assert (7, "PG101") not in codes(("cpu",))
    assert codes(("cpu",), select={"PG101"}) == [(7, "PG101")]


def test_portable_version_is_clean():
    portable = b"""import os
import torch
import torch.distributed as dist
import portagpu
import portagpu.distributed
from torch.nn.parallel import DistributedDataParallel as DDP

info = portagpu.distributed.init()
model = DDP(model.to(info.torch_device))
"""
    assert codes(("rocm", "mps", "cpu"), text=portable) == []

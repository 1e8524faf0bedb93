import os

import pytest

from portagpu.device import clear_cache


@pytest.fixture(autouse=True)
def clean_state(monkeypatch):
    """No launch or visibility variables from the outer environment, detection
    anew, and no process group or variable left behind by a test (the code
    under test writes os.environ itself)."""
    saved = dict(os.environ)
    for name in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR",
                 "MASTER_PORT", "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
                 "ROCR_VISIBLE_DEVICES"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    # the in-process tests are about the CPU (GPU vendors are simulated in them);
    # on a GPU runner the multi_gpu test's children detect their GPUs themselves
    monkeypatch.setenv("PORTAGPU_DEVICE", "cpu")
    clear_cache()
    yield
    import portagpu.distributed as pgd

    pgd.shutdown()
    os.environ.clear()
    os.environ.update(saved)
    clear_cache()

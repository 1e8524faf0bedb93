# Source this first in every command on the GPU machine (device tool):
#   run(command="source benchmarks/device_setup.sh && python3 ...", carry=[".whl"])
# The machine has torch/triton/cupy but not portagpu's light core deps, and
# nothing can be fetched there: install the carried wheels, then portagpu itself
# (non-editable, so kernels/ rules/ hipify_bridge/ map into portagpu.*).
set -e
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl
rm -rf /tmp/pg  # a warm machine keeps the last install; --target won't replace it
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile \
    --target /tmp/pg . >/dev/null 2>&1 || { echo "portagpu install failed"; exit 1; }
export PYTHONPATH=/tmp/pg:/tmp/site
export PATH=/tmp/pg/bin:$PATH
export PYTHONUNBUFFERED=1
set +e

#!/usr/bin/env bash
# Validate portagpu's CI definitions offline; .ci/run calls this.
#
#   ci/validate.sh                 every workflow under ci/ (and .github/workflows/, which
#                                  must hold unchanged copies of ci/github's files), and
#                                  .pre-commit-hooks.yaml
#   ci/validate.sh FILE.yml...     just these workflows
#
# 1. each workflow against GitHub's workflow schema, vendored inside
#    check-jsonschema (--builtin-schema: no network);
# 2. .pre-commit-hooks.yaml against pre-commit's hook manifest fields
#    (ci/schemas/pre-commit-hooks.schema.json);
# 3. cross-file checks no schema can make (ci/check_workflows.py): inputs the
#    reusable workflow declares, local calls, needs/steps references, and every
#    `portagpu ...` command line against portagpu's own argument parser;
# 4. actionlint too, when it is on PATH (expression types, shellcheck).
# Exits non-zero, naming the file, if anything is wrong.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
PYTHON=${PYTHON:-python3}

if ! command -v check-jsonschema >/dev/null 2>&1; then
    echo "ci/validate.sh: check-jsonschema is not installed (pip install 'portagpu[dev]')" >&2
    exit 2
fi

if [ "$#" -gt 0 ]; then
    workflows=("$@")
    hooks=()
else
    mapfile -t workflows < <(find "$here" -name '*.yml' -o -name '*.yaml' | grep -v '/schemas/' | sort)
    # copies installed in this repository's own .github/workflows, if any
    if [ -d "$root/.github/workflows" ]; then
        mapfile -t -O "${#workflows[@]}" workflows < <(find "$root/.github/workflows" \
            -name '*.yml' -o -name '*.yaml' | sort)
    fi
    hooks=("$root/.pre-commit-hooks.yaml")
fi
if [ "${#workflows[@]}" -eq 0 ]; then
    echo "ci/validate.sh: no workflow files found" >&2
    exit 2
fi

status=0
# A workflow installed under .github/workflows must be the one shipped in ci/github.
for copy in "${workflows[@]}"; do
    case "$copy" in "$root/.github/workflows/"*) ;; *) continue ;; esac
    shipped="$here/github/$(basename "$copy")"
    if [ -f "$shipped" ] && ! cmp -s "$copy" "$shipped"; then
        echo "$copy differs from $shipped: copy ci/github's version over it" >&2
        status=1
    fi
done

echo "-- GitHub workflow schema: ${#workflows[@]} file(s)"
check-jsonschema --builtin-schema vendor.github-workflows "${workflows[@]}" || status=1

if [ "${#hooks[@]}" -gt 0 ]; then
    echo "-- pre-commit hook manifest"
    check-jsonschema --schemafile "$here/schemas/pre-commit-hooks.schema.json" "${hooks[@]}" || status=1
fi

echo "-- cross-file checks"
"$PYTHON" "$here/check_workflows.py" ${hooks[@]:+--hooks "${hooks[0]}"} "${workflows[@]}" && echo "ok -- cross-file checks done" || status=1

if command -v actionlint >/dev/null 2>&1; then
    echo "-- actionlint"
    actionlint -no-color "${workflows[@]}" || status=1
fi

exit "$status"

"""Maps the repo's top-level folders into the portagpu namespace.

kernels/, rules/ and hipify_bridge/ sit at the top of the repo but install
as portagpu.kernels, portagpu.rules and portagpu.hipify_bridge, so no generic
name such as `rules` or `kernels` lands in site-packages.
"""

from setuptools import find_namespace_packages, setup

ROOTS = {
    "portagpu": "portagpu",
    "portagpu.kernels": "kernels",
    "portagpu.rules": "rules",
    "portagpu.hipify_bridge": "hipify_bridge",
}

packages: list[str] = []
package_dir: dict[str, str] = {}
for package, folder in ROOTS.items():
    package_dir[package] = folder
    packages.append(package)
    # namespace search: data folders without __init__.py (kernels/cuda/) are
    # packages too, as setuptools wants for the files they ship
    subpackages = find_namespace_packages(folder, exclude=["*__pycache__*"])
    packages += [f"{package}.{sub}" for sub in subpackages]

setup(packages=packages, package_dir=package_dir)

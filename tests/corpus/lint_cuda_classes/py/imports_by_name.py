"""CUDA-only modules imported by name: importlib, __import__ and a lazy importer."""

import importlib

from polygraphy import mod

driver = mod.lazy_import("cuda.bindings.driver")  # expect: PG305
compiler = importlib.import_module("pycuda.compiler")  # expect: PG304
engine = __import__("tensorrt")  # expect: PG306


def load(name):
    return importlib.import_module(name)  # chosen at run time: nothing to say

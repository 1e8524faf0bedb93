"""Export/inference helpers with ONNX Runtime and TensorRT (lint sample)."""

import onnxruntime as ort

try:
    import tensorrt as trt  # optional backend: not a finding
except ImportError:
    trt = None


def default_providers():
    return ["CUDAExecutionProvider", "CPUExecutionProvider"]  # expect: PG307


def session(path, use_gpu):
    gpu = ["CUDAExecutionProvider", "CPUExecutionProvider"]  # expect: PG307
    providers = gpu if use_gpu else ["CPUExecutionProvider"]
    return ort.InferenceSession(path, providers=providers)


def portable_session(path):
    return ort.InferenceSession(path, providers=ort.get_available_providers())


def build_engine(onnx_path):
    import torch_tensorrt  # expect: PG306

    return torch_tensorrt.compile(onnx_path)

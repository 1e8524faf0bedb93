"""Own code in the style of inference scripts: the other branch of a plain
CUDA test runs where there is no CUDA (a CUDA call there fails), unlike the
other branch of a compound test, of a negated test or of a vendor dispatch;
`hasattr` on the program's own object is no API probe."""

import torch


def load(args, model):
    if args.cuda:
        model.cuda()
    else:
        model.to("cuda")  # expect: PG102
    return model


def replay(graph, warm, use_cuda_graphs):
    if warm or not use_cuda_graphs:
        return None
    else:
        with torch.cuda.graph(graph):  # the CUDA-graph flag is on here
            pass
        return graph


def sync():
    if not torch.cuda.is_available():
        return None
    else:
        torch.cuda.synchronize()
    return True


def vendor_sync():
    if torch.version.hip:
        return "rocm"
    else:
        torch.cuda.synchronize()
    return "cuda"


def sync_all(model):
    if hasattr(model, "gpus"):
        for gpu in model.gpus:
            torch.cuda.synchronize(gpu)  # expect: PG101
    else:
        torch.cuda.synchronize()  # expect: PG101


def has_accelerator_api():
    if hasattr(torch, "accelerator"):
        return torch.cuda.current_device()
    return None

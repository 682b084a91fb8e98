"""How a device computes: the floating-point precision of forward passes, and determinism.

The `precision` setting (conf/config.yaml) names a compute dtype for fine-tuning and for
inference (dump, ablation, analyses):

- `auto`: bfloat16 autocast on a CUDA GPU that supports it, float16 autocast (with a gradient
  scaler when training) on one that does not, float32 everywhere else (CPU);
- `fp32`, `bf16`, `fp16`: that dtype on any device (CPU autocast has both 16-bit types).

Weights stay float32 (autocast runs matmuls in the low dtype, reductions in float32); float32
runs no autocast at all, so its numbers are the plain model's, bit for bit.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import torch

from pipeline.core.errors import PipelineError

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def pick_device(setting: str) -> torch.device:
    """`auto` -> CUDA when available, else CPU; otherwise the named device."""
    if setting == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(setting)


def choose_dtype(setting: str, device_type: str, bf16_supported: bool) -> torch.dtype:
    """The compute dtype of `setting` on a device of type `device_type` ("cpu", "cuda"):
    a pure function of the setting and the device's capabilities."""
    if setting == "auto":
        if device_type != "cuda":
            return torch.float32
        return torch.bfloat16 if bf16_supported else torch.float16
    if setting not in DTYPES:
        raise PipelineError(f"unknown precision '{setting}'; use auto, fp32, bf16 or fp16")
    if setting == "bf16" and device_type == "cuda" and not bf16_supported:
        raise PipelineError("precision=bf16: this GPU has no bfloat16; use precision=fp16 or auto")
    return DTYPES[setting]


def device_dtype(setting: str, device: torch.device) -> torch.dtype:
    """`choose_dtype` for `device`, asking CUDA whether it supports bfloat16."""
    cuda = device.type == "cuda"
    return choose_dtype(setting, device.type, cuda and torch.cuda.is_bf16_supported())


@contextlib.contextmanager
def autocast(setting: str, device: torch.device | str) -> Iterator[torch.dtype]:
    """Run the block in the compute dtype of `setting` on `device`; yields that dtype.
    Float32 runs the block untouched (no autocast)."""
    device = torch.device(device)
    dtype = device_dtype(setting, device)
    if dtype == torch.float32:
        yield dtype
        return
    with torch.autocast(device.type, dtype=dtype):
        yield dtype


def grad_scaler(dtype: torch.dtype, device: torch.device) -> torch.amp.GradScaler:
    """A loss scaler for float16 training (small gradients underflow float16); for any other
    dtype a disabled one, whose calls pass through unchanged."""
    return torch.amp.GradScaler(device.type, enabled=dtype == torch.float16)


def set_determinism(enabled: bool, device: torch.device) -> None:
    """Apply the `deterministic` setting (conf/config.yaml) to the whole process.

    On: deterministic algorithms (`torch.use_deterministic_algorithms`; ops without one warn
    rather than fail), and on CUDA also a fixed cuBLAS workspace (CUBLAS_WORKSPACE_CONFIG,
    read when the process creates its first cuBLAS handle, so it is set before any matmul
    here) and no cuDNN autotuning. Off: the fastest kernels, which on CUDA may add in
    another order from run to run (docs/stages/finetune.md, Determinism). CPU kernels repeat
    on one machine either way.
    """
    if enabled and device.type == "cuda":
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(enabled, warn_only=True)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = not enabled

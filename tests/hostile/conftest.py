"""Fixtures shared by the hostile-input cases."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(params=["fifo", "folder", "device"])
def not_a_library(request, tmp_path) -> tuple[str, str]:
    """A path that an environment variable naming a library file (FPGAPROF_CUPTI_LIBRARY,
    FPGAPROF_NVML_LIBRARY) may hold but must not be opened as one: a FIFO (dlopen would block),
    a folder or a device; with the words fpgaprof's refusal uses for it."""
    if request.param == "fifo":
        p = tmp_path / "libsomething.so.1"
        os.mkfifo(p)
        return str(p), "is a FIFO"
    if request.param == "folder":
        return str(tmp_path), "is a folder"
    return "/dev/zero", "is a device"

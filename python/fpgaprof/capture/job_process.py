"""Which process of a job of several this is: its index (rank) and the job's process count, the
host, and JAX's global ids of its devices (docs/reports.md, "Jobs of several processes").

Read from JAX once ``jax.distributed.initialize()`` has run (``jax.process_index()``,
``jax.process_count()``, ``jax.local_devices()``), else from the launcher's environment, in this
order: Open MPI (``OMPI_COMM_WORLD_RANK``/``_SIZE``), MPICH/Hydra and Intel MPI
(``PMI_RANK``/``PMI_SIZE``), torchrun and Kubernetes-style launchers (``RANK``/``WORLD_SIZE``),
Slurm (``SLURM_PROCID``/``SLURM_NTASKS``) last: a launcher started inside a Slurm step (mpirun
in an sbatch script, torchrun under srun) leaves the step's SLURM_* variables in every process
it starts, so the inner launcher's are the process' own (JAX's cluster detection also reads
Open MPI before Slurm). A launcher whose variables name no job (a count of 1) does not hide
the next. No launcher naming a job is a one-process run, as before.
"""

from __future__ import annotations

import dataclasses
import os
import re
import socket
import sys
from collections.abc import Mapping

from fpgaprof.base.text import ascii_whole_number

__all__ = [
    "JobProcess",
    "LAUNCHER_VARIABLES",
    "from_environment",
    "from_jax",
    "current",
    "rank_folder_name",
    "RANK_FOLDER_RE",
    "pid_folder_name",
    "PID_FOLDER_RE",
]

# (source, index variable, count variable), in the order they are read.
# Innermost launcher first: Slurm can only be the outermost (its variables are inherited by
# the processes of an mpirun or torchrun started in the step).
LAUNCHER_VARIABLES: tuple[tuple[str, str, str], ...] = (
    ("OMPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
    ("PMI", "PMI_RANK", "PMI_SIZE"),
    ("RANK", "RANK", "WORLD_SIZE"),
    ("SLURM", "SLURM_PROCID", "SLURM_NTASKS"),
)

# A rank folder's name: "<host>-rank<index>" (rank_folder_name).
RANK_FOLDER_RE = re.compile(r"^(?P<host>.*)-rank(?P<index>[0-9]+)$")
# The folder a `fpgaprof run` takes inside one another run holds: "<host>-pid<pid>"
# (pid_folder_name).
PID_FOLDER_RE = re.compile(r"^(?P<host>.*)-pid(?P<pid>[0-9]+)$")


@dataclasses.dataclass(frozen=True)
class JobProcess:
    """One process of a job: ``index`` in [0, ``count``), where that came from (``source``:
    "jax" or the launcher's name), ``host`` (the host name), and ``global_device_ids``: JAX's
    global device id per local device id (CUDA ordinal, as CUPTI's device ids; -1 unknown;
    empty without JAX)."""

    index: int
    count: int
    source: str
    host: str
    global_device_ids: tuple[int, ...] = ()

    def meta(self) -> dict:
        """The trace META fields (TraceStore.set_meta keywords, docs/trace-format.md)."""
        return {
            "process_index": self.index,
            "process_count": self.count,
            "process_source": self.source,
            "host_name": self.host,
            "global_device_ids": list(self.global_device_ids),
        }

    def folder_name(self) -> str:
        return rank_folder_name(self.host, self.index)


def host_name() -> str:
    return socket.gethostname() or "localhost"


def _folder_host(host: str) -> str:
    """The host reduced to letters, digits, '.', '_' and '-' (a file name on every system;
    anything else becomes '_')."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", host) or "host"


def rank_folder_name(host: str, index: int) -> str:
    """``<host>-rank<index>``, the host as a file name allows it."""
    return f"{_folder_host(host)}-rank{int(index)}"


def pid_folder_name(host: str, pid: int) -> str:
    """``<host>-pid<pid>``: where a `fpgaprof run` writes when its folder is another run's."""
    return f"{_folder_host(host)}-pid{int(pid)}"


def _int(environ: Mapping[str, str], name: str) -> int | None:
    """The variable as a whole number of ASCII digits, else None ("²" is no rank: it raised
    ValueError in the traced program)."""
    return ascii_whole_number(environ.get(name, ""))


def from_environment(environ: Mapping[str, str] | None = None) -> JobProcess | None:
    """The process as the launcher's environment names it; None outside a job of several
    processes (no variables, a count of 1, or an index not below the count)."""
    env = os.environ if environ is None else environ
    for source, index_var, count_var in LAUNCHER_VARIABLES:
        index, count = _int(env, index_var), _int(env, count_var)
        if index is None or count is None:
            continue
        if count > 1 and index < count:
            return JobProcess(index, count, source, host_name())
        # no job by this launcher (a one-task Slurm step): an inner one may still name one
    return None


def from_jax() -> JobProcess | None:
    """The process as JAX sees it, only where the program imported JAX and initialised
    ``jax.distributed`` (never imports or starts JAX itself); None otherwise."""
    jax = sys.modules.get("jax")
    if jax is None:
        return None
    try:
        if not jax.distributed.is_initialized():
            return None
        count = int(jax.process_count())
        if count <= 1:
            return None
        ids: dict[int, int] = {}
        for d in jax.local_devices():
            local = getattr(d, "local_hardware_id", None)
            if isinstance(local, int) and local >= 0:
                ids[local] = int(d.id)
        table = tuple(ids.get(i, -1) for i in range(max(ids) + 1)) if ids else ()
        return JobProcess(int(jax.process_index()), count, "jax", host_name(), table)
    except Exception:  # noqa: BLE001 - a JAX without these calls: the launcher's view instead
        return None


def current(environ: Mapping[str, str] | None = None) -> JobProcess | None:
    """JAX's view where it has one, else the launcher's, else None (one process)."""
    return from_jax() or from_environment(environ)

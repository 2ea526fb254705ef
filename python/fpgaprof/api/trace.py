"""``fpgaprof.trace()`` and ``fpgaprof.region()``."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import os
import sys
import tempfile
import threading
import time
import warnings
from typing import Any, Literal

import numpy as np

from fpgaprof.api.profile import Profile
from fpgaprof.base.constants import BUFFER_BYTES_MAX, BUFFER_BYTES_MIN, TRACE_FILE_NAME
from fpgaprof.base.core import core
from fpgaprof.base.errors import (
    CuptiUnavailableError,
    FpgaprofError,
    FpgaprofIOError,
    FpgaprofWarning,
    InvalidArgumentError,
    ProfilerConflictError,
)
from fpgaprof.base.markup import esc
from fpgaprof.base.text import native_path, utf8_safe
from fpgaprof.capture import hlo_dump, job_process, process_env
from fpgaprof.capture.run_environment import meta_environment
from fpgaprof.capture.signals import SaveOnSignal
from fpgaprof.views.tables import Table

__all__ = ["trace", "region"]

# Re-entrant: `fpgaprof run` saves the trace from a SIGTERM handler, which runs on the main
# thread and may interrupt it while it holds this lock.
_lock = threading.RLock()
_active: trace | None = None
# What a forked child left of its parent's trace (trace._leave_in_forked_child), never freed.
_FORKED_LEFTOVERS: list[tuple[Any, Any, Any]] = []


class trace:
    """Traces the GPU work of the ``with`` body; ``as`` gives the Profile (filled at exit).

    ``with fpgaprof.trace("run.fpgaprof") as prof: step()`` records every kernel, copy,
    memset, allocation, API call, NVTX range and region of the body, joins them, and saves
    the trace file atomically when ``path`` is given. The body's exception (if any) is
    propagated unchanged, after the trace is stopped and saved.

    Without a usable GPU the body still runs and the Profile holds wall time and regions; one
    FpgaprofWarning says what is missing and how to fix it (``require_gpu=True`` raises
    CuptiUnavailableError instead). Another CUPTI user (Nsight, ``jax.profiler.trace``) or a
    trace already running raises ProfilerConflictError — except under ``fpgaprof run``, where
    the whole program is traced already: there the block becomes a region (named ``name``,
    default "trace") of the run's trace, with one FpgaprofWarning saying so, and ``as`` gives a
    NestedProfile (see there). In a process forked from a tracing one (a multiprocessing
    'fork' worker) it raises ProfilerConflictError saying so: start such workers by spawn or
    forkserver. Each ``with`` of a trace object gives a new Profile. ``buffer_size``: bytes per
    CUPTI activity buffer, 4096 to 1 GiB. ``device_buffer_size``: bytes of CUPTI's device
    buffer for GPU timestamps (CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE), 4096 to 1 GiB, or 0
    for CUPTI's default (0 by default): raise it when the trace warns of records without
    timestamps from a full device buffer (docs/capture.md). ``counters=True`` also collects
    per-kernel hardware counters (DRAM bytes, FP instruction counts; CUPTI Range Profiler,
    kernel replay: kernels run once per pass) into ``prof.counters`` for the measured roofline;
    when they cannot be collected a FpgaprofWarning says why and the trace goes on without
    them.
    ``power_sample_ms``: the period of the GPUs' power and energy readings through NVML
    (docs/capture.md, "GPU power and energy"; ``prof.power_samples``,
    ``prof.energy_report()``); 0 turns them off.

    In a job of several processes (``jax.distributed`` initialised, or a launcher's rank
    variables: fpgaprof.capture.job_process), ``path`` may name a folder shared by the job's
    processes: each saves ``<path>/<host>-rank<k>/trace.fpgaprof``, with its process index and
    count, host and global device ids in the trace's metadata (every trace gets those where they
    are known). ``path`` is checked when the block is entered, before the body runs: a folder as
    the path outside such a job raises InvalidArgumentError, a missing or unwritable folder
    FpgaprofIOError (one line each, with the fix). A save that still fails at exit (the folder
    removed meanwhile, disk full) raises FpgaprofIOError saying that ``prof`` still holds the
    records: ``prof.save(other)``.

    With ``path``, a SIGTERM or SIGHUP (a scheduler's time limit, a closed terminal) that the
    program has left at its default action saves the trace first (with a warning that it
    ends there) and then ends the process as the signal would have (fpgaprof.capture.signals).
    """

    def __init__(
        self,
        path: str | os.PathLike | None = None,
        *,
        require_gpu: bool = False,
        buffer_size: int = 8 << 20,
        device_buffer_size: int = 0,
        counters: bool = False,
        name: str | None = None,
        power_sample_ms: float = 1.0,
    ) -> None:
        for what, value, default, zero in (
            ("buffer_size", buffer_size, "8 MiB", False),
            ("device_buffer_size", device_buffer_size, "0: CUPTI's own", True),
        ):
            if (
                not isinstance(value, (int, np.integer))  # numpy integers too
                or isinstance(value, (bool, np.bool_))
                or not (BUFFER_BYTES_MIN <= value <= BUFFER_BYTES_MAX or (zero and value == 0))
            ):
                raise InvalidArgumentError(
                    f"fpgaprof.trace: {what} must be an int of {BUFFER_BYTES_MIN} bytes to "
                    f"{BUFFER_BYTES_MAX:,} (1 GiB){' or 0' if zero else ''}, got {value!r} "
                    f"({default} by default)"
                )
        if (
            not isinstance(power_sample_ms, (int, float, np.integer, np.floating))
            or isinstance(power_sample_ms, (bool, np.bool_))
            or not (power_sample_ms == 0 or 0.1 <= power_sample_ms <= 60_000)
        ):
            raise InvalidArgumentError(
                "fpgaprof.trace: power_sample_ms must be 0 (off) or a number of milliseconds "
                f"from 0.1 to 60000, got {power_sample_ms!r} (1.0 by default)"
            )
        self.power_sample_ns = int(round(float(power_sample_ms) * 1e6))
        # bytes (a file name that is not UTF-8) as str with surrogate escapes, as load() takes it
        self.path: str | None = os.fsdecode(os.fspath(path)) if path is not None else None
        if self.path == "":
            raise InvalidArgumentError(
                f"fpgaprof.trace({self.path!r}): the path is empty; give a file path such as "
                "'run.fpgaprof', or None to keep the trace in memory only"
            )
        self.require_gpu = bool(require_gpu)
        self.buffer_size = int(buffer_size)
        self.device_buffer_size = int(device_buffer_size)
        self.profile = Profile()
        self._session: Any = None
        self._warnings: list[tuple[str, str]] = []  # (code, message): base.diagnostics
        self.counters = bool(counters)
        self._counters: Any = None
        self._counters_thread: int | None = None  # the thread that started them (checkpoints)
        self._counters_base_depth = 0  # its open regions when they started
        self.name = str(name) if name is not None else None
        # Set by `fpgaprof run`'s runner on the trace it starts: traces opened inside it nest.
        self.owned_by_run = False
        # Set by that runner when no launcher named this process' rank: a process that turns
        # out, by the save, to be one of a jax.distributed job (initialised by hand) saves to
        # job_root/<host>-rank<k>/trace.fpgaprof instead of `path`, as a job folder holds it.
        self.job_root: str | None = None
        self._outer: trace | None = None  # the run's trace, when this one is nested in it
        self._nested: list[tuple[NestedProfile, str | None]] = []
        self._signals: Any = None  # saves the file on SIGTERM/SIGHUP (capture.signals)
        self._job_folder: str | None = None  # `path` was the folder of a multi-process job
        self._pid = os.getpid()  # the process that entered the block (a forked child is not)
        self._warned_out_of_order = False  # regions ended out of order: said (region.__exit__)

    def __enter__(self) -> Profile:
        global _active
        if self.path is not None and os.path.isdir(self.path) and job_process.current():
            self._job_folder = os.path.abspath(self.path)
            self.path = None  # known once the process index is final (at the save)
            _check_writable(os.path.join(self._job_folder, TRACE_FILE_NAME))
        if self.path is not None:
            _check_writable(self.path)  # before the body runs, not after it
            # saved where it was checked, also when the body changes the working folder
            self.path = os.path.abspath(self.path)
        with _lock:
            outer = _active
            if outer is not None and outer._pid != os.getpid():
                raise ProfilerConflictError(
                    "fpgaprof.trace(): this process was forked from one that is tracing (a "
                    "multiprocessing worker started by 'fork', or os.fork()): a forked child "
                    "cannot trace, as CUDA and CUPTI do not work in a child forked after they "
                    "started; start such workers with multiprocessing's 'spawn' or 'forkserver' "
                    "method (multiprocessing.get_context('spawn')) and trace them there"
                )
            if outer is not None and outer.owned_by_run and outer._session is not None:
                pass  # nested in the run's trace: a region of it (below)
            elif outer is not None:
                raise ProfilerConflictError(
                    "fpgaprof.trace() is already running in this process (nested or concurrent "
                    "traces are not supported): end the outer `with fpgaprof.trace()` block first, "
                    "or use fpgaprof.region() to mark parts of one trace"
                )
            else:
                _active = self
        self._pid = os.getpid()
        if outer is not None:
            return self._enter_nested(outer)
        # Each use of the block gives a Profile of its own: a trace object entered again (a
        # notebook cell run twice) must not turn the first Profile into the second trace.
        self.profile = Profile()
        self._warnings = []
        self._warned_out_of_order = False
        try:
            self._session = core.CaptureSession.start(
                buffer_bytes=self.buffer_size,
                device_buffer_bytes=self.device_buffer_size,
                require_gpu=self.require_gpu,
                power_sample_period_ns=self.power_sample_ns,
            )
        except BaseException:
            with _lock:
                _active = None
            raise
        try:
            self._after_start()
        except BaseException:
            # e.g. a warning turned into an error (-W error): no trace may stay running
            session, self._session = self._session, None
            counters, self._counters = self._counters, None
            try:
                store = session.stop()
                if counters is not None:
                    counters.stop_into(store)
            except Exception:  # noqa: BLE001 - the original error is the one to raise
                pass
            with _lock:
                _active = None
            raise
        return self.profile

    def _after_start(self) -> None:
        if not self._session.gpu_active:
            reason = self._session.unavailable_reason or "CUPTI could not be started"
            # The advice fits where the trace was opened: `fpgaprof run` has no require_gpu.
            advice = (
                "`fpgaprof devices` shows what was found; the run goes on without GPU data"
                if self.owned_by_run
                else "Pass require_gpu=True to make this an error."
            )
            msg = (
                f"fpgaprof.trace: no GPU activity is recorded ({reason}); the profile holds "
                f"wall time and regions only. {advice}"
            )
            self._warnings.append(("capture.no_gpu", msg))
            warnings.warn(msg, FpgaprofWarning, stacklevel=3)
        if self.counters:
            self._start_counters()
        if (self.path is not None or self._job_folder) and not self.owned_by_run:
            # `fpgaprof run` has its own
            msg = ""
            try:
                self._signals = SaveOnSignal(self._save_on_signal, "fpgaprof.trace")
                if not self._signals.install():
                    msg = (
                        "fpgaprof.trace: the trace will not be saved on SIGTERM/SIGHUP (the block "
                        "was entered outside the main thread, where Python cannot take signals): "
                        "open fpgaprof.trace(path) on the main thread for that safety net"
                    )
            except Exception as e:  # noqa: BLE001 - tracing goes on; only this safety net is missing
                msg = f"fpgaprof.trace: the trace will not be saved on SIGTERM/SIGHUP ({e})"
            if msg:
                self._warnings.append(("capture.signal_handler", msg))
                warnings.warn(msg, FpgaprofWarning, stacklevel=3)

    def _note_warning(self, code: str, msg: str) -> None:
        """A warning saved with the trace (`code`: base.diagnostics), said by the caller."""
        self._warnings.append((code, msg))

    def _note_ended_by(self, signal_name: str) -> None:
        """Marks the trace as cut short by a signal (a warning saved with it)."""
        self._note_warning(
            "capture.interrupted",
            f"the program was ended by {signal_name}: the trace covers it up to then",
        )

    def _save_on_signal(self, name: str) -> None:
        self._note_ended_by(name)
        self.__exit__(None, None, None)

    def _start_counters(self) -> None:
        code = "counters.unavailable"
        if not self._session.gpu_active:
            msg = "fpgaprof.trace(counters=True): no GPU trace, so no hardware counters"
        else:
            try:
                self._counters = core.analysis.CounterSession.start()
                self._counters_thread = threading.get_ident()
                # regions open on this thread before the trace (one around it, one a notebook
                # cell left open): a step ends when the depth comes back to this
                self._counters_base_depth = len(_thread_regions())
            except Exception as e:  # noqa: BLE001 - CountersError / CuptiUnavailableError: say why
                msg = f"fpgaprof.trace(counters=True): hardware counters not collected: {e}"
            else:
                if "jax" not in sys.modules or not process_env.jax_preallocates():
                    return
                code, msg = "counters.preallocation", process_env.COUNTERS_PREALLOCATION_WARNING
        self._warnings.append((code, msg))
        warnings.warn(msg, FpgaprofWarning, stacklevel=4)

    def _counter_checkpoint(self) -> None:
        """Called when the tracing thread's region depth comes back to where it was when
        counting started (the end of a step: a region opened inside the trace): the counter
        image holds a bounded number of ranges (one per kernel), so it is decoded and re-armed
        between steps rather than overflowing (dropped ranges are counted, but lost). A failure
        stops further checkpoints and is kept as a warning; timing data is unaffected."""
        counters = self._counters
        if counters is None or threading.get_ident() != self._counters_thread:
            return
        try:
            counters.checkpoint()
        except Exception as e:  # noqa: BLE001 - counters are extra; the run must go on
            self._counters_thread = None
            msg = (
                f"fpgaprof.trace(counters=True): counter checkpoint at the end of a region failed "
                f"({e}); no more checkpoints in this trace: kernels past the image's capacity "
                "or after the failure get no counters (counted when the trace ends)"
            )
            self._warnings.append(("counters.window_unread", msg))
            warnings.warn(msg, FpgaprofWarning, stacklevel=3)

    def _enter_nested(self, outer: trace) -> NestedProfile:
        if self.require_gpu and not outer._session.gpu_active:
            raise CuptiUnavailableError(
                "fpgaprof.trace(require_gpu=True) inside `fpgaprof run`: the run's trace records "
                "no GPU activity ("
                + (outer._session.unavailable_reason or "CUPTI not started")
                + "): run it on a machine with an NVIDIA GPU and its driver"
            )
        name = self.name or "trace"
        parts = [
            f"fpgaprof.trace() inside `fpgaprof run`: the program is traced already, so "
            f"this block is recorded as region {name!r} of the run's trace "
            f"({outer.path}); the Profile it gives fills with the whole run's records "
            f"when the program ends (read them with `fpgaprof report` on the run's folder)"
        ]
        if self.path is not None:
            parts.append(f"{self.path} receives a copy of the run's trace then")
        if self.counters and not outer.counters:
            parts.append("counters=True is ignored (use `fpgaprof run --counters`)")
        msg = "; ".join(parts)
        prof = NestedProfile(name, outer.path, self.path, [msg])
        self.profile = prof
        self._outer = outer
        warnings.warn(msg, FpgaprofWarning, stacklevel=3)
        prof._start_ns = time.time_ns()
        core.region_push(utf8_safe(name))
        return prof

    def _exit_nested(self) -> None:
        outer, self._outer = self._outer, None
        core.region_pop()
        prof = self.profile
        if not isinstance(prof, NestedProfile):
            return
        prof._end_ns = time.time_ns()
        if outer is not None:
            with _lock:
                outer._nested.append((prof, self.path))

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Literal[False]:
        global _active
        if self._outer is not None:
            self._exit_nested()
            return False
        if os.getpid() != self._pid:
            self._leave_in_forked_child()
            return False
        signals, self._signals = self._signals, None
        if signals is not None:
            signals.finishing()  # a SIGTERM now waits for the save below, then ends the process
        clean_exit = exc_type is SystemExit and getattr(exc, "code", None) in (None, 0)
        if exc_type is not None and not clean_exit and self._session is not None:
            # saved with the trace: a file of a block that a Ctrl-C or an error cut short must
            # not read as the whole workload (summary(), report.html, a comparison)
            self._warnings.append(
                (
                    "capture.interrupted",
                    f"the traced block ended by an exception ({exc_type.__name__}"
                    + (f": {utf8_safe(' '.join(str(exc).split()))[:200]}" if str(exc) else "")
                    + "): the trace covers it up to then",
                )
            )
        try:
            self._finish()
        except Exception as err:
            if exc_type is None:
                raise
            # The body's exception wins; ours is reported, not lost.
            warnings.warn(
                f"fpgaprof.trace could not finish the trace after the body raised: {err}",
                FpgaprofWarning,
                stacklevel=2,
            )
        finally:
            with _lock:
                _active = None
            if signals is not None:
                signals.uninstall()
        return False

    def _leave_in_forked_child(self) -> None:
        """A child forked inside the block (os.fork()) runs on out of it: the capture, CUPTI's
        state and the file are the parent's, which stops and saves the trace. The child's copies
        are kept, untouched, to the process's end (stopping or freeing them would call into the
        parent's CUPTI and take locks the fork may have copied held). The block stays the
        child's active trace: a trace the child starts is told that it was forked from a tracing
        process, and how to start workers that can trace."""
        _FORKED_LEFTOVERS.append((self._session, self._counters, self._signals))
        self._session = self._counters = self._signals = None
        warnings.warn(
            f"fpgaprof.trace: process {os.getpid()}, forked inside the traced block of process "
            f"{self._pid}, left the block: only process {self._pid} stops and saves the trace",
            FpgaprofWarning,
            stacklevel=3,
        )

    def _finish(self) -> None:
        session, self._session = self._session, None
        if session is None:
            return
        counters, self._counters = self._counters, None
        if counters is not None:
            try:  # counting ends before the activity session: later kernels are in no window
                counters.finish()
            except Exception as e:  # noqa: BLE001 - timing data is still good
                self._warnings.append(
                    ("counters.stop_failed", f"hardware counters could not be stopped: {e}")
                )
        store = session.stop()
        # Attached at once: an interrupt (Ctrl-C) in what follows leaves prof holding the
        # records (prof.save(path) writes them), not a Profile that says the trace still runs.
        self.profile.attach(store, None)
        if counters is not None:
            try:
                counters.stop_into(store)
            except Exception as e:  # noqa: BLE001 - timing data is still good
                self._warnings.append(
                    ("counters.stop_failed", f"hardware counters could not be read back: {e}")
                )
        store.correlate()
        have = set(store.meta["warnings"])
        for code, w in [("capture.process_setup", w) for w in process_env.process_warnings] + (
            self._warnings
        ):
            if w not in have:
                have.add(w)
                store.add_warning(w, code)
        proc = job_process.current()
        if proc is not None:
            store.set_meta(**proc.meta())
        if self._job_folder is None and self.job_root is not None and proc is not None:
            self._job_folder = self.job_root
        env = meta_environment()  # JAX, MBIRJAX, Python versions: read back by the reports
        if env:
            try:
                store.set_meta(environment=env)
            except Exception as e:  # noqa: BLE001 - an older core: the trace is still good
                self._warnings.append(
                    (
                        "capture.environment",
                        f"the environment could not be recorded in the trace: {e}",
                    )
                )
        if self._job_folder is not None:
            folder = os.path.join(
                self._job_folder,
                proc.folder_name() if proc else job_process.rank_folder_name("unknown", 0),
            )
            os.makedirs(folder, exist_ok=True)
            self.path = os.path.join(folder, TRACE_FILE_NAME)
        _attach_hlo_modules(store)
        self.profile.attach(store, self.path)
        if self.path is not None:
            try:
                store.save(native_path(self.path))
            except FpgaprofError as e:
                if self.owned_by_run:  # no `as` target: the process is ending
                    raise
                raise type(e)(
                    f"{' '.join(str(e).split())}; the trace is not lost: prof (the "
                    "`as` target) still holds the records: prof.save(other_path)"
                ) from e
        with _lock:
            nested, self._nested = self._nested, []
        for prof, path in nested:
            prof.attach(store, path if path is not None else self.path)
            if path is None:
                continue
            try:
                store.save(native_path(path))
            except Exception as e:  # noqa: BLE001 - the run's trace is saved; say what is not
                warnings.warn(
                    f"fpgaprof.trace({path!r}) inside `fpgaprof run`: the copy of the "
                    f"run's trace was not written: {e}",
                    FpgaprofWarning,
                    stacklevel=2,
                )


def _check_writable(path: str) -> None:
    """Raises (one line: cause and fix) when the trace file cannot be written at ``path``: a
    folder given as the path (InvalidArgumentError), a missing or unwritable folder
    (FpgaprofIOError). Probes with a temporary file, the way the save writes (also right for
    root, for whom os.access says yes to everything)."""
    if os.path.isdir(path):
        raise InvalidArgumentError(
            f"fpgaprof.trace({path!r}): that path is a folder; give a file path such as "
            f"{os.path.join(path, 'trace.fpgaprof')!r} (a folder is taken only in a job of "
            "several processes: after jax.distributed.initialize() or under a launcher)"
        )
    if not os.path.basename(path):
        # "out/" names a folder that does not exist yet: abspath() would drop the "/" and probe
        # the folder above, and the save would fail only when the block ends
        raise InvalidArgumentError(
            f"fpgaprof.trace({path!r}): that path ends in a separator, so it names a folder "
            f"(one that does not exist); give a file path such as "
            f"{os.path.join(path, 'trace.fpgaprof')!r}"
        )
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        what = "is a file, not a folder" if os.path.exists(folder) else "does not exist"
        raise FpgaprofIOError(
            f"fpgaprof.trace({path!r}): the folder {folder} {what}; create the folder first "
            "(os.makedirs) or choose another path"
        )
    try:
        fd, probe = tempfile.mkstemp(prefix=".fpgaprof-probe-", dir=folder)
    except OSError as e:
        raise FpgaprofIOError(
            f"fpgaprof.trace({path!r}): cannot write into {folder} ({e.strerror or e}); choose "
            "a writable folder"
        ) from None
    os.close(fd)
    try:
        os.unlink(probe)
    except OSError:
        pass


class NestedProfile(Profile):
    """What ``fpgaprof.trace()`` gives inside a program that ``fpgaprof run`` traces already.

    The block is a region (``region_name``) of the run's trace, which CUPTI fills until the
    program ends. After the block: ``wall_time_ns`` (the block's host time), ``warnings``,
    ``summary()`` and ``repr`` work; record tables are empty and the analysis tables
    (``ops``, ``roofline()``, ``fpga_candidates()``) have no rows and say where the records are
    (the run's trace file), so a script written for a plain ``fpgaprof.trace()`` runs on.
    When the run's trace stops (program end) the Profile is attached to the whole run's
    records (filter by ``region_name``), and a ``path`` given to trace() receives a copy of
    the run's trace file.
    """

    def __init__(
        self, region_name: str, run_trace_path: str | None, path: str | None, notes: list[str]
    ) -> None:
        super().__init__(None, path=path)
        self.region_name = region_name
        self.run_trace_path = run_trace_path
        self._notes = list(notes)
        self._start_ns = 0
        self._end_ns = 0
        self._placeholder: Any = None

    @property
    def pending_note(self) -> str:
        """Why the tables are empty before the run's trace is attached ("" after)."""
        if self._store is not None:
            return ""
        return (
            f"inside `fpgaprof run`: this block is region {self.region_name!r} of the run's "
            f"trace, written to {self.run_trace_path} when the program ends (fpgaprof.load "
            f"or `fpgaprof report` on it)"
        )

    def _s(self) -> Any:
        if self._store is not None:
            return self._store
        # Until the run ends there are no records to give; an empty store lets every table and
        # analysis answer (no rows, with pending_note saying where the records will be) so that
        # a script written for a plain trace() runs on unchanged.
        if self._placeholder is None:
            store = core.TraceStore()
            store.set_meta(gpu_available=False, unavailable_reason=self.pending_note)
            self._placeholder = store
        return self._placeholder

    def _pending(self, table: Any) -> Any:
        note = self.pending_note
        if note and isinstance(table, Table):  # by="trace" gives a dict
            table.empty_note = note
        return table

    def save(self, path: str | os.PathLike) -> str:
        """Before the run's trace is written there is nothing of this block to save: raises
        FpgaprofError naming the run's trace (``trace(path)`` gets its copy when it is)."""
        if self._store is None:
            raise FpgaprofError(
                f"nothing to save yet: this fpgaprof.trace() ran inside `fpgaprof run`, whose "
                f"trace holds its records (region {self.region_name!r}) and is written to "
                f"{self.run_trace_path} when the program ends; pass the path to "
                f"fpgaprof.trace(path) to get a copy then, or copy that file"
            )
        return super().save(path)

    @property
    def ops(self) -> list:
        return self._pending(super().ops)

    def export_hlo(self, op: str, path: str | os.PathLike, module: str | None = None) -> str:
        """Before the run's trace is written there are no HLO modules here: raises
        FpgaprofError saying where they will be (not "trace a jitted JAX function")."""
        if self._store is None:
            raise FpgaprofError(
                f"export_hlo({op!r}): {self.pending_note}; export the op from it then: "
                f"fpgaprof.load({self.run_trace_path!r}).export_hlo({op!r}, ...)"
            )
        return super().export_hlo(op, path, module=module)

    def roofline(self, *args: Any, **kwargs: Any) -> Any:
        return self._pending(super().roofline(*args, **kwargs))

    def fpga_candidates(self, *args: Any, **kwargs: Any) -> Any:
        return self._pending(super().fpga_candidates(*args, **kwargs))

    @property
    def wall_time_ns(self) -> int:
        """The block's duration on the host, ns (0 while it runs)."""
        return max(self._end_ns - self._start_ns, 0)

    @property
    def warnings(self) -> list[str]:
        return list(self._notes) + (
            list(self._store.meta["warnings"]) if self._store is not None else []
        )

    def summary(self, top: int = 15) -> str:
        if self._store is not None:
            return super().summary(top)
        return (
            f"fpgaprof.trace region {self.region_name!r} inside `fpgaprof run`: "
            f"{self.wall_time_ns / 1e6:.3f} ms wall time; kernels, copies and the "
            f"analysis are in the run's trace {self.run_trace_path} once the program "
            f"ends\n"
        )

    def _repr_html_(self) -> str:
        if self._store is not None:
            return super()._repr_html_()
        return "<pre>" + esc(self.summary()) + "</pre>"

    def __repr__(self) -> str:
        if self._store is not None:
            return super().__repr__()
        return (
            f"<fpgaprof.NestedProfile region {self.region_name!r} of the `fpgaprof run` "
            f"trace, {self.wall_time_ns / 1e9:.3f} s>"
        )


def _attach_hlo_modules(store: Any) -> None:
    """Copies the HLO modules XLA dumped for this trace into the store (capture.hlo_dump)."""
    try:
        hlo_dump.attach_hlo_modules(store)
    except Exception as e:  # noqa: BLE001 - the trace itself is fine; say what is missing
        store.add_warning(
            f"HLO modules could not be attached to the trace "
            f"({type(e).__name__}: {e}); "
            "kernels are attributed by name only",
            "capture.hlo_dump",
        )


_region_stack = threading.local()  # the open fpgaprof regions on this thread, innermost last
_context_open: contextvars.ContextVar[tuple] = contextvars.ContextVar(
    "fpgaprof_open_regions", default=()
)


def _thread_regions() -> list:
    """The tokens of the regions open on this thread (region.__enter__), innermost last: as
    many as the core's per-thread stack holds, so its length is the thread's region depth."""
    stack = getattr(_region_stack, "s", None)
    if stack is None:
        stack = _region_stack.s = []
    return stack


def _out_of_order(name: str) -> None:
    """A region ended while another, opened after it on the same thread, is still open: two
    asyncio tasks interleaving `with fpgaprof.region()` on one thread (each task has its own
    context; generators share their caller's, so theirs is not seen). The core's per-thread
    stack then ends the other region, so both regions' times and nesting are wrong: said once
    per trace (nothing is recorded without one)."""
    t = _active
    if t is None or t._warned_out_of_order:
        return
    t._warned_out_of_order = True
    msg = (
        f"fpgaprof.region({utf8_safe(name)!r}) ended while a region opened after it on the same "
        "thread was still open (asyncio tasks interleaving regions on one thread): regions on a "
        "thread nest, so these regions' times, nesting and GPU work are wrong; put one region "
        "around the whole gather/loop instead, or run each task on its own thread"
    )
    t._warnings.append(("capture.regions_out_of_order", msg))  # saved with the trace
    warnings.warn(msg, FpgaprofWarning, stacklevel=3)


class region(contextlib.ContextDecorator):
    """Marks a named part of the program, as a context manager or a decorator.

    ``with fpgaprof.region("solve"): ...`` or ``@fpgaprof.region("solve")`` (or bare
    ``@fpgaprof.region``, named after the function). Recorded while a trace runs, on the
    calling thread (thread-safe; each thread has its own nesting), also as an NVTX range in
    domain "fpgaprof" for other tools. Costs almost nothing without a trace or a GPU.
    """

    def __new__(cls, name: Any = None) -> Any:
        if callable(name) and not isinstance(name, str):
            # Bare @region: the function names the region.
            func = name
            inner = super().__new__(cls)
            inner.name = getattr(func, "__qualname__", getattr(func, "__name__", "region"))
            return functools.wraps(func)(inner(func))
        return super().__new__(cls)

    def __call__(self, func: Any) -> Any:
        if (
            inspect.iscoroutinefunction(func)
            or inspect.isgeneratorfunction(func)
            or inspect.isasyncgenfunction(func)
        ):
            # The call only creates the coroutine or generator: a region around it would end
            # before its body ran, and time nothing.
            raise InvalidArgumentError(
                f"@fpgaprof.region on {getattr(func, '__qualname__', func)!r}: an async or "
                "generator function's body runs after the call returns, so the region would time "
                "nothing; put `with fpgaprof.region(...):` inside its body instead"
            )
        return super().__call__(func)

    def __init__(self, name: Any = None) -> None:
        if callable(name) and not isinstance(name, str):
            return
        if name is None:
            raise TypeError("fpgaprof.region() needs a name: region('solve')")
        self.name = str(name)

    def __enter__(self) -> region:
        core.region_push(utf8_safe(self.name))
        # Which open region this `with` is: on the thread's stack (the core's regions are a
        # per-thread stack) and in the context (each asyncio task has its own), so that an
        # exit that is not the thread's innermost region is seen (below).
        token = object()
        _thread_regions().append(token)
        _context_open.set(_context_open.get() + (token,))
        return self

    def __exit__(self, *exc: Any) -> Literal[False]:
        mine = _context_open.get()
        stack = _thread_regions()
        if mine and mine[-1] in stack:
            if stack[-1] is not mine[-1]:
                _out_of_order(self.name)
            stack.remove(mine[-1])
            _context_open.set(mine[:-1])
        elif stack:
            stack.pop()  # opened in another context: the core ends the thread's innermost
        core.region_pop()
        depth = len(stack)
        t = _active
        if t is not None and t._counters is not None and depth <= t._counters_base_depth:
            t._counter_checkpoint()  # a step ended: empty the counter image (trace(counters=True))
        return False

    def __repr__(self) -> str:
        return f"fpgaprof.region({self.name!r})"


def active() -> bool:
    """True while a trace runs in this process."""
    return _active is not None

"""A hand-built trace with every copy direction, pageable copies, a tiny-copy flood, host
waits, allocations, nested regions and copies attributed to HLO ops (helper audit6's
constructed trace, with API records so that the real correlate() joins everything). Every
expected number of the tests that use it is worked out by hand below.

All on host thread 1, times in ns from the trace start 0; the trace is [0, 10 ms].

Device: H100 SXM-like (cc 9.0, 132 SMs), PCIe gen5 x16: link peak
    32 GT/s x 16 lanes x 128/130 / 8 = 63,015,384,615 B/s (the table value, "PCIe gen5 x16").

Regions:  step [0, 10 ms], load [0, 3 ms] (nested: path "step > load").
NVTX (XLA): module jit_step [0.4, 2.1 ms] with thunks fusion.1 (launches k0 at 0.99 ms) and
          copy-start.1 (launches the pageable HtoD at 1.99 ms); module jit_step [4.9, 6.5 ms]
          with thunks fusion.2 (k1 at 4.99 ms) and copy-start.2 (the DtoH at 5.99 ms).
Kernels:  k0 [1, 2 ms] (in load), k1 [5, 6 ms] (in step).
Copies (each launched 10 us before it starts):
  HtoD 64 MiB = 67,108,864 B  [0.5, 1.5 ms]  pinned -> device, async   (load)
  HtoD 1,000,000 B            [2.0, 2.5 ms]  pageable -> device, sync  (load, op copy-start.1)
  DtoD 100,000,000 B          [5.5, 5.6 ms]  async                     (step)
  DtoH 8,000,000 B            [6.0, 6.4 ms]  device -> pinned, async   (step, op copy-start.2)
  PtoP 10,000,000 B           [7.0, 7.2 ms]  async                     (step)
  HtoH 1,000,000 B            [7.5, 7.6 ms]  pageable -> pinned, sync  (step)
  flood: 1200 x HtoD 4096 B, the i-th [8 ms + i us, +500 ns], pinned, async (step)
Syncs:    [2.6, 2.9 ms] (in load), [6.4, 7.0 ms] (in step).
Allocations (device 0): +1 GiB A @100 ns, +256 MiB B @200 ns (load), -B @2.8 ms (load),
          +512 MiB C @5 ms (step), -A @9 ms (step).

Worked out:
  HtoD: 1202 copies, 67,108,864 + 1,000,000 + 1200 x 4096 = 73,024,064 B; busy (no overlap)
        1 ms + 0.5 ms + 1200 x 500 ns = 2.1 ms; 73,024,064 B / 2.1 ms = 34.773 GB/s
        = 55.18 % of 63.015 GB/s.
  DtoH: 8,000,000 B / 0.4 ms = 20 GB/s = 31.74 % of the link.
  All copies: 1206, 192,024,064 B, busy 2.1 + 0.1 + 0.4 + 0.2 + 0.1 ms = 2.9 ms (union: no
        two copies overlap).
  GPU busy (union of kernels and copies): kernels 2 ms; copies outside kernels: HtoD 64 MiB
        [0.5, 1.0) 0.5 ms, pageable HtoD 0.5 ms, DtoD inside k1 0, DtoH 0.4, PtoP 0.2,
        HtoH 0.1, flood 0.6 ms -> 2 + 0.5 + 0.5 + 0.4 + 0.2 + 0.1 + 0.6 = 4.3 ms of 10 ms.
        Summed kernel time 2 ms; summed copy time 2.9 ms (sum 4.9 ms > union 4.3 ms).
  Host wait: 0.3 + 0.6 = 0.9 ms in 2 calls (step); 0.3 ms in 1 call (step > load).
  Memory: in use A+B = 1.25 GiB from 200 ns, A = 1 GiB from 2.8 ms, A+C = 1.5 GiB
        = 1,610,612,736 B from 5 ms (the trace's peak), C = 512 MiB from 9 ms.
        step: peak 1,610,612,736 B; step > load [0, 3 ms]: peak 1 GiB + 256 MiB
        = 1,342,177,280 B.
  Ops' copies: copy-start.1: HtoD 1,000,000 B in 0.5 ms = 2 GB/s = 3.17 % of the link,
        pageable; copy-start.2: DtoH 8,000,000 B in 0.4 ms = 20 GB/s = 31.74 %.
  Flags (pageable: HtoD 1 MB and HtoH 1 MB; tiny: 1200 copies < 64 KiB, at least 1000):
        trace pageable (2 copies), trace tiny (1200 of 1206), step pageable (2), step > load
        pageable (1), step tiny (1200 of 1206): 5 flags, all of them warnings.
  Roofline: the trace's kernel time 2 ms over 2 kernels; step: 2 kernels, 2 ms;
        step > load: 1 kernel (k0), 1 ms. No HLO module: no op has a static cost.
"""
from __future__ import annotations

MS = 1_000_000
US = 1_000
LINK_BYTES_PER_S = 32e9 * 16 * 128 / 130 / 8  # PCIe gen5 x16

HtoD, DtoH, DtoD, HtoH, PtoP = "HtoD", "DtoH", "DtoD", "HtoH", "PtoP"
COPIES = [  # (kind, bytes, start_ns, end_ns, src, dst, async)
    (HtoD, 64 << 20, 500_000, 1_500_000, "pinned", "device", True),
    (HtoD, 1_000_000, 2_000_000, 2_500_000, "pageable", "device", False),
    (DtoD, 100_000_000, 5_500_000, 5_600_000, "device", "device", True),
    (DtoH, 8_000_000, 6_000_000, 6_400_000, "device", "pinned", True),
    (PtoP, 10_000_000, 7_000_000, 7_200_000, "device", "device", True),
    (HtoH, 1_000_000, 7_500_000, 7_600_000, "pageable", "pinned", False),
] + [(HtoD, 4096, 8 * MS + i * US, 8 * MS + i * US + 500, "pinned", "device", True)
     for i in range(1200)]


def store(step="step", load="load"):
    """The trace as a fpgaprof._core.TraceStore, correlated (``step``, ``load``: the two
    regions' names, for tests of how names are shown)."""
    from fpgaprof.base.core import core
    s = core.TraceStore()
    s.set_meta(start_ns=0, end_ns=10 * MS, gpu_available=True, command_buffers_disabled=True)
    d = core.DeviceInfo()
    for k, v in {"name": "H100 SXM (constructed)", "compute_capability_major": 9,
                 "compute_capability_minor": 0, "sm_count": 132, "core_clock_khz": 1_980_000,
                 "memory_clock_khz": 2_619_000, "memory_bus_width_bits": 5120,
                 "pcie_generation": 5, "pcie_link_width": 16}.items():
        setattr(d, k, v)
    s.add_device(d)
    s.append("regions", name=step, start_ns=0, end_ns=10 * MS, thread_id=1)
    s.append("regions", name=load, start_ns=0, end_ns=3 * MS, thread_id=1)
    for name, a, b in [("XlaModule:#hlo_module=jit_step,program_id=1#", 400_000, 2_100_000),
                       ("Thunk:#hlo_op=fusion.1#", 985_000, 995_000),
                       ("Thunk:#hlo_op=copy-start.1#", 1_985_000, 1_995_000),
                       ("XlaModule:#hlo_module=jit_step,program_id=1#", 4_900_000, 6_500_000),
                       ("Thunk:#hlo_op=fusion.2#", 4_985_000, 4_995_000),
                       ("Thunk:#hlo_op=copy-start.2#", 5_985_000, 5_995_000)]:
        s.append("markers", name=name, domain="TSL", start_ns=a, end_ns=b, thread_id=1)
    cid = 0

    def api(name, start_ns, end_ns):
        nonlocal cid
        cid += 1
        s.append("api_calls", correlation_id=cid, thread_id=1, start_ns=start_ns,
                 end_ns=end_ns, name=name)
        return cid

    for name, a, b in [("k0", 1 * MS, 2 * MS), ("k1", 5 * MS, 6 * MS)]:
        c = api("cuLaunchKernel", a - 10 * US, a - 9 * US)
        s.append("kernels", correlation_id=c, name=name, start_ns=a, end_ns=b, grid_x=1000,
                 stream_id=7)
    for kind, n, a, b, src, dst, asyn in COPIES:
        c = api("cuMemcpy" + kind + ("Async" if asyn else ""), a - 10 * US,
                a - 9 * US if asyn else b)
        s.append("memcpys", correlation_id=c, copy_kind=kind, bytes=n, start_ns=a, end_ns=b,
                 src_kind=src, dst_kind=dst, is_async=asyn, stream_id=7)
    for a, b in [(2_600_000, 2_900_000), (6_400_000, 7_000_000)]:
        c = api("cuStreamSynchronize", a, b)
        s.append("syncs", correlation_id=c, start_ns=a, end_ns=b, stream_id=7)
    GIB, MIB = 1 << 30, 1 << 20
    for t, addr, n, alloc in [(100, 0x1000, GIB, True), (200, 0x2000, 256 * MIB, True),
                              (2_800_000, 0x2000, 256 * MIB, False),
                              (5 * MS, 0x3000, 512 * MIB, True), (9 * MS, 0x1000, GIB, False)]:
        c = api("cuMemAlloc" if alloc else "cuMemFree", t, t + 1)
        s.append("allocations", correlation_id=c, timestamp_ns=t, address=addr, bytes=n,
                 is_alloc=alloc)
    s.correlate()
    return s


def profile():
    import fpgaprof
    return fpgaprof.Profile(store())

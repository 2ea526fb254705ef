// What the libcupti test double (libfake_cupti.so) emitted, read by tests through the exported
// `fake_cupti_counts`. Tests compute their expectations from the documented generation rule
// below and use these counts as a cross-check, never as the only source.
//
// Generation rule (per simulated host thread t in [0, FAKE_CUPTI_THREADS), thread id kFakeThreadBase+t (4200000+t),
// N = FAKE_CUPTI_KERNELS):
//   per thread: MEMORY2 allocation of 1 MiB; marker START "XlaModule:#hlo_module=jit_f,program_id=3#"
//     (domain "TSL"); one instantaneous marker "fake_mark" (domain "fpgaprof_test");
//   for i in [0, N): marker START "Thunk:#hlo_op=fusion.<i%4>,unique_hlo_op_id=<7+i%4>#" (TSL);
//     DRIVER cuLaunchKernel + CONCURRENT_KERNEL "loop_fusion_<i%4>" (same correlation id);
//     marker END; if i%4==0: DRIVER cuMemcpyHtoDAsync_v2 + MEMCPY HtoD of 4096*(i+1) bytes;
//     if i%8==0: DRIVER cuMemcpyDtoHAsync_v2 + MEMCPY DtoH of 1024*(i+1) bytes;
//     if i%16==0: DRIVER cuMemsetD8Async + MEMSET of 256 bytes;
//   then marker END of the module; DRIVER cuStreamSynchronize + SYNCHRONIZATION (stream);
//     one EXTERNAL_CORRELATION and one OVERHEAD (CUPTI_BUFFER_FLUSH) record.
//   thread 0 only, last: marker START "still_open" (TSL) that never ends.
//   Also per kernel, as PJRT's polling: DRIVER cuEventQuery and DRIVER cuCtxGetCurrent, each only
//     while its cbid is traced (cuptiActivityEnableDriverApi(cbid, 0) turns it off; enabling
//     DRIVER afterwards turns it on again, as in CUPTI); counted in polls / polls_suppressed.
//   Per thread, after the module: one SYNCHRONIZATION record of an event query that found the
//     work unfinished (type EVENT_SYNCHRONIZE, returnValue 600 = CUDA_ERROR_NOT_READY), only
//     while cuptiActivityEnableAllSyncRecords has not been set to 0 (counted in
//     unfinished_queries).
//   DEVICE record (id 0, "Fake H100", cc 9.0, 132 SMs, 80 GiB): only from
//     cuptiActivityEnableAndDump(DEVICE), written on the calling thread at that call (a trace
//     attached after CUDA init gets no DEVICE record from cuptiActivityEnable, as in CUPTI).
// FAKE_CUPTI_MARKERS=0: no marker records at all (a process whose NVTX never reached CUPTI).
// FAKE_CUPTI_STOP_SYNC=1: the first cuptiActivityFlushAll after an emit also writes, on the
//   calling thread, what CUPTI records for the device synchronize that the collector does just
//   before it: DRIVER cuCtxSynchronize + SYNCHRONIZATION CONTEXT_SYNCHRONIZE (if those kinds are
//   enabled then; counted in stop_thread_records) and one CONCURRENT_KERNEL "drain_kernel" that
//   finished during it (if enabled; counted in drain_kernels). fake_cupti_emit() also writes,
//   on its caller's thread (gettid()) before returning: DRIVER cuLaunchKernel and DRIVER
//   cuStreamSynchronize (counted in caller_api_records) + SYNCHRONIZATION STREAM_SYNCHRONIZE
//   with the latter's correlation id (counted in caller_syncs), i.e. the traced program's own
//   work on the thread that later calls stop().
// FAKE_CUPTI_SYNC_EXTRAS=1: per thread, after the module: a cuEventQuery that found the event
//   complete (its DRIVER record only while traced, as the polls above) + SYNCHRONIZATION
//   EVENT_SYNCHRONIZE, returnValue 0, with the query's correlation id (counted in
//   completed_poll_syncs; CUPTI writes these even after cuptiActivityEnableAllSyncRecords(0));
//   and DRIVER cuStreamSynchronize + SYNCHRONIZATION STREAM_SYNCHRONIZE with returnValue 719
//   (CUDA_ERROR_LAUNCH_FAILED; counted in failed_waits).
// Scenario "dropped": CUPTI reports 17 dropped records after the first buffer an emitting
// thread completes (not EnableAndDump's), and the first 3 kernels of thread 0 have start =
// end = 0.
// Scenario "transfers" (instead of everything above but the DEVICE record; thread t emits it
// once, thread id kFakeThreadBase+t (4200000+t), stream 7+t, base B = the thread's now_ns() at its start, addresses
// A = 0x7f1000000000 + (t << 36); every record has a DRIVER API record of the named call with
// its correlation id; MEMCPY records have deviceId 0, context 1; times are B + offset in ns):
//   MEMORY2 (memoryKind DEVICE; releases carry the freed buffer's bytes):
//     alloc   dev 0  A              64 MiB  at  10000   cuMemAlloc_v2
//     alloc   dev 0  A+0x10000000   16 MiB  at  20000
//     release dev 0  A+0x10000000   16 MiB  at  50000   cuMemFree_v2
//     alloc   dev 0  A+0x20000000   32 MiB  at  60000   (never released)
//     alloc   dev 1  A+0x30000000    8 MiB  at 700000
//     release dev 0  A              64 MiB  at 2500000
//     release dev 1  A+0x30000000    8 MiB  at 2550000
//     release dev 0  A+0x40000000    8 MiB  at 2600000  (allocated before the trace)
//   MEMCPY (copyKind, srcKind -> dstKind, flags, bytes, [start, end), call):
//     HtoD  PINNED   -> DEVICE   async  4000000  [0, 200000)        cuMemcpyHtoDAsync_v2
//     DtoD  DEVICE   -> DEVICE   async  8000000  [100000, 150000)   cuMemcpyDtoDAsync_v2
//     DtoD  DEVICE   -> DEVICE   async  8000000  [120000, 170000)   cuMemcpyDtoDAsync_v2
//     DtoH  DEVICE   -> PINNED   async  3000000  [200000, 300000)   cuMemcpyDtoHAsync_v2
//     HtoD  PAGEABLE -> DEVICE   sync   2000000  [300000, 500000)   cuMemcpyHtoD_v2
//     DtoH  DEVICE   -> PAGEABLE sync   1000000  [600000, 700000)   cuMemcpyDtoH_v2
//     HtoH  PAGEABLE -> PINNED   sync    500000  [800000, 900000)   cuMemcpy
//     1200 x HtoD PINNED -> DEVICE async 4096 bytes [1000000 + 1000k, +500), k in [0, 1200)
//   MEMCPY2 (CUpti_ActivityMemcpyPtoP4): PTOP DEVICE -> DEVICE async 16000000 bytes
//     [700000, 780000), deviceId 0 (the issuing stream's), srcDeviceId 2, dstDeviceId 1,
//     cuMemcpyPeerAsync
//   CONCURRENT_KERNEL "xfer_kernel" [150000, 250000), cuLaunchKernel
//   MEMSET (memoryKind DEVICE): async value 0, 1 MiB, [900000, 950000), cuMemsetD8Async;
//     sync value 0xFFFFFFFF, 4096 bytes, [950000, 960000), cuMemsetD32_v2
//   SYNCHRONIZATION STREAM_SYNCHRONIZE [2200000, 2300000), cuStreamSynchronize
// Scenario "devices" (several GPUs with a host thread per device, as MBIRJAX's run_per_device):
//   cuptiActivityEnableAndDump(DEVICE) writes two DEVICE records, ids 0 and 1 (both "Fake H100",
//   uuid bytes i and 16 + i). fake_cupti_emit() writes nothing: it sets the time base B (its
//   now_ns()). Each fake_cupti_device_work(d, O) writes device d's work on the CALLING thread
//   (thread id = its gettid(), so the fpgaprof.region()s that thread opened hold the launches;
//   API and marker records at now_ns()), stream 7 + d, context d + 1, GPU times B + O + offset:
//     MEMORY2 (DEVICE), address A = 0x7f2000000000 + (d << 36):
//       d 0: alloc A 64 MiB @10; release A @999000
//       d 1: alloc A 32 MiB @20; alloc A+0x10000000 16 MiB @30; release A+0x10000000 @600000;
//            release A @999000
//     marker START "XlaModule:#hlo_module=jit_f,program_id=3#" (TSL); per kernel: marker START
//       "Thunk:#hlo_op=fusion.<k>,unique_hlo_op_id=<7+k>#", DRIVER cuLaunchKernel +
//       CONCURRENT_KERNEL "loop_fusion_<k>" (grid 264, block 256, 32 registers), marker END;
//       then marker END of the module:
//       d 0: k 0 [0, 400000), k 1 [400000, 700000)
//       d 1: k 0 [0, 200000), k 1 [300000, 400000)
//     after the module, each with its DRIVER call (async, pinned host memory):
//       d 0: MEMCPY HtoD 8000000 B [700000, 900000); MEMCPY DtoH 1000000 B [900000, 1000000)
//       d 1: MEMSET 1 MiB value 0 [200000, 250000); MEMCPY HtoD 2000000 B [400000, 500000)
//   It writes nothing before emit() or in another scenario.
// Scenario "ranks" (one process of a job of several; the test writes the work itself): one
//   DEVICE record (id 0) from cuptiActivityEnableAndDump(DEVICE); fake_cupti_emit() writes
//   nothing and sets the time base B (its now_ns()). Each fake_cupti_kernel(d, name, op, S, E)
//   writes, on the CALLING thread (thread id = its gettid()): marker START
//   "XlaModule:#hlo_module=jit_step,program_id=5#" (TSL); when op is not empty, marker START
//   "Thunk:#hlo_op=<op>,unique_hlo_op_id=1#"; DRIVER cuLaunchKernel + CONCURRENT_KERNEL `name`
//   on device d (context d + 1, stream 7 + d, grid 132, block 256) at [B + S, B + E); the
//   markers' ENDs. Nothing before emit() or in another scenario.
// Records that find no buffer (the request callback returned NULL) are lost and added to the
// dropped count, as CUPTI does.
#pragma once

#include <cstddef>
#include <cstdint>

// The simulated host threads' ids: above Linux's largest pid_max (2^22 = 4194304), so that no
// real thread of the test process (the one that stops a session, whose own calls the session
// drops by thread id) can share one.
inline constexpr uint32_t kFakeThreadBase = 4200000;

struct FakeCuptiCounts {
  uint64_t kernels;
  uint64_t incomplete_kernels;
  uint64_t memcpy_htod;
  uint64_t memcpy_dtoh;
  uint64_t htod_bytes;
  uint64_t dtoh_bytes;
  uint64_t memsets;
  uint64_t allocations;
  uint64_t api_calls;
  uint64_t syncs;
  uint64_t marker_ranges;  // START records
  uint64_t marker_instants;
  uint64_t devices;
  uint64_t external_correlations;
  uint64_t overheads;
  uint64_t dropped_reported;  // sum returned by cuptiActivityGetNumDroppedRecords
  uint64_t lost_no_buffer;    // records not written because no buffer was given
  uint64_t buffers_completed;
  uint64_t subscribes;
  uint64_t unsubscribes;
  uint64_t flushes;
  uint64_t enabled_kinds;  // kinds enabled now
  uint64_t nvtx_initializations;
  uint64_t polls;                 // polling API records written
  uint64_t polls_suppressed;      // polling API records not written (cbid turned off)
  uint64_t unfinished_queries;    // SYNCHRONIZATION records with returnValue != 0 written
  uint64_t stop_thread_records;   // FAKE_CUPTI_STOP_SYNC: API + sync records written at the flush
  uint64_t drain_kernels;         // FAKE_CUPTI_STOP_SYNC: kernels written at the flush
  uint64_t caller_api_records;    // FAKE_CUPTI_STOP_SYNC: API records written on emit's caller
  uint64_t caller_syncs;          // FAKE_CUPTI_STOP_SYNC: sync records written on emit's caller
  uint64_t completed_poll_syncs;  // FAKE_CUPTI_SYNC_EXTRAS: syncs of completed cuEventQuery
  uint64_t failed_waits;          // FAKE_CUPTI_SYNC_EXTRAS: syncs with returnValue 719
  uint64_t memcpy_dtod;           // scenario "transfers": MEMCPY records by kind (HtoD and
  uint64_t memcpy_htoh;           //   DtoH go to memcpy_htod/memcpy_dtoh above)
  uint64_t memcpy_ptop;           // scenario "transfers": MEMCPY2 (peer) records
  uint64_t releases;              // scenario "transfers": MEMORY2 release records
};

// One CUPTI call as the fake saw it (fake_cupti_calls). arg: the kind, cbid or flag the call
// took (0 when none); result: what the fake returned.
struct FakeCuptiCall {
  char name[48];
  uint64_t arg;
  uint32_t thread_id;  // gettid() of the caller
  int result;
};

extern "C" {
// Starts emitting (threads owned by the fake) if not already done; cuptiActivityFlushAll
// joins them and completes the partly filled buffers. Resets the counts.
void fake_cupti_emit();
void fake_cupti_counts(FakeCuptiCounts* out);
// Copies up to max logged calls (oldest first) into out; returns how many were logged (at most
// 4096 are kept).
size_t fake_cupti_calls(FakeCuptiCall* out, size_t max);
// Scenario "devices": writes device `device`'s work on the calling thread, `offset_ns` after
// the time base of fake_cupti_emit() (the table above).
void fake_cupti_device_work(uint32_t device, uint64_t offset_ns);
// Scenario "ranks": writes one kernel `name` of HLO op `hlo_op` ("" none) on device `device` at
// [B + start_ns, B + end_ns) on the calling thread (the table above).
void fake_cupti_kernel(uint32_t device, const char* name, const char* hlo_op, uint64_t start_ns, uint64_t end_ns);
// Forgets the call log and which API family (V1 unversioned / V2 _v2) was used, so a test can
// start over in the same process.
void fake_cupti_reset_calls();
}

// Capture: the public face of the CUPTI layer (implemented in cpp/src/cupti/, the only code
// that includes CUPTI/NVTX headers). Nothing here exposes a CUPTI type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fpgaprof/records.hpp"
#include "fpgaprof/trace_store.hpp"

namespace fpgaprof {

struct CaptureOptions {
  std::size_t buffer_bytes = 8u << 20;      // size of each activity buffer handed to CUPTI
  std::size_t max_buffers = 0;              // 0: grow without bound (drops are then impossible on our side)
  std::size_t device_buffer_bytes = 0;      // CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE; 0 keeps CUPTI's default
  bool require_gpu = false;                 // true: throw Error(kCuptiUnavailable) instead of degrading
};

// What fpgaprof sees of CUPTI and the GPUs. Never throws.
struct CuptiStatus {
  bool library_found = false;
  std::string library_path;        // the libcupti it uses / would load
  std::string how_found;           // "already loaded", "FPGAPROF_CUPTI_LIBRARY", "pip wheel", ...
  uint32_t cupti_version = 0;
  uint32_t driver_version = 0;     // 0: no driver
  std::vector<DeviceInfo> devices;
  std::string problem;             // empty when tracing would work; else cause + fix, one line
};
CuptiStatus probe_cupti();

// One active capture. At most one exists per process.
class CaptureSession {
 public:
  // Starts capture. Without CUPTI/driver/GPU: with require_gpu, throws Error(kCuptiUnavailable);
  // otherwise returns a host-only session (gpu_active() false, reason in unavailable_reason()).
  // Throws Error(kProfilerConflict) when another CUPTI subscriber holds CUPTI (naming it when
  // CUPTI says), Error(kState) when a session is already active.
  static std::unique_ptr<CaptureSession> start(const CaptureOptions& options);
  virtual ~CaptureSession() = default;

  // Synchronizes every device, forces a flush, converts the remaining buffers, and returns
  // the owned store (records converted, not yet correlated: call correlate()). Reads the
  // dropped-record count at every flush. Safe to call once.
  virtual TraceStore stop() = 0;
  virtual bool gpu_active() const = 0;
  virtual std::string unavailable_reason() const = 0;
};

// User regions (fpgaprof.region): recorded host-side on the trace clock, with or without a
// GPU, while a session is active; also pushed as NVTX ranges (domain "fpgaprof") so other
// tools see them. Thread-safe; each thread has its own stack.
void region_push(std::string_view name);
void region_pop();

// Trace clock now, in ns (CLOCK_REALTIME, the clock CUPTI uses on Linux).
uint64_t trace_clock_ns();

// The OS thread id (gettid) of the calling thread.
uint32_t current_thread_id();

}  // namespace fpgaprof

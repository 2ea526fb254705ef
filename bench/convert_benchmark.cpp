// Records converted per second from CUPTI activity buffers into the owned store, on one core.
//
// The buffer holds a kernel-heavy mix shaped like a JAX/XLA GPU trace: per launch a driver
// API record, a CONCURRENT_KERNEL record and the thunk's NVTX START/END markers; every 4th
// launch also an API + MEMCPY, every 16th an API + MEMSET (about 4.6 records per launch,
// 64 distinct kernel and thunk names). Buffers are walked with libcupti's own
// cuptiActivityGetNextRecord when a libcupti can be loaded (it works without a driver), and
// with a stride table otherwise.
//
// Usage: convert_benchmark [seconds_per_walker (default 2)]
#include <sched.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cupti/cupti_api.hpp"
#include "cupti/record_converter.hpp"
#include "fake_cupti/activity_layout.hpp"

using fpgaprof::TraceStore;
using fpgaprof::cupti::RecordConverter;

namespace {

// Walks the buffer like libcupti 13.0 (same strides), without calling into the library.
CUptiResult stride_walker(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  return fake_cupti::next_record(buffer, valid, record);
}

struct Names {
  std::vector<std::string> kernels, thunks;
  Names() {
    for (int i = 0; i < 64; ++i) {
      kernels.push_back("loop_multiply_fusion_" + std::to_string(i));
      thunks.push_back("Thunk:#hlo_op=multiply_fusion." + std::to_string(i) +
                       ",unique_hlo_op_id=" + std::to_string(100 + i) + "#");
    }
  }
};

std::vector<uint64_t> make_buffer(size_t bytes, const Names& names, size_t* valid, size_t* records) {
  std::vector<uint64_t> words(bytes / 8);
  auto* base = reinterpret_cast<uint8_t*>(words.data());
  size_t used = 0, count = 0;
  uint64_t t = 1700000000000000000ull;
  uint32_t corr = 1, marker_id = 1;
  auto put = [&](const auto& r) {
    if (used + sizeof(r) > bytes) return false;
    std::memcpy(base + used, &r, sizeof(r));
    used += sizeof(r);
    ++count;
    return true;
  };
  for (uint32_t i = 0;; ++i) {
    CUpti_ActivityMarker2 start{};
    start.kind = CUPTI_ACTIVITY_KIND_MARKER;
    start.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
    start.timestamp = t++;
    start.id = marker_id++;
    start.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    start.objectId.pt.threadId = 4000 + i % 4;
    start.name = names.thunks[i % 64].c_str();
    start.domain = "TSL";
    CUpti_ActivityAPI api{};
    api.kind = CUPTI_ACTIVITY_KIND_DRIVER;
    api.cbid = 307;
    api.start = t++;
    api.end = t++;
    api.threadId = 4000 + i % 4;
    api.correlationId = corr;
    fake_cupti::KernelRecordLayout k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = t++;
    k.end = t++;
    k.correlationId = corr++;
    // Each of the 64 kernels has its own launch configuration (as XLA's do), so consecutive
    // kernels differ and the converter's configuration interning does real lookups.
    k.gridX = 128 + static_cast<uint32_t>(i % 64) * 8;
    k.gridY = 1;
    k.gridZ = 1;
    k.blockX = 256;
    k.blockY = 1;
    k.blockZ = 1;
    k.registersPerThread = 32 + static_cast<uint16_t>(i % 64 % 7);
    k.streamId = 7;
    k.name = names.kernels[i % 64].c_str();
    CUpti_ActivityMarker2 end = start;
    end.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
    end.timestamp = t++;
    end.name = nullptr;
    end.domain = nullptr;
    if (!put(start) || !put(api) || !put(k) || !put(end)) break;
    if (i % 4 == 0) {
      CUpti_ActivityAPI a = api;
      a.cbid = 277;
      a.correlationId = corr;
      CUpti_ActivityMemcpy6 m{};
      m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
      m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
      m.bytes = 1 << 20;
      m.start = t++;
      m.end = t++;
      m.correlationId = corr++;
      if (!put(a) || !put(m)) break;
    }
    if (i % 16 == 0) {
      CUpti_ActivityAPI a = api;
      a.cbid = 216;
      a.correlationId = corr;
      CUpti_ActivityMemset4 m{};
      m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
      m.bytes = 256;
      m.start = t++;
      m.end = t++;
      m.correlationId = corr++;
      if (!put(a) || !put(m)) break;
    }
  }
  *valid = used;
  *records = count;
  return words;
}

const char* names_fn(void*, CUpti_CallbackDomain, uint32_t cbid) {
  switch (cbid) {
    case 307: return "cuLaunchKernel";
    case 277: return "cuMemcpyHtoDAsync_v2";
    case 216: return "cuMemsetD8Async";
    default: return nullptr;
  }
}

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// reserve: the store's vectors already hold room for the trace (steady state, no growth);
// otherwise every trace starts from an empty store and pays vector growth and page faults.
double run(const char* label, RecordConverter::NextRecordFn walker, uint8_t* buffer, size_t valid,
           size_t records_per_buffer, double seconds, bool reserve) {
  using clock = std::chrono::steady_clock;
  // One trace = 16 buffers into one store (about 1.8 M records), then a fresh store.
  constexpr int kBuffersPerTrace = 16;
  uint64_t records = 0;
  double elapsed = 0, cpu = 0;
  int traces = -1;  // trace -1 is a warm-up: not timed
  while (elapsed < seconds) {
    TraceStore store;
    if (reserve) {
      const size_t n = records_per_buffer * kBuffersPerTrace;
      store.kernels.reserve(n / 4);
      store.api_calls.reserve(n / 3);
      store.markers.reserve(n / 4);
      store.memcpys.reserve(n / 16);
      store.memsets.reserve(n / 64);
      for (auto* v : {&store.kernels})
        std::memset(static_cast<void*>(v->data()), 0, v->capacity() * sizeof(v->front()));
      std::memset(static_cast<void*>(store.api_calls.data()), 0,
                  store.api_calls.capacity() * sizeof(fpgaprof::ApiRecord));
      std::memset(static_cast<void*>(store.markers.data()), 0,
                  store.markers.capacity() * sizeof(fpgaprof::MarkerRecord));
    }
    RecordConverter converter(store, names_fn, nullptr);
    const auto t0 = clock::now();
    const double c0 = thread_cpu_s();
    for (int b = 0; b < kBuffersPerTrace; ++b) records += converter.convert_buffer(buffer, valid, walker);
    converter.finish(0);
    if (traces >= 0) {
      cpu += thread_cpu_s() - c0;
      elapsed += std::chrono::duration<double>(clock::now() - t0).count();
    } else {
      records = 0;
    }
    ++traces;
    if (store.kernels.empty()) std::abort();
  }
  const double rate = static_cast<double>(records) / cpu;
  std::printf("%-44s %6.2f M records/s per CPU-second (%.2f M/s wall; %llu records, %d traces, %.2f s CPU)\n", label,
              rate / 1e6, static_cast<double>(records) / elapsed / 1e6, static_cast<unsigned long long>(records),
              traces, cpu);
  return rate;
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 2.0;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  sched_setaffinity(0, sizeof one, &one);  // one core, as the figure claims

  Names names;
  size_t valid = 0, records = 0;
  auto words = make_buffer(8u << 20, names, &valid, &records);
  auto* buffer = reinterpret_cast<uint8_t*>(words.data());
  std::printf("buffer: %zu bytes, %zu records (%.1f bytes/record)\n", valid, records,
              static_cast<double>(valid) / static_cast<double>(records));

  std::printf("one trace = 16 buffers = %zu records into one store\n", records * 16);
  run("stride walker, fresh store", stride_walker, buffer, valid, records, seconds, false);
  run("stride walker, reserved store", stride_walker, buffer, valid, records, seconds, true);
  std::string error;
  if (const auto* api = fpgaprof::cupti::CuptiApi::get(&error)) {
    std::printf("libcupti: %s\n", api->path.c_str());
    run("libcupti GetNextRecord, fresh store", api->ActivityGetNextRecord, buffer, valid, records, seconds, false);
    run("libcupti GetNextRecord, reserved store", api->ActivityGetNextRecord, buffer, valid, records, seconds, true);
  } else {
    std::printf("libcupti walker skipped: %s\n", error.c_str());
  }
  return 0;
}

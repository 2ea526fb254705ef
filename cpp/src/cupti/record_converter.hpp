// RecordConverter: turns CUPTI activity records into fpgaprof's owned records (records.hpp)
// the moment a buffer completes, so nothing downstream sees a CUPTI type or keeps a pointer
// into a CUPTI buffer.
//
// Pure with respect to CUPTI: it never calls libcupti itself. The buffer walker and the API
// name lookup are passed in, so tests can feed it real CUPTI structs laid into a buffer.
// Records are read through the oldest struct version that has every field used
// (KernelActivity = CUpti_ActivityKernel9, Memcpy6, MemcpyPtoP4, Memset4, Memory4, Device5, Marker2, API,
// Synchronization2, ExternalCorrelation, Overhead3): CUPTI only appends fields to newer
// versions, and buffers are walked with the library's cuptiActivityGetNextRecord, never by
// sizeof.
//
// Memory CUPTI hands to the client is freed here, after its fields are copied, as the headers
// say: Overhead3.overheadData from API version 26 (CUDA 12.8) on, Device5.name from 130000
// (CUDA 13.0) on; in 12.8 and 12.9 the device name stays CUPTI's. The runtime library's API
// version (set_cupti_api_version) decides; until it is set, nothing is freed.
//
// Not thread-safe: one converter writes one TraceStore; the caller serializes calls.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cupti/cupti_headers.hpp"
#include "fpgaprof/trace_store.hpp"

namespace fpgaprof::cupti {

class RecordConverter {
 public:
  // Name of a CUDA API callback (cuptiGetCallbackName); nullptr when unknown. Called at most
  // once per (domain, cbid).
  using CallbackNameFn = const char* (*)(void* context, CUpti_CallbackDomain domain, uint32_t cbid);
  // cuptiActivityGetNextRecord's signature.
  using NextRecordFn = CUptiResult (*)(uint8_t* buffer, size_t valid_bytes, CUpti_Activity** record);

  struct Stats {
    uint64_t records = 0;                // records seen (converted + ignored + unknown)
    uint64_t converted = 0;              // records that became an owned record
    uint64_t ignored = 0;                // known kinds with nothing to keep (MARKER_DATA, NAME, ...) and
                                         // skipped records (see the two counts below)
    uint64_t unknown_kind = 0;           // kinds this converter does not know
    uint64_t incomplete = 0;             // start == end == 0 (device timestamp buffer ran out)
    uint64_t unmatched_marker_ends = 0;  // END records whose START came before the trace
    uint64_t buffers = 0;
    uint64_t buffer_errors = 0;              // walks that stopped on an error other than "end of buffer"
    uint64_t unknown_memory_operations = 0;  // MEMORY2 records with operation type INVALID (0): skipped
    uint64_t unfinished_sync_queries = 0;    // SYNCHRONIZATION records with returnValue 600
                                             // (CUDA_ERROR_NOT_READY): a poll, skipped
    uint64_t failed_sync_waits = 0;          // SYNCHRONIZATION records with another non-zero
                                             // returnValue: kept (the host did wait)
    uint32_t first_failed_sync_result = 0;   // the CUresult of the first of those
    uint64_t untraced_sync_calls = 0;        // removed by drop_syncs_without_api_call()
  };

  // store: receives the records (must outlive the converter). names/context: API names.
  explicit RecordConverter(TraceStore& store, CallbackNameFn names = nullptr, void* names_context = nullptr);

  // Converts one record (its kind field says which struct it is).
  void convert(const CUpti_Activity& record);
  // cuptiGetVersion of the library whose buffers are converted: which pointers in its records
  // the client owns (see the header comment), released with release (the C library's free;
  // tests count the calls). 0: unknown, nothing is freed.
  using ReleaseFn = void (*)(void*);
  void set_cupti_api_version(uint32_t version, ReleaseFn release = &std::free) {
    cupti_api_version_ = version;
    release_ = release;
  }
  // Walks valid_bytes of buffer with next() and converts every record. Returns the number of
  // records walked. A walk error other than CUPTI_ERROR_MAX_LIMIT_REACHED is counted in
  // stats().buffer_errors and ends the walk.
  std::size_t convert_buffer(uint8_t* buffer, std::size_t valid_bytes, NextRecordFn next);
  // Adds records CUPTI reports as dropped (cuptiActivityGetNumDroppedRecords).
  void add_dropped(uint64_t count);
  // cuptiActivityGetNumDroppedRecords failed (why: its result): how many records CUPTI dropped
  // then is unknown, so meta.dropped_records is a lower bound; finish() warns once with the
  // number of failed queries and the first one's result.
  void dropped_unknown(std::string why);
  // Removes the synchronization records whose correlation id is no API record's: with DRIVER
  // API records on, those come from calls fpgaprof does not trace, i.e. the event/stream
  // queries of kQuietDriverApis that found the work complete (cuptiActivityEnableAllSyncRecords(0)
  // suppresses only the unfinished ones). Counted in stats().untraced_sync_calls; finish()
  // warns. Only meaningful once every buffer was converted; returns how many were removed.
  std::size_t drop_syncs_without_api_call();
  // Ends the trace at trace_end_ns: ranges still open get end_ns = trace_end_ns and
  // is_closed = false; meta.dropped_records / incomplete_records are final and one warning
  // per kind of loss is appended to meta.warnings. Call once, after the last buffer.
  void finish(uint64_t trace_end_ns);

  const Stats& stats() const { return stats_; }

 private:
  StringId intern(const char* text);
  uint32_t api_function(ApiKind kind, uint32_t cbid);  // index into store.api_functions

  void convert_kernel(const KernelActivity& r);
  void convert_memcpy(const CUpti_ActivityMemcpy6& r);
  void convert_peer_memcpy(const CUpti_ActivityMemcpyPtoP4& r);
  void convert_memset(const CUpti_ActivityMemset4& r);
  bool convert_memory(const CUpti_ActivityMemory4& r);  // false: skipped (counted in stats)
  void convert_device(const CUpti_ActivityDevice5& r);
  void convert_api(const CUpti_ActivityAPI& r, ApiKind kind);
  bool convert_sync(const CUpti_ActivitySynchronization2& r);  // false: skipped (counted in stats)
  void convert_marker(const CUpti_ActivityMarker2& r);
  void convert_overhead(const CUpti_ActivityOverhead3& r);
  void convert_external(const CUpti_ActivityExternalCorrelation& r);

  struct CacheSlot {
    const char* text = nullptr;
    StringId id = kNoString;
  };
  static constexpr std::size_t kCacheSlots = 1024;

  TraceStore& store_;
  CallbackNameFn names_;
  void* names_context_;
  Stats stats_;
  uint32_t cupti_api_version_ = 0;
  ReleaseFn release_ = &std::free;
  uint64_t dropped_ = 0;
  uint64_t dropped_queries_failed_ = 0;
  std::string dropped_query_error_;       // the first failed query's result
  std::vector<uint32_t> config_of_name_;  // kernel name id -> its last launch configuration
  // Interning by pointer first: CUPTI shares one name string among the records of one
  // kernel; a hit is confirmed by comparing the text, so a reused pointer is never wrong.
  std::array<CacheSlot, kCacheSlots> cache_{};
  std::vector<uint32_t> driver_functions_;  // api_functions index by cbid; kNone32 = not looked up yet
  std::vector<uint32_t> runtime_functions_;
  // Ranges open now: (marker id, index in store.markers). Nearly always a handful (the
  // nesting depth times the threads), and ENDs close recent STARTs, so a vector searched
  // from the back beats a hash map; a map takes over if many stay open.
  std::vector<std::pair<uint32_t, uint32_t>> open_markers_;
  std::unordered_map<uint32_t, uint32_t> open_markers_overflow_;
};

}  // namespace fpgaprof::cupti

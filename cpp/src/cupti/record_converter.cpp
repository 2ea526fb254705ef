#include "cupti/record_converter.hpp"

#include "cupti/cuda_driver.hpp"
#include "fpgaprof/text.hpp"

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <string>
#include <unordered_set>

namespace fpgaprof::cupti {
namespace {

// The converter reads the newest records through older struct versions: with headers that
// have the newer versions, check at compile time that the fields used sit at the same offsets.
// Kernel records: CUDA 12's Kernel9 (KernelActivity) against CUDA 13's Kernel10 (13.0) and the
// later ones (13.5's headers hold Kernel10-12 in cupti_activity_deprecated.h and Kernel13), so
// one build reads what libcupti 12.8 and 13.x emit alike.
#define FPGAPROF_SAME_OFFSET(Old, New, field) \
  static_assert(offsetof(Old, field) == offsetof(New, field), #New "." #field " moved")
#define FPGAPROF_KERNEL_FIELDS_AGREE(New)                          \
  FPGAPROF_SAME_OFFSET(KernelActivity, New, kind);                 \
  FPGAPROF_SAME_OFFSET(KernelActivity, New, start);                \
  FPGAPROF_SAME_OFFSET(KernelActivity, New, end);                  \
  FPGAPROF_SAME_OFFSET(KernelActivity, New, correlationId);        \
  FPGAPROF_SAME_OFFSET(KernelActivity, New, name);                 \
  FPGAPROF_SAME_OFFSET(KernelActivity, New, deviceId);             \
  FPGAPROF_SAME_OFFSET(KernelActivity, New, contextId);            \
  FPGAPROF_SAME_OFFSET(KernelActivity, New, streamId);             \
  FPGAPROF_SAME_OFFSET(KernelActivity, New, gridX);                \
  FPGAPROF_SAME_OFFSET(KernelActivity, New, gridY);                \
  FPGAPROF_SAME_OFFSET(KernelActivity, New, gridZ);                \
  FPGAPROF_SAME_OFFSET(KernelActivity, New, blockX);               \
  FPGAPROF_SAME_OFFSET(KernelActivity, New, blockY);               \
  FPGAPROF_SAME_OFFSET(KernelActivity, New, blockZ);               \
  FPGAPROF_SAME_OFFSET(KernelActivity, New, registersPerThread);   \
  FPGAPROF_SAME_OFFSET(KernelActivity, New, staticSharedMemory);   \
  FPGAPROF_SAME_OFFSET(KernelActivity, New, dynamicSharedMemory);  \
  FPGAPROF_SAME_OFFSET(KernelActivity, New, localMemoryPerThread); \
  FPGAPROF_SAME_OFFSET(KernelActivity, New, graphNodeId);          \
  FPGAPROF_SAME_OFFSET(KernelActivity, New, graphId)
#if CUPTI_API_VERSION >= 130000
FPGAPROF_KERNEL_FIELDS_AGREE(CUpti_ActivityKernel10);
#endif
#if CUPTI_API_VERSION >= 130500
FPGAPROF_KERNEL_FIELDS_AGREE(CUpti_ActivityKernel11);
FPGAPROF_KERNEL_FIELDS_AGREE(CUpti_ActivityKernel12);
FPGAPROF_KERNEL_FIELDS_AGREE(CUpti_ActivityKernel13);
FPGAPROF_SAME_OFFSET(CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy7, correlationId);
FPGAPROF_SAME_OFFSET(CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy7, graphId);
FPGAPROF_SAME_OFFSET(CUpti_ActivityMemset4, CUpti_ActivityMemset5, memoryKind);
FPGAPROF_SAME_OFFSET(CUpti_ActivityMemset4, CUpti_ActivityMemset5, graphId);
FPGAPROF_SAME_OFFSET(CUpti_ActivityDevice5, CUpti_ActivityDevice6, name);
FPGAPROF_SAME_OFFSET(CUpti_ActivityDevice5, CUpti_ActivityDevice6, uuid);
#endif
#undef FPGAPROF_KERNEL_FIELDS_AGREE
#undef FPGAPROF_SAME_OFFSET

constexpr std::size_t kMaxOpenInVector = 256;
// From these CUPTI API versions on the headers make the client free the pointer (cupti_activity.h
// of the nvidia-cuda-cupti-cu12 12.8.90 wheel and of CUDA 13.0: "Client is responsible for
// freeing this memory using the free function when done").
constexpr uint32_t kClientOwnsOverheadDataApiVersion = 26;
constexpr uint32_t kClientOwnsDeviceNameApiVersion = 130000;

CopyKind copy_kind(uint32_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return CopyKind::kHtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return CopyKind::kDtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return CopyKind::kHtoA;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return CopyKind::kAtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return CopyKind::kAtoA;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return CopyKind::kAtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return CopyKind::kDtoA;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return CopyKind::kDtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return CopyKind::kHtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return CopyKind::kPtoP;
    default: return CopyKind::kUnknown;
  }
}

MemoryKind memory_kind(uint32_t k) {
  // CUPTI's values 0..7 are ours one to one (records.hpp keeps them stable on purpose).
  return k <= CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC ? static_cast<MemoryKind>(k) : MemoryKind::kUnknown;
}

SyncKind sync_kind(uint32_t t) {
  return t <= CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE ? static_cast<SyncKind>(t) : SyncKind::kUnknown;
}

const char* overhead_name(uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "DRIVER_COMPILER";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "CUPTI_BUFFER_FLUSH";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "CUPTI_INSTRUMENTATION";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "CUPTI_RESOURCE";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING: return "RUNTIME_TRIGGERED_MODULE_LOADING";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: return "LAZY_FUNCTION_LOADING";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL: return "COMMAND_BUFFER_FULL";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST: return "ACTIVITY_BUFFER_REQUEST";
    case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT: return "UVM_ACTIVITY_INIT";
    default: return "UNKNOWN";
  }
}

uint32_t object_id(CUpti_ActivityObjectKind kind, const CUpti_ActivityObjectKindId& id) {
  switch (kind) {
    case CUPTI_ACTIVITY_OBJECT_PROCESS: return id.pt.processId;
    case CUPTI_ACTIVITY_OBJECT_THREAD: return id.pt.threadId;
    case CUPTI_ACTIVITY_OBJECT_DEVICE:
    case CUPTI_ACTIVITY_OBJECT_CONTEXT:
    case CUPTI_ACTIVITY_OBJECT_STREAM: return id.dcs.deviceId;
    default: return 0;
  }
}

// Grows a record vector ahead of push_back, and asks for transparent huge pages for big
// ones: a trace's store grows to hundreds of MB, and 4 KiB page faults were most of the cost
// of converting into a fresh store (bench/convert_benchmark).
template <typename Record>
Record& append(std::vector<Record>& v) {
  if (v.size() == v.capacity()) {
    const std::size_t want = v.capacity() < 1024 ? 1024 : v.capacity() * 2;
    v.reserve(want);
    const std::size_t bytes = v.capacity() * sizeof(Record);
    constexpr std::size_t kHuge = 2u << 20;
    if (bytes >= 2 * kHuge) {
      const auto begin = (reinterpret_cast<std::uintptr_t>(v.data()) + kHuge - 1) & ~(kHuge - 1);
      const auto end = (reinterpret_cast<std::uintptr_t>(v.data()) + bytes) & ~(kHuge - 1);
      if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
    }
  }
  return v.emplace_back();
}

uint32_t non_negative(int32_t v) { return v < 0 ? 0u : static_cast<uint32_t>(v); }

std::string uuid_text(const CUuuid& uuid) {
  unsigned char b[16];
  std::memcpy(b, uuid.bytes, sizeof b);
  return gpu_uuid_text(b);
}

}  // namespace

RecordConverter::RecordConverter(TraceStore& store, CallbackNameFn names, void* names_context)
    : store_(store), names_(names), names_context_(names_context) {}

StringId RecordConverter::intern(const char* text) {
  if (text == nullptr || *text == '\0') return kNoString;
  const auto bits = reinterpret_cast<std::uintptr_t>(text);
  CacheSlot& slot = cache_[((bits >> 3) * 0x9E3779B97F4A7C15ull) >> (64 - 10)];
  static_assert(kCacheSlots == 1024);
  if (slot.text == text && std::strcmp(store_.strings.all()[slot.id].c_str(), text) == 0) return slot.id;
  // Names from native code (NVTX ranges, CUPTI) may be any bytes; the store holds UTF-8 only
  // (the trace reader refuses anything else).
  const std::string_view view(text);
  const StringId id = is_utf8(view) ? store_.strings.intern(view) : store_.strings.intern(to_utf8(view));
  slot.text = text;
  slot.id = id;
  return id;
}

uint32_t RecordConverter::api_function(ApiKind kind, uint32_t cbid) {
  const CUpti_CallbackDomain domain =
      kind == ApiKind::kRuntime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
  const auto lookup = [&]() {
    ApiFunction f;
    f.kind = kind;
    f.callback_id = cbid;
    const char* name = names_ != nullptr ? names_(names_context_, domain, cbid) : nullptr;
    if (name != nullptr && *name != '\0') {
      f.name = store_.strings.intern(name);
    } else {
      f.name = store_.strings.intern(
          std::string(kind == ApiKind::kRuntime ? "cuda_runtime_cbid_" : "cuda_driver_cbid_") + std::to_string(cbid));
    }
    return store_.intern_api_function(f);
  };
  auto& functions = kind == ApiKind::kRuntime ? runtime_functions_ : driver_functions_;
  if (cbid >= functions.size()) {
    if (cbid > 1u << 16) return lookup();  // not a real cbid: keep the cache small
    functions.resize(cbid + 1, kNone32);
  }
  uint32_t& id = functions[cbid];
  if (id == kNone32) id = lookup();
  return id;
}

void RecordConverter::convert(const CUpti_Activity& record) {
  ++stats_.records;
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: convert_kernel(reinterpret_cast<const KernelActivity&>(record)); break;
    case CUPTI_ACTIVITY_KIND_MEMCPY: convert_memcpy(reinterpret_cast<const CUpti_ActivityMemcpy6&>(record)); break;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      convert_peer_memcpy(reinterpret_cast<const CUpti_ActivityMemcpyPtoP4&>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MEMSET: convert_memset(reinterpret_cast<const CUpti_ActivityMemset4&>(record)); break;
    case CUPTI_ACTIVITY_KIND_MEMORY2:
      if (!convert_memory(reinterpret_cast<const CUpti_ActivityMemory4&>(record))) {
        ++stats_.ignored;
        return;
      }
      break;
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      const auto& device = reinterpret_cast<const CUpti_ActivityDevice5&>(record);
      convert_device(device);
      if (cupti_api_version_ >= kClientOwnsDeviceNameApiVersion && device.name != nullptr)
        release_(const_cast<char*>(device.name));
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
      convert_api(reinterpret_cast<const CUpti_ActivityAPI&>(record), ApiKind::kRuntime);
      break;
    case CUPTI_ACTIVITY_KIND_DRIVER:
      convert_api(reinterpret_cast<const CUpti_ActivityAPI&>(record), ApiKind::kDriver);
      break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      if (!convert_sync(reinterpret_cast<const CUpti_ActivitySynchronization2&>(record))) {
        ++stats_.ignored;
        return;
      }
      break;
    case CUPTI_ACTIVITY_KIND_MARKER: convert_marker(reinterpret_cast<const CUpti_ActivityMarker2&>(record)); break;
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto& overhead = reinterpret_cast<const CUpti_ActivityOverhead3&>(record);
      convert_overhead(overhead);
      if (cupti_api_version_ >= kClientOwnsOverheadDataApiVersion && overhead.overheadData != nullptr) {
        release_(overhead.overheadData);
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
      convert_external(reinterpret_cast<const CUpti_ActivityExternalCorrelation&>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MARKER_DATA:  // payload/color/category: the store keeps none
    case CUPTI_ACTIVITY_KIND_NAME:         // names of threads/streams: the store keeps none
    case CUPTI_ACTIVITY_KIND_CONTEXT:
    case CUPTI_ACTIVITY_KIND_DEVICE_ATTRIBUTE: ++stats_.ignored; return;
    default: ++stats_.unknown_kind; return;
  }
  ++stats_.converted;
}

std::size_t RecordConverter::convert_buffer(uint8_t* buffer, std::size_t valid_bytes, NextRecordFn next) {
  ++stats_.buffers;
  std::size_t walked = 0;
  if (buffer == nullptr || valid_bytes == 0) return 0;
  CUpti_Activity* record = nullptr;
  for (;;) {
    const CUptiResult rc = next(buffer, valid_bytes, &record);
    if (rc == CUPTI_SUCCESS) {
      convert(*record);
      ++walked;
      continue;
    }
    if (rc != CUPTI_ERROR_MAX_LIMIT_REACHED) ++stats_.buffer_errors;
    break;
  }
  return walked;
}

void RecordConverter::add_dropped(uint64_t count) {
  dropped_ += count;
  store_.meta.dropped_records = dropped_;
}

void RecordConverter::dropped_unknown(std::string why) {
  if (dropped_queries_failed_++ == 0) dropped_query_error_ = std::move(why);
}

void RecordConverter::convert_kernel(const KernelActivity& r) {
  // What can throw (interning, out of memory) comes before the record is appended: a failure
  // leaves no half-written kernel in the store (the buffer's rest is counted lost).
  const StringId name = intern(r.name);
  LaunchConfig c;
  c.grid_x = non_negative(r.gridX);
  c.grid_y = non_negative(r.gridY);
  c.grid_z = non_negative(r.gridZ);
  c.block_x = non_negative(r.blockX);
  c.block_y = non_negative(r.blockY);
  c.block_z = non_negative(r.blockZ);
  c.registers_per_thread = r.registersPerThread;
  c.static_shared_bytes = non_negative(r.staticSharedMemory);
  c.dynamic_shared_bytes = non_negative(r.dynamicSharedMemory);
  c.local_bytes_per_thread = r.localMemoryPerThread;
  c.graph_id = r.graphId;
  c.graph_node_id = r.graphNodeId;
  // A kernel (by name) nearly always launches with the configuration it had last time: check
  // that one before the hash lookup.
  if (name >= config_of_name_.size()) config_of_name_.resize(std::size_t{name} + 1, kNone32);
  uint32_t& guess = config_of_name_[name];
  if (guess == kNone32 || !(c == store_.launch_configs[guess])) guess = store_.intern_launch_config(c);
  if (r.start == 0 && r.end == 0) ++stats_.incomplete;
  KernelRecord& k = append(store_.kernels);
  k.start_ns = r.start;
  k.end_ns = r.end;
  k.correlation_id = r.correlationId;
  k.name = name;
  k.device_id = r.deviceId;
  k.context_id = r.contextId;
  k.stream_id = r.streamId;
  k.launch_config = guess;
}

void RecordConverter::convert_memcpy(const CUpti_ActivityMemcpy6& r) {
  if (r.start == 0 && r.end == 0) ++stats_.incomplete;
  MemcpyRecord& m = append(store_.memcpys);
  m.start_ns = r.start;
  m.end_ns = r.end;
  m.bytes = r.bytes;
  m.correlation_id = r.correlationId;
  m.device_id = r.deviceId;
  m.context_id = r.contextId;
  m.stream_id = r.streamId;
  m.copy_kind = copy_kind(r.copyKind);
  m.src_kind = memory_kind(r.srcKind);
  m.dst_kind = memory_kind(r.dstKind);
  m.is_async = (r.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0;
  m.graph_id = r.graphId;
}

void RecordConverter::convert_peer_memcpy(const CUpti_ActivityMemcpyPtoP4& r) {
  if (r.start == 0 && r.end == 0) ++stats_.incomplete;
  MemcpyRecord m;
  m.start_ns = r.start;
  m.end_ns = r.end;
  m.bytes = r.bytes;
  m.correlation_id = r.correlationId;
  m.device_id = r.deviceId;
  m.src_device_id = r.srcDeviceId;
  m.dst_device_id = r.dstDeviceId;
  m.context_id = r.contextId;
  m.stream_id = r.streamId;
  m.copy_kind = r.copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN ? CopyKind::kPtoP : copy_kind(r.copyKind);
  m.src_kind = memory_kind(r.srcKind);
  m.dst_kind = memory_kind(r.dstKind);
  m.is_async = (r.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0;
  m.graph_id = r.graphId;
  store_.memcpys.push_back(m);
}

void RecordConverter::convert_memset(const CUpti_ActivityMemset4& r) {
  if (r.start == 0 && r.end == 0) ++stats_.incomplete;
  MemsetRecord m;
  m.start_ns = r.start;
  m.end_ns = r.end;
  m.bytes = r.bytes;
  m.value = r.value;
  m.correlation_id = r.correlationId;
  m.device_id = r.deviceId;
  m.context_id = r.contextId;
  m.stream_id = r.streamId;
  m.memory_kind = memory_kind(r.memoryKind);
  m.is_async = (r.flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) != 0;
  m.graph_id = r.graphId;
  store_.memsets.push_back(m);
}

bool RecordConverter::convert_memory(const CUpti_ActivityMemory4& r) {
  // INVALID (0) is neither an allocation nor a release: counted, not guessed.
  if (r.memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION &&
      r.memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) {
    ++stats_.unknown_memory_operations;
    return false;
  }
  AllocationRecord a;
  a.timestamp_ns = r.timestamp;
  a.address = r.address;
  a.bytes = r.bytes;
  a.pc = r.PC;
  a.correlation_id = r.correlationId;
  a.device_id = r.deviceId;
  a.context_id = r.contextId;
  a.stream_id = r.streamId;
  a.memory_kind = memory_kind(r.memoryKind);
  a.is_alloc = r.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  a.is_async = r.isAsync != 0;
  a.source = intern(r.source);
  store_.allocations.push_back(a);
  return true;
}

void RecordConverter::convert_device(const CUpti_ActivityDevice5& r) {
  DeviceInfo d;
  d.id = r.id;
  d.name = r.name != nullptr ? r.name : "";
  d.uuid = uuid_text(r.uuid);
  d.compute_capability_major = r.computeCapabilityMajor;
  d.compute_capability_minor = r.computeCapabilityMinor;
  d.sm_count = r.numMultiprocessors;
  d.core_clock_khz = r.coreClockRate;
  d.global_memory_bytes = r.globalMemorySize;
  d.l2_cache_bytes = r.l2CacheSize;
  d.shared_memory_per_sm_bytes = r.maxSharedMemoryPerMultiprocessor;
  d.max_threads_per_sm = r.maxWarpsPerMultiprocessor * r.numThreadsPerWarp;
  d.max_registers_per_sm = r.maxRegistersPerMultiprocessor;
  for (DeviceInfo& existing : store_.devices) {
    if (existing.id == d.id) {
      // Keep what only the driver knows (memory clock, bus width, PCIe).
      d.memory_clock_khz = existing.memory_clock_khz;
      d.memory_bus_width_bits = existing.memory_bus_width_bits;
      d.pcie_generation = existing.pcie_generation;
      d.pcie_link_width = existing.pcie_link_width;
      existing = d;
      return;
    }
  }
  store_.devices.push_back(d);
}

void RecordConverter::convert_api(const CUpti_ActivityAPI& r, ApiKind kind) {
  ApiRecord& a = append(store_.api_calls);
  a.start_ns = r.start;
  a.end_ns = r.end;
  a.correlation_id = r.correlationId;
  a.thread_id = r.threadId;
  a.return_value = r.returnValue;
  a.function = api_function(kind, r.cbid);
}

bool RecordConverter::convert_sync(const CUpti_ActivitySynchronization2& r) {
  // An event or stream query that found the work unfinished: a poll, not a wait. Only seen
  // when cuptiActivityEnableAllSyncRecords(0) could not be set.
  constexpr uint32_t kCudaErrorNotReady = 600;
  if (r.returnValue == kCudaErrorNotReady) {
    ++stats_.unfinished_sync_queries;
    return false;
  }
  // Any other error (e.g. 719, a launch failure reported by the synchronize): the host still
  // waited until the call returned, so the record stays; counted so the failure is visible.
  if (r.returnValue != 0) {
    if (stats_.failed_sync_waits == 0) stats_.first_failed_sync_result = r.returnValue;
    ++stats_.failed_sync_waits;
  }
  SyncRecord s;
  s.start_ns = r.start;
  s.end_ns = r.end;
  s.correlation_id = r.correlationId;
  s.context_id = r.contextId;
  s.stream_id = r.streamId;  // CUPTI_SYNCHRONIZATION_INVALID_VALUE (all ones) == kNone32
  s.kind = sync_kind(r.type);
  store_.syncs.push_back(s);
  return true;
}

void RecordConverter::convert_marker(const CUpti_ActivityMarker2& r) {
  const uint32_t thread = r.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? r.objectId.pt.threadId : 0u;
  if ((r.flags & CUPTI_ACTIVITY_FLAG_MARKER_END) != 0) {
    uint32_t index = kNone32;
    for (auto it = open_markers_.rbegin(); it != open_markers_.rend(); ++it) {
      if (it->first == r.id) {
        index = it->second;
        open_markers_.erase(std::next(it).base());
        break;
      }
    }
    if (index == kNone32) {
      const auto it = open_markers_overflow_.find(r.id);
      if (it == open_markers_overflow_.end()) {
        ++stats_.unmatched_marker_ends;
        return;
      }
      index = it->second;
      open_markers_overflow_.erase(it);
    }
    MarkerRecord& m = store_.markers[index];
    m.end_ns = r.timestamp;
    m.is_closed = true;
    return;
  }
  // Interned before the record is appended: a failure leaves no half-written marker.
  const StringId domain = intern(r.domain);
  const StringId name = intern(r.name);
  const auto marker_index = static_cast<uint32_t>(store_.markers.size());
  MarkerRecord& m = append(store_.markers);
  m.start_ns = r.timestamp;
  m.thread_id = thread;
  m.id = r.id;
  m.domain = domain;
  m.name = name;
  if ((r.flags & CUPTI_ACTIVITY_FLAG_MARKER_START) != 0) {
    m.end_ns = r.timestamp;  // until its END arrives (or the trace ends)
    m.is_range = true;
    m.is_closed = false;
    if (open_markers_.size() >= kMaxOpenInVector) {
      // Move the oldest half to the map: they are the least likely to end soon.
      const auto half = open_markers_.begin() + static_cast<std::ptrdiff_t>(kMaxOpenInVector / 2);
      for (auto it = open_markers_.begin(); it != half; ++it) open_markers_overflow_.emplace(it->first, it->second);
      open_markers_.erase(open_markers_.begin(), half);
    }
    open_markers_.emplace_back(r.id, marker_index);
  } else {
    // Instantaneous (and sync) markers are points in time.
    m.end_ns = r.timestamp;
    m.is_range = false;
    m.is_closed = true;
  }
}

void RecordConverter::convert_overhead(const CUpti_ActivityOverhead3& r) {
  OverheadRecord o;
  o.start_ns = r.start;
  o.end_ns = r.end;
  o.object_kind = static_cast<uint8_t>(r.objectKind);
  o.object_id = object_id(r.objectKind, r.objectId);
  o.kind = intern(overhead_name(static_cast<uint32_t>(r.overheadKind)));
  store_.overheads.push_back(o);
}

void RecordConverter::convert_external(const CUpti_ActivityExternalCorrelation& r) {
  ExternalCorrelationRecord e;
  e.correlation_id = r.correlationId;
  e.external_kind = static_cast<uint32_t>(r.externalKind);
  e.external_id = r.externalId;
  store_.external_correlations.push_back(e);
}

std::size_t RecordConverter::drop_syncs_without_api_call() {
  std::unordered_set<uint32_t> traced;
  traced.reserve(store_.api_calls.size());
  for (const ApiRecord& a : store_.api_calls) traced.insert(a.correlation_id);
  const std::size_t removed =
      std::erase_if(store_.syncs, [&](const SyncRecord& y) { return traced.count(y.correlation_id) == 0; });
  stats_.untraced_sync_calls += removed;
  return removed;
}

void RecordConverter::finish(uint64_t trace_end_ns) {
  auto close_at_end = [&](uint32_t index) {
    MarkerRecord& m = store_.markers[index];
    m.end_ns = trace_end_ns > m.start_ns ? trace_end_ns : m.start_ns;
    m.is_closed = false;
  };
  for (const auto& [id, index] : open_markers_) close_at_end(index);
  for (const auto& [id, index] : open_markers_overflow_) close_at_end(index);
  const std::size_t still_open = open_markers_.size() + open_markers_overflow_.size();
  open_markers_.clear();
  open_markers_overflow_.clear();
  TraceMeta& meta = store_.meta;
  meta.dropped_records = dropped_;
  // One warning per kind of loss or skip that happened: "<count><what>".
  auto warn_count = [&meta](std::string_view code, uint64_t count, const std::string& what,
                            std::vector<double> more = {}) {
    if (count == 0) return;
    more.insert(more.begin(), static_cast<double>(count));
    meta.warnings.add(code, std::to_string(count) + what, std::move(more));
  };
  warn_count("capture.records_dropped", dropped_,
             " CUPTI activity records were dropped (CUPTI ran out of buffers): "
             "give it larger buffers (fpgaprof.trace(buffer_size=BYTES); fpgaprof run --buffer-size BYTES; "
             "8 MiB by default), or trace a shorter run");
  warn_count("capture.dropped_count_unknown", dropped_queries_failed_,
             " queries of how many CUPTI activity records were dropped failed (cuptiActivityGetNumDroppedRecords: " +
                 dropped_query_error_ + "): records may have been lost uncounted, so dropped_records (" +
                 std::to_string(dropped_) +
                 ") is a lower bound; trace again with larger buffers (fpgaprof.trace(buffer_size=BYTES); "
                 "fpgaprof run --buffer-size BYTES) to make a loss less likely");
  meta.set_incomplete_records(stats_.incomplete);
  warn_count("capture.buffer_invalid_record", stats_.buffer_errors,
             " CUPTI activity buffers held an invalid record and were read only up "
             "to it: records after it are lost");
  warn_count("capture.unknown_records_skipped", stats_.unknown_kind,
             " CUPTI activity records of kinds fpgaprof does not read were skipped");
  warn_count("capture.unknown_records_skipped", stats_.unknown_memory_operations,
             " CUPTI memory records had operation type INVALID (neither allocation "
             "nor release) and were skipped");
  warn_count("capture.sync_polls_skipped", stats_.unfinished_sync_queries,
             " CUPTI synchronization records of event/stream queries that found the "
             "work unfinished (returnValue 600, CUDA_ERROR_NOT_READY) were skipped: "
             "polls, not host waits");
  warn_count("capture.sync_polls_skipped", stats_.untraced_sync_calls,
             " CUPTI synchronization records of untraced calls (event/stream queries "
             "that found the work complete) were skipped: polls, not host waits");
  warn_count("capture.sync_waits_failed", stats_.failed_sync_waits,
             " host waits returned an error (first: CUresult " + std::to_string(stats_.first_failed_sync_result) +
                 "): kept as host waits, but the GPU work they waited for failed",
             {static_cast<double>(stats_.first_failed_sync_result)});
  warn_count("capture.ranges_open_at_stop", still_open,
             " NVTX ranges were still open when the trace stopped: they end at the "
             "trace end (is_closed=false)");
  warn_count("capture.ranges_begun_before", stats_.unmatched_marker_ends,
             " NVTX ranges ended in the trace but began before it: not recorded");
}

}  // namespace fpgaprof::cupti

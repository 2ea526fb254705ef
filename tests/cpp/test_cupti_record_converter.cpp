// RecordConverter fed real CUPTI structs (built here field by field), laid into a buffer
// back to back the way libcupti 13.0 lays them out, and walked with a stand-in for
// cuptiActivityGetNextRecord. Expected values are the hand-set inputs mapped by the rules
// in records.hpp.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cupti/record_converter.hpp"
#include "fake_cupti/activity_layout.hpp"

using fpgaprof::ApiKind;
using fpgaprof::CopyKind;
using fpgaprof::MemoryKind;
using fpgaprof::SyncKind;
using fpgaprof::TraceStore;
using fpgaprof::cupti::RecordConverter;

namespace {

// libcupti 13.0 steps by the size of the struct version it writes (checked against the
// library: kernel 216 bytes, memcpy 96, ...); unknown kinds end the walk.
using fake_cupti::next_record;

struct Buffer {
  std::vector<uint64_t> words;  // 8-byte aligned storage
  size_t used = 0;
  template <typename R>
  void put(const R& r) {
    static_assert(sizeof(R) % 8 == 0);
    words.resize((used + sizeof(R)) / 8);
    std::memcpy(reinterpret_cast<uint8_t*>(words.data()) + used, &r, sizeof(R));
    used += sizeof(R);
  }
  uint8_t* data() { return reinterpret_cast<uint8_t*>(words.data()); }
};

int g_name_calls = 0;
const char* api_names(void*, CUpti_CallbackDomain domain, uint32_t cbid) {
  ++g_name_calls;
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == 307) return "cuLaunchKernel";
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == 211) return "cudaLaunchKernel_v7000";
  return nullptr;
}

CUpti_ActivityMarker2 marker(uint32_t flags, uint32_t id, uint64_t ts, uint32_t tid, const char* name,
                             const char* domain) {
  CUpti_ActivityMarker2 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = static_cast<CUpti_ActivityFlag>(flags);
  m.id = id;
  m.timestamp = ts;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.threadId = tid;
  m.name = name;
  m.domain = domain;
  return m;
}

}  // namespace

TEST_CASE("kernel, copies, memset and allocation records convert field by field", "[cupti][converter]") {
  Buffer b;
  fake_cupti::KernelRecordLayout k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.registersPerThread = 40;
  k.start = 1000;
  k.end = 1500;
  k.deviceId = 1;
  k.contextId = 2;
  k.streamId = 13;
  k.gridX = 4;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.staticSharedMemory = 2048;
  k.dynamicSharedMemory = 4096;
  k.localMemoryPerThread = 16;
  k.correlationId = 77;
  k.name = "loop_multiply_fusion_3";
  k.graphId = 5;
  k.graphNodeId = 123456789012ull;
  b.put(k);

  CUpti_ActivityMemcpy6 h{};
  h.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  h.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  h.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  h.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  h.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  h.bytes = 1 << 20;
  h.start = 2000;
  h.end = 2600;
  h.deviceId = 1;
  h.contextId = 2;
  h.streamId = 14;
  h.correlationId = 78;
  b.put(h);
  CUpti_ActivityMemcpy6 d = h;
  d.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  d.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  d.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  d.flags = 0;
  d.bytes = 12;
  b.put(d);

  CUpti_ActivityMemcpyPtoP4 p{};
  p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  p.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p.bytes = 4096;
  p.start = 3000;
  p.end = 3100;
  p.deviceId = 0;
  p.srcDeviceId = 0;
  p.dstDeviceId = 1;
  p.correlationId = 79;
  b.put(p);

  CUpti_ActivityMemset4 s{};
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.value = 0xab;
  s.bytes = 512;
  s.start = 4000;
  s.end = 4010;
  s.deviceId = 1;
  s.streamId = 15;
  s.correlationId = 80;
  s.flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC;
  s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
  b.put(s);

  CUpti_ActivityMemory4 a{};
  a.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  a.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  a.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  a.correlationId = 81;
  a.address = 0x7f0012340000ull;
  a.bytes = 1 << 24;
  a.timestamp = 5000;
  a.PC = 0x401000;
  a.deviceId = 1;
  a.contextId = 2;
  a.streamId = 16;
  a.isAsync = 1;
  a.source = "bfc_allocator";
  b.put(a);
  CUpti_ActivityMemory4 r = a;
  r.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  r.timestamp = 6000;
  r.isAsync = 0;
  r.source = nullptr;
  b.put(r);

  TraceStore store;
  RecordConverter conv(store);
  REQUIRE(conv.convert_buffer(b.data(), b.used, next_record) == 7);
  CHECK(conv.stats().converted == 7);
  CHECK(conv.stats().buffer_errors == 0);

  REQUIRE(store.kernels.size() == 1);
  const auto& kr = store.kernels[0];
  CHECK(kr.start_ns == 1000);
  CHECK(kr.end_ns == 1500);
  CHECK(kr.duration_ns() == 500);
  CHECK(kr.correlation_id == 77);
  CHECK(store.strings.get(kr.name) == "loop_multiply_fusion_3");
  CHECK(kr.device_id == 1);
  CHECK(kr.context_id == 2);
  CHECK(kr.stream_id == 13);
  REQUIRE(store.launch_configs.size() == 1);
  REQUIRE(kr.launch_config == 0);
  const fpgaprof::LaunchConfig& lc = store.launch_config_of(kr);
  CHECK((lc.grid_x == 4 && lc.grid_y == 2 && lc.grid_z == 1));
  CHECK(lc.blocks() == 8);
  CHECK((lc.block_x == 256 && lc.block_y == 1 && lc.block_z == 1));
  CHECK(lc.registers_per_thread == 40);
  CHECK(lc.static_shared_bytes == 2048);
  CHECK(lc.dynamic_shared_bytes == 4096);
  CHECK(lc.local_bytes_per_thread == 16);
  CHECK(lc.graph_id == 5);
  CHECK(lc.graph_node_id == 123456789012ull);
  CHECK(kr.thread_id == 0);  // joined later through the API record

  REQUIRE(store.memcpys.size() == 3);
  CHECK(store.memcpys[0].copy_kind == CopyKind::kHtoD);
  CHECK(store.memcpys[0].src_kind == MemoryKind::kPinned);
  CHECK(store.memcpys[0].dst_kind == MemoryKind::kDevice);
  CHECK(store.memcpys[0].is_async);
  CHECK(store.memcpys[0].bytes == 1048576);
  CHECK(store.memcpys[0].stream_id == 14);
  CHECK(store.memcpys[1].copy_kind == CopyKind::kDtoH);
  CHECK(store.memcpys[1].dst_kind == MemoryKind::kPageable);
  CHECK_FALSE(store.memcpys[1].is_async);
  CHECK(store.memcpys[1].bytes == 12);
  CHECK(store.memcpys[2].copy_kind == CopyKind::kPtoP);
  CHECK(store.memcpys[2].src_device_id == 0);
  CHECK(store.memcpys[2].dst_device_id == 1);
  CHECK(store.memcpys[0].src_device_id == fpgaprof::kNone32);  // not a peer copy

  REQUIRE(store.memsets.size() == 1);
  CHECK(store.memsets[0].value == 0xab);
  CHECK(store.memsets[0].bytes == 512);
  CHECK(store.memsets[0].memory_kind == MemoryKind::kManaged);
  CHECK(store.memsets[0].is_async);
  CHECK(store.memsets[0].correlation_id == 80);

  REQUIRE(store.allocations.size() == 2);
  CHECK(store.allocations[0].is_alloc);
  CHECK(store.allocations[0].is_async);
  CHECK(store.allocations[0].address == 0x7f0012340000ull);
  CHECK(store.allocations[0].bytes == 16777216);
  CHECK(store.allocations[0].pc == 0x401000);
  CHECK(store.allocations[0].timestamp_ns == 5000);
  CHECK(store.strings.get(store.allocations[0].source) == "bfc_allocator");
  CHECK_FALSE(store.allocations[1].is_alloc);
  CHECK(store.allocations[1].source == fpgaprof::kNoString);

  conv.finish(10000);
  CHECK(store.meta.warnings.empty());
}

TEST_CASE("kernels share one stored launch configuration per distinct configuration", "[cupti][converter]") {
  // Launches A, B, A, A, C where C differs from A only in the graph node: 3 configurations,
  // referenced as 0, 1, 0, 0, 2 whatever order the repeats come in.
  Buffer b;
  fake_cupti::KernelRecordLayout a{};
  a.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  a.start = 10;
  a.end = 20;
  a.name = "k";
  a.gridX = 132;
  a.gridY = 1;
  a.gridZ = 1;
  a.blockX = 128;
  a.blockY = 1;
  a.blockZ = 1;
  a.registersPerThread = 32;
  fake_cupti::KernelRecordLayout bb = a;
  bb.blockX = 256;
  fake_cupti::KernelRecordLayout c = a;
  c.graphId = 1;
  c.graphNodeId = 7;
  for (const auto* r : {&a, &bb, &a, &a, &c}) b.put(*r);

  TraceStore store;
  RecordConverter conv(store);
  REQUIRE(conv.convert_buffer(b.data(), b.used, next_record) == 5);
  REQUIRE(store.launch_configs.size() == 3);
  std::vector<uint32_t> refs;
  for (const auto& k : store.kernels) refs.push_back(k.launch_config);
  CHECK(refs == std::vector<uint32_t>{0, 1, 0, 0, 2});
  CHECK(store.launch_configs[1].block_x == 256);
  CHECK(store.launch_configs[2].graph_node_id == 7);
  // A configuration appended directly (as the trace reader does) is found by later interning.
  fpgaprof::LaunchConfig extra;
  extra.grid_x = 9;
  store.launch_configs.push_back(extra);
  CHECK(store.intern_launch_config(extra) == 3);
  CHECK(store.intern_launch_config(store.launch_configs[0]) == 0);
  CHECK(store.launch_configs.size() == 4);
  fpgaprof::KernelRecord none;
  CHECK(store.launch_config_of(none).blocks() == 0);  // kNone32: the all-zero configuration
}

TEST_CASE("device, API, synchronization, external correlation and overhead records", "[cupti][converter]") {
  Buffer b;
  CUpti_ActivityDevice5 dev{};
  dev.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  dev.globalMemorySize = 80ull << 30;
  dev.l2CacheSize = 50u << 20;
  dev.numThreadsPerWarp = 32;
  dev.coreClockRate = 1755000;
  dev.numMultiprocessors = 132;
  dev.maxWarpsPerMultiprocessor = 64;
  dev.maxSharedMemoryPerMultiprocessor = 233472;
  dev.maxRegistersPerMultiprocessor = 65536;
  dev.computeCapabilityMajor = 9;
  dev.computeCapabilityMinor = 0;
  dev.id = 3;
  for (int i = 0; i < 16; ++i) dev.uuid.bytes[i] = static_cast<char>(0xa0 + i);
  dev.name = "NVIDIA H100 80GB HBM3";
  b.put(dev);

  CUpti_ActivityAPI api{};
  api.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  api.cbid = 307;
  api.start = 100;
  api.end = 180;
  api.threadId = 4242;
  api.correlationId = 9;
  api.returnValue = 0;
  b.put(api);
  b.put(api);  // same cbid: the name is looked up once
  CUpti_ActivityAPI rt = api;
  rt.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  rt.cbid = 211;
  b.put(rt);
  CUpti_ActivityAPI unknown = api;
  unknown.cbid = 999;
  b.put(unknown);

  CUpti_ActivitySynchronization2 sy{};
  sy.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  sy.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  sy.start = 200;
  sy.end = 900;
  sy.correlationId = 10;
  sy.contextId = 1;
  sy.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  b.put(sy);

  CUpti_ActivityExternalCorrelation ec{};
  ec.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  ec.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;
  ec.externalId = 0x1122334455ull;
  ec.correlationId = 9;
  b.put(ec);

  CUpti_ActivityOverhead3 ov{};
  ov.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  ov.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  ov.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  ov.objectId.pt.threadId = 4242;
  ov.start = 300;
  ov.end = 350;
  b.put(ov);

  TraceStore store;
  g_name_calls = 0;
  RecordConverter conv(store, api_names, nullptr);
  REQUIRE(conv.convert_buffer(b.data(), b.used, next_record) == 8);

  REQUIRE(store.devices.size() == 1);
  const auto& d = store.devices[0];
  CHECK(d.id == 3);
  CHECK(d.name == "NVIDIA H100 80GB HBM3");
  CHECK(d.uuid == "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf");
  CHECK(d.compute_capability_major == 9);
  CHECK(d.sm_count == 132);
  CHECK(d.core_clock_khz == 1755000);
  CHECK(d.global_memory_bytes == 85899345920ull);
  CHECK(d.l2_cache_bytes == 52428800);
  CHECK(d.shared_memory_per_sm_bytes == 233472);
  CHECK(d.max_threads_per_sm == 2048);  // 64 warps x 32 threads
  CHECK(d.max_registers_per_sm == 65536);
  CHECK(d.memory_clock_khz == 0);  // not in the DEVICE record: filled from the driver

  REQUIRE(store.api_calls.size() == 4);
  const auto fn = [&](std::size_t i) -> const fpgaprof::ApiFunction& {
    return store.api_function_of(store.api_calls[i]);
  };
  CHECK(store.strings.get(fn(0).name) == "cuLaunchKernel");
  CHECK(fn(0).kind == ApiKind::kDriver);
  CHECK(store.api_calls[0].thread_id == 4242);
  CHECK(store.api_calls[0].correlation_id == 9);
  CHECK(fn(0).callback_id == 307);
  CHECK(store.api_calls[0].start_ns == 100);
  CHECK(store.api_calls[0].end_ns == 180);
  CHECK(store.api_calls[1].function == store.api_calls[0].function);  // one stored function, two calls
  CHECK(store.strings.get(fn(2).name) == "cudaLaunchKernel_v7000");
  CHECK(fn(2).kind == ApiKind::kRuntime);
  CHECK(store.strings.get(fn(3).name) == "cuda_driver_cbid_999");
  CHECK(store.api_functions.size() == 3);
  CHECK(g_name_calls == 3);  // 307 once, 211 once, 999 once

  REQUIRE(store.syncs.size() == 1);
  CHECK(store.syncs[0].kind == SyncKind::kContextSynchronize);
  CHECK(store.syncs[0].stream_id == fpgaprof::kNone32);
  CHECK(store.syncs[0].start_ns == 200);
  CHECK(store.syncs[0].end_ns == 900);

  REQUIRE(store.external_correlations.size() == 1);
  CHECK(store.external_correlations[0].external_id == 0x1122334455ull);
  CHECK(store.external_correlations[0].external_kind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1);
  CHECK(store.external_correlations[0].correlation_id == 9);

  REQUIRE(store.overheads.size() == 1);
  CHECK(store.strings.get(store.overheads[0].kind) == "CUPTI_BUFFER_FLUSH");
  CHECK(store.overheads[0].object_kind == CUPTI_ACTIVITY_OBJECT_THREAD);
  CHECK(store.overheads[0].object_id == 4242);
}

namespace {
std::vector<void*> g_released;
void count_release(void* p) {
  g_released.push_back(p);
  std::free(p);
}
}  // namespace

TEST_CASE("what CUPTI hands to the client is freed after the copy, by API version", "[cupti][converter]") {
  // cupti_activity.h: Overhead3.overheadData "Client is responsible for freeing" from the 12.8
  // header (API 26) on; Device5.name only from CUDA 13.0's (API 130000): 12.8/12.9 keep it.
  const auto convert_with = [](uint32_t version, TraceStore& store) {
    Buffer b;
    CUpti_ActivityDevice5 dev{};
    dev.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    dev.id = 0;
    char* name = static_cast<char*>(std::malloc(32));
    std::strcpy(name, "NVIDIA H200");
    dev.name = name;
    b.put(dev);
    CUpti_ActivityOverhead3 ov{};
    ov.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    ov.overheadKind = CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL;
    ov.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    void* data = std::malloc(16);
    ov.overheadData = data;
    b.put(ov);
    CUpti_ActivityOverhead3 plain = ov;  // a kind without extra data: a null pointer, left alone
    plain.overheadData = nullptr;
    b.put(plain);
    g_released.clear();
    RecordConverter conv(store, api_names, nullptr);
    conv.set_cupti_api_version(version, count_release);
    REQUIRE(conv.convert_buffer(b.data(), b.used, next_record) == 3);
    return std::vector<void*>{name, data};
  };

  SECTION("CUDA 13.0: the device name and the overhead data") {
    TraceStore store;
    const auto owned = convert_with(130001, store);
    CHECK(g_released == owned);
    REQUIRE(store.devices.size() == 1);
    CHECK(store.devices[0].name == "NVIDIA H200");  // copied before the free
    CHECK(store.overheads.size() == 2);
  }
  SECTION("CUDA 12.8: the overhead data only; the name stays CUPTI's") {
    TraceStore store;
    const auto owned = convert_with(26, store);
    CHECK(g_released == std::vector<void*>{owned[1]});
    std::free(owned[0]);
  }
  SECTION("version unknown: nothing is freed") {
    TraceStore store;
    const auto owned = convert_with(0, store);
    CHECK(g_released.empty());
    std::free(owned[0]);
    std::free(owned[1]);
  }
}

TEST_CASE("marker START/END pairs become ranges, open ones end at the trace end", "[cupti][converter][markers]") {
  Buffer b;
  const char* module = "XlaModule:#hlo_module=jit_f,program_id=3#";
  const char* thunk = "Thunk:#hlo_op=fusion.1,unique_hlo_op_id=7#";
  b.put(marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100, 11, module, "TSL"));
  b.put(marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 110, 11, thunk, "TSL"));
  b.put(marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 3, 115, 12, "other_thread", nullptr));
  b.put(marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 150, 11, nullptr, nullptr));
  b.put(marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 4, 160, 11, "checkpoint", "user"));
  b.put(marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 99, 170, 11, nullptr, nullptr));  // START before trace

  TraceStore store;
  RecordConverter conv(store);
  conv.convert_buffer(b.data(), b.used, next_record);
  // The module range ends in a later buffer.
  Buffer b2;
  b2.put(marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 200, 11, nullptr, nullptr));
  conv.convert_buffer(b2.data(), b2.used, next_record);
  conv.finish(1000);

  REQUIRE(store.markers.size() == 4);
  const auto& m0 = store.markers[0];
  CHECK(store.strings.get(m0.name) == module);
  CHECK(store.strings.get(m0.domain) == "TSL");
  CHECK(m0.start_ns == 100);
  CHECK(m0.end_ns == 200);
  CHECK(m0.is_range);
  CHECK(m0.is_closed);
  CHECK(m0.thread_id == 11);
  CHECK(m0.id == 1);
  const auto& m1 = store.markers[1];
  CHECK(store.strings.get(m1.name) == thunk);
  CHECK(m1.start_ns == 110);
  CHECK(m1.end_ns == 150);
  CHECK(m1.is_closed);
  const auto& m2 = store.markers[2];
  CHECK(store.strings.get(m2.name) == "other_thread");
  CHECK(m2.domain == fpgaprof::kNoString);  // default domain
  CHECK(m2.thread_id == 12);
  CHECK(m2.end_ns == 1000);  // still open at the end
  CHECK_FALSE(m2.is_closed);
  const auto& m3 = store.markers[3];
  CHECK_FALSE(m3.is_range);
  CHECK(m3.start_ns == 160);
  CHECK(m3.end_ns == 160);
  CHECK(conv.stats().unmatched_marker_ends == 1);
  bool open_warned = false, unmatched_warned = false;
  for (const auto& w : store.meta.warnings) {
    open_warned |= w.message.find("1 NVTX ranges were still open") != std::string::npos;
    unmatched_warned |= w.message.find("began before it") != std::string::npos;
  }
  CHECK(open_warned);
  CHECK(unmatched_warned);
}

TEST_CASE("dropped and incomplete records are counted and reported", "[cupti][converter][dropped]") {
  Buffer b;
  fake_cupti::KernelRecordLayout k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = "k";
  b.put(k);  // start = end = 0: the device timestamp buffer ran out
  k.start = 5;
  k.end = 9;
  b.put(k);
  TraceStore store;
  RecordConverter conv(store);
  conv.convert_buffer(b.data(), b.used, next_record);
  conv.add_dropped(5);
  conv.add_dropped(0);
  conv.add_dropped(7);
  conv.finish(100);
  CHECK(store.kernels.size() == 2);  // kept, so counts stay whole
  CHECK(store.meta.dropped_records == 12);
  CHECK(store.meta.incomplete_records == 1);
  int hits = 0;
  for (const auto& w : store.meta.warnings) {
    if (w.message.rfind("12 CUPTI activity records were dropped", 0) == 0) ++hits;
    if (w.message.rfind("1 GPU activity records have no timestamps", 0) == 0) ++hits;
  }
  CHECK(hits == 2);
}

TEST_CASE("a bad record ends the walk and is reported, unknown kinds are counted", "[cupti][converter]") {
  Buffer b;
  CUpti_ActivityAPI api{};
  api.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  api.cbid = 1;
  b.put(api);
  CUpti_ActivityAPI bad = api;
  bad.kind = static_cast<CUpti_ActivityKind>(0x7ff0);  // no such kind: the walker stops
  b.put(bad);
  b.put(api);
  TraceStore store;
  RecordConverter conv(store);
  CHECK(conv.convert_buffer(b.data(), b.used, next_record) == 1);
  CHECK(conv.stats().buffer_errors == 1);
  // A kind the walker knows but the converter does not keep.
  fake_cupti::MarkerDataLayout md{};
  md.kind = CUPTI_ACTIVITY_KIND_MARKER_DATA;
  conv.convert(reinterpret_cast<const CUpti_Activity&>(md));
  CUpti_Activity odd{};
  odd.kind = CUPTI_ACTIVITY_KIND_PC_SAMPLING;
  conv.convert(odd);
  CHECK(conv.stats().ignored == 1);
  CHECK(conv.stats().unknown_kind == 1);
  conv.finish(10);
  CHECK(store.meta.warnings.size() == 2);  // the buffer error and the unknown kind
}

TEST_CASE("kernel names are interned by text, never trusted by pointer alone", "[cupti][converter]") {
  TraceStore store;
  RecordConverter conv(store);
  char name[32] = "fusion_a";
  char copy[32] = "fusion_a";
  fake_cupti::KernelRecordLayout k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = 1;
  k.end = 2;
  k.name = name;
  conv.convert(reinterpret_cast<const CUpti_Activity&>(k));
  conv.convert(reinterpret_cast<const CUpti_Activity&>(k));
  k.name = copy;
  conv.convert(reinterpret_cast<const CUpti_Activity&>(k));
  std::strcpy(name, "fusion_b");  // the same address now holds another name
  k.name = name;
  conv.convert(reinterpret_cast<const CUpti_Activity&>(k));
  REQUIRE(store.kernels.size() == 4);
  CHECK(store.kernels[0].name == store.kernels[1].name);
  CHECK(store.kernels[0].name == store.kernels[2].name);
  CHECK(store.strings.get(store.kernels[3].name) == "fusion_b");
  CHECK(store.kernels[3].name != store.kernels[0].name);
}

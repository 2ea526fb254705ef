// How libcupti lays activity records out in a buffer: each record is the struct version that
// CUPTI reports for its kind, back to back: with CUDA 13's headers 13.0's layout (kernel records
// are CUpti_ActivityKernel10, 216 bytes), with CUDA 12's 12.8's (CUpti_ActivityKernel9, 208
// bytes), so the converter is tested on the longer 13.0 record and on 12.8's alike. Shared by the libcupti test double,
// the converter tests and the conversion benchmark, which all build buffers like CUPTI's and walk them like
// cuptiActivityGetNextRecord. Test support only; includes CUPTI headers.
#pragma once

#include <cupti_activity.h>

#include <cstddef>
#include <cstdint>

namespace fake_cupti {

// The kernel record the library of these headers' CUDA major emits.
#if CUPTI_API_VERSION >= 130000
using KernelRecordLayout = CUpti_ActivityKernel10;
using MarkerDataLayout = CUpti_ActivityMarkerData2;
#else
using KernelRecordLayout = CUpti_ActivityKernel9;
using MarkerDataLayout = CUpti_ActivityMarkerData;
#endif

// Size of one record of `kind` in such a buffer; 0 for kinds the fake never emits.
constexpr std::size_t record_size(uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: return sizeof(KernelRecordLayout);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_MARKER_DATA: return sizeof(MarkerDataLayout);
    case CUPTI_ACTIVITY_KIND_NAME: return sizeof(CUpti_ActivityName);
    default: return 0;
  }
}

// cuptiActivityGetNextRecord's contract over such a buffer: the record after *record (the
// first when *record is null); MAX_LIMIT_REACHED at the end; INVALID_KIND for a record of an
// unknown kind or one that runs past valid_bytes.
inline CUptiResult next_record(uint8_t* buffer, std::size_t valid_bytes, CUpti_Activity** record) {
  if (buffer == nullptr || record == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  std::size_t offset = 0;
  if (*record != nullptr) {
    offset = static_cast<std::size_t>(reinterpret_cast<uint8_t*>(*record) - buffer);
    offset += record_size((*record)->kind);
  }
  if (offset + sizeof(CUpti_Activity) > valid_bytes) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  auto* next = reinterpret_cast<CUpti_Activity*>(buffer + offset);
  const std::size_t size = record_size(next->kind);
  if (size == 0 || offset + size > valid_bytes) return CUPTI_ERROR_INVALID_KIND;
  *record = next;
  return CUPTI_SUCCESS;
}

}  // namespace fake_cupti

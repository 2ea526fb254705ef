// Device ceilings: peak FLOP/s per precision, peak DRAM bandwidth and host-link bandwidth of
// one GPU, from a per-architecture table (docs/roofline.md cites the datasheet figures) scaled
// by the device's SM count and clock, or from measured values (fpgaprof.calibrate).
// Pure functions over plain data: thread-safe, no I/O.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "fpgaprof/hlo/hlo_module.hpp"
#include "fpgaprof/pcie_link.hpp"
#include "fpgaprof/records.hpp"

namespace fpgaprof::analysis {

// The pipes a roofline can be drawn against. Tensor entries are dense (no sparsity) rates.
enum class Precision : uint8_t {
  kFp64 = 0,    // FP64 FMA pipe
  kFp64Tensor,  // FP64 tensor cores (sm_80, sm_90, sm_100)
  kFp32,        // FP32 FMA pipe (also used for integer work)
  kFp16,        // FP16/BF16 without tensor cores (packed half2)
  kFp16Tensor,  // FP16/BF16 tensor cores, FP32 accumulate
  kTf32Tensor,  // TF32 tensor cores (f32 dots under XLA's default precision)
  kFp8Tensor,   // FP8 tensor cores (sm_89+)
  kCount,
};
inline constexpr std::size_t kPrecisionCount = static_cast<std::size_t>(Precision::kCount);
const char* precision_name(Precision p);  // "fp64", "fp64_tensor", ...
// Inverse of precision_name; throws Error(kInvalidArgument) for an unknown name.
Precision precision_from_name(const std::string& name);

// Dense FLOPs per SM per clock cycle of one architecture (an FMA counts 2).
struct ArchitectureRates {
  uint32_t cc_major = 0;
  uint32_t cc_minor = 0;
  const char* name = "";  // "Hopper (sm_90)"
  std::array<double, kPrecisionCount> flops_per_sm_per_cycle{};
};

// Table row for a compute capability: the exact (major, minor) when listed, else the closest
// listed minor of the same major (exact=false). nullptr when the major is not in the table.
const ArchitectureRates* architecture_rates(uint32_t cc_major, uint32_t cc_minor, bool* exact = nullptr);

// Where a ceiling value came from.
enum class CeilingSource : uint8_t { kUnknown = 0, kTable = 1, kMeasured = 2, kUser = 3 };
const char* ceiling_source_name(CeilingSource s);

struct Ceilings {
  std::string device_name;
  std::string architecture;                                // table row name, "" when unknown
  bool architecture_exact = false;                         // false: nearest table row of the same major was used
  std::array<double, kPrecisionCount> peak_flops_per_s{};  // 0 = this pipe does not exist / unknown
  std::array<CeilingSource, kPrecisionCount> flops_source{};
  double dram_bytes_per_s = 0;  // 2 x memory clock x bus width / 8
  CeilingSource dram_source = CeilingSource::kUnknown;
  double link_bytes_per_s = 0;  // host link, one direction
  CeilingSource link_source = CeilingSource::kUnknown;
  std::string link_description;  // "PCIe gen5 x16"

  // Roof that applies to `p`: when that pipe is absent (0), the next slower pipe that computes
  // the same type (fp64_tensor -> fp64, tf32/fp16/fp8 tensor -> fp32 / fp16 -> fp32).
  double flops_for(Precision p) const;
  Precision effective_precision(Precision p) const;
  // FLOP/byte where the memory roof meets the compute roof of `p`; 0 when either is unknown.
  double ridge_flops_per_byte(Precision p) const;
};

// Table-based ceilings of one device: per-SM-per-cycle rates x sm_count x core clock;
// DeviceInfo::peak_dram_bandwidth_bytes_per_s(); PCIe from generation x width when known.
// Unknown architecture: FLOP/s ceilings stay 0 (source kUnknown). Never throws.
Ceilings table_ceilings(const DeviceInfo& device);

// Host-link bandwidth of a PCIe generation and width (fpgaprof/pcie_link.hpp, where the link
// read from sysfs is ranked by it too).
using fpgaprof::pcie_bytes_per_s;

// Pipe an HLO instruction of element type `type` and access pattern `pattern` runs on:
// dot/convolution use tensor pipes (f32 -> tf32 tensor, XLA's default precision on GPUs),
// everything else the vector pipe of its type; integers and predicates count as fp32.
Precision precision_for(hlo::PrimitiveType type, hlo::AccessPattern pattern);

}  // namespace fpgaprof::analysis

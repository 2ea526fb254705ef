#include "fpgaprof/analysis/ceilings.hpp"

#include <cmath>
#include <cstdlib>

#include "fpgaprof/error.hpp"

namespace fpgaprof::analysis {
namespace {

using P = Precision;

// Dense per-SM per-cycle FLOPs (FMA = 2). Order: fp64, fp64_tensor, fp32, fp16, fp16_tensor,
// tf32_tensor, fp8_tensor. Sources and the arithmetic behind each row: docs/roofline.md.
const ArchitectureRates kTable[] = {
    {7, 0, "Volta (sm_70)", {64, 0, 128, 256, 1024, 0, 0}},
    {7, 5, "Turing (sm_75)", {4, 0, 128, 256, 1024, 0, 0}},
    {8, 0, "Ampere GA100 (sm_80)", {64, 128, 128, 512, 2048, 1024, 0}},
    {8, 6, "Ampere GA10x (sm_86)", {4, 0, 256, 256, 1024, 512, 0}},
    {8, 9, "Ada (sm_89)", {4, 0, 256, 256, 1024, 512, 2048}},
    {9, 0, "Hopper (sm_90)", {128, 256, 256, 512, 4096, 2048, 8192}},
    {10, 0, "Blackwell B200 (sm_100)", {128, 128, 256, 512, 8192, 4096, 16384}},
    {12, 0, "Blackwell RTX (sm_120)", {4, 0, 256, 256, 1024, 512, 2048}},
};

const char* const kPrecisionNames[kPrecisionCount] = {"fp64",        "fp64_tensor", "fp32",      "fp16",
                                                      "fp16_tensor", "tf32_tensor", "fp8_tensor"};

// GeForce parts from Turing on run fp16/bf16 and fp8 tensor math with fp32 accumulate (what
// XLA emits) and tf32 at half the rate of the professional parts of the same chip (GA102
// whitepaper: RTX 3090 71 vs RTX A6000 154.8 dense fp16 TFLOP/s at similar SM x clock; Ada
// whitepaper: RTX 4090 82.6 tf32, 330.3 fp8). TITAN and Volta parts are full rate.
bool geforce_half_rate_tensor(const DeviceInfo& device) {
  const bool turing_or_later = device.compute_capability_major > 7 ||
                               (device.compute_capability_major == 7 && device.compute_capability_minor >= 5);
  return turing_or_later && device.name.find("GeForce") != std::string::npos;
}

}  // namespace

const char* precision_name(Precision p) {
  const auto i = static_cast<std::size_t>(p);
  return i < kPrecisionCount ? kPrecisionNames[i] : "unknown";
}

Precision precision_from_name(const std::string& name) {
  for (std::size_t i = 0; i < kPrecisionCount; ++i)
    if (name == kPrecisionNames[i]) return static_cast<Precision>(i);
  throw Error(ErrorKind::kInvalidArgument, "unknown precision '" + name +
                                               "': use fp64, fp64_tensor, fp32, fp16, fp16_tensor, "
                                               "tf32_tensor or fp8_tensor");
}

const char* ceiling_source_name(CeilingSource s) {
  switch (s) {
    case CeilingSource::kTable: return "table";
    case CeilingSource::kMeasured: return "measured";
    case CeilingSource::kUser: return "user";
    default: return "unknown";
  }
}

const ArchitectureRates* architecture_rates(uint32_t cc_major, uint32_t cc_minor, bool* exact) {
  const ArchitectureRates* best = nullptr;
  uint32_t best_distance = 0;
  for (const auto& row : kTable) {
    if (row.cc_major != cc_major) continue;
    const uint32_t d = row.cc_minor > cc_minor ? row.cc_minor - cc_minor : cc_minor - row.cc_minor;
    if (best == nullptr || d < best_distance) {
      best = &row;
      best_distance = d;
    }
  }
  if (exact != nullptr) *exact = best != nullptr && best_distance == 0;
  return best;
}

Precision Ceilings::effective_precision(Precision p) const {
  const auto has = [this](Precision q) { return peak_flops_per_s[static_cast<std::size_t>(q)] > 0; };
  if (has(p)) return p;
  switch (p) {
    case P::kFp64Tensor: return P::kFp64;
    case P::kFp16Tensor: return has(P::kFp16) ? P::kFp16 : P::kFp32;
    case P::kFp8Tensor: return has(P::kFp16Tensor) ? P::kFp16Tensor : P::kFp32;
    case P::kTf32Tensor: return P::kFp32;
    case P::kFp16: return P::kFp32;
    default: return p;
  }
}

double Ceilings::flops_for(Precision p) const {
  return peak_flops_per_s[static_cast<std::size_t>(effective_precision(p))];
}

double Ceilings::ridge_flops_per_byte(Precision p) const {
  const double f = flops_for(p);
  return (f > 0 && dram_bytes_per_s > 0) ? f / dram_bytes_per_s : 0.0;
}

Ceilings table_ceilings(const DeviceInfo& device) {
  Ceilings c;
  c.device_name = device.name;
  bool exact = false;
  const ArchitectureRates* row =
      architecture_rates(device.compute_capability_major, device.compute_capability_minor, &exact);
  if (row != nullptr && device.sm_count > 0 && device.core_clock_khz > 0) {
    c.architecture = row->name;
    c.architecture_exact = exact;
    const double sm_hz = static_cast<double>(device.sm_count) * static_cast<double>(device.core_clock_khz) * 1e3;
    const bool half_rate = geforce_half_rate_tensor(device);
    if (half_rate) c.architecture += ", GeForce (half-rate tensor with fp32 accumulate)";
    for (std::size_t i = 0; i < kPrecisionCount; ++i) {
      const auto p = static_cast<Precision>(i);
      const bool halved = half_rate && (p == P::kFp16Tensor || p == P::kTf32Tensor || p == P::kFp8Tensor);
      c.peak_flops_per_s[i] = row->flops_per_sm_per_cycle[i] * sm_hz * (halved ? 0.5 : 1.0);
      c.flops_source[i] = c.peak_flops_per_s[i] > 0 ? CeilingSource::kTable : CeilingSource::kUnknown;
    }
  }
  c.dram_bytes_per_s = device.peak_dram_bandwidth_bytes_per_s();
  c.dram_source = c.dram_bytes_per_s > 0 ? CeilingSource::kTable : CeilingSource::kUnknown;
  c.link_bytes_per_s = pcie_bytes_per_s(device.pcie_generation, device.pcie_link_width);
  if (c.link_bytes_per_s > 0) {
    c.link_source = CeilingSource::kTable;
    c.link_description =
        "PCIe gen" + std::to_string(device.pcie_generation) + " x" + std::to_string(device.pcie_link_width);
  }
  return c;
}

Precision precision_for(hlo::PrimitiveType type, hlo::AccessPattern pattern) {
  using T = hlo::PrimitiveType;
  const bool tensor = pattern == hlo::AccessPattern::kDot || pattern == hlo::AccessPattern::kConvolution;
  switch (type) {
    case T::kF64:
    case T::kC128: return tensor ? P::kFp64Tensor : P::kFp64;
    case T::kF16:
    case T::kBF16: return tensor ? P::kFp16Tensor : P::kFp16;
    case T::kF8E5M2:
    case T::kF8E4M3FN:
    case T::kF8E4M3B11FNUZ:
    case T::kF8E5M2FNUZ:
    case T::kF8E4M3FNUZ:
    case T::kF8E4M3:
    case T::kF8E3M4:
    case T::kF8E8M0FNU:
    case T::kF4E2M1FN: return tensor ? P::kFp8Tensor : P::kFp16;
    case T::kF32:
    case T::kC64: return tensor ? P::kTf32Tensor : P::kFp32;
    default: return P::kFp32;
  }
}

}  // namespace fpgaprof::analysis

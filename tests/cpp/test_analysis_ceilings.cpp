// Ceilings: per-architecture table x SM count x clock against vendor datasheet figures.
#include <catch2/catch.hpp>

#include "fpgaprof/analysis/ceilings.hpp"
#include "fpgaprof/error.hpp"

using namespace fpgaprof;
using namespace fpgaprof::analysis;

namespace {
DeviceInfo h100_sxm(uint64_t clock_khz) {
  DeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.compute_capability_major = 9;
  d.compute_capability_minor = 0;
  d.sm_count = 132;
  d.core_clock_khz = clock_khz;
  d.memory_clock_khz = 2619000;  // HBM3, as the driver reports it for H100 SXM
  d.memory_bus_width_bits = 5120;
  d.pcie_generation = 5;
  d.pcie_link_width = 16;
  return d;
}
double flops(const Ceilings& c, Precision p) { return c.peak_flops_per_s[static_cast<std::size_t>(p)]; }
}  // namespace

TEST_CASE("H100 SXM table ceilings reproduce the datasheet", "[analysis][ceilings]") {
  const Ceilings c = table_ceilings(h100_sxm(1980000));
  CHECK(c.architecture == "Hopper (sm_90)");
  CHECK(c.architecture_exact);
  // FP64 tensor: 132 SMs x 256 FLOP/clk x 1.98e9 = 66.90e12; datasheet (H100 SXM): 67 TFLOP/s.
  CHECK(flops(c, Precision::kFp64Tensor) == Approx(66.90e12).epsilon(1e-3));
  CHECK(flops(c, Precision::kFp64Tensor) == Approx(67e12).epsilon(0.01));
  // FP64: 132 x 128 x 1.98e9 = 33.45e12; datasheet: 34 TFLOP/s (1.6 % apart: rounding in the sheet).
  CHECK(flops(c, Precision::kFp64) == Approx(34e12).epsilon(0.02));
  // FP32: 132 x 256 x 1.98e9 = 66.90e12; datasheet: 67 TFLOP/s.
  CHECK(flops(c, Precision::kFp32) == Approx(67e12).epsilon(0.01));
  // FP16 tensor dense: 132 x 4096 x 1.98e9 = 1070.5e12, 8.2 % above the datasheet's 989.4:
  // the sheet's tensor figures imply 1830 MHz (989.4e12 / (132 x 4096) = 1.830e9), see below.
  CHECK(flops(c, Precision::kFp16Tensor) == Approx(1070.5e12).epsilon(1e-3));
  // DRAM: 2 x 2619e6 x 5120 / 8 = 3.352e12 B/s; datasheet: 3.35 TB/s.
  CHECK(c.dram_bytes_per_s == Approx(3.35e12).epsilon(0.01));
  // PCIe gen5 x16: 32e9 x 128/130 / 8 x 16 = 63.02e9 B/s per direction.
  CHECK(c.link_bytes_per_s == Approx(63.015e9).epsilon(1e-4));
  CHECK(c.link_description == "PCIe gen5 x16");
  // Ridge for fp32: 66.90e12 / 3.352e12 = 19.96 FLOP/B.
  CHECK(c.ridge_flops_per_byte(Precision::kFp32) == Approx(19.96).epsilon(1e-3));
}

TEST_CASE("H100 SXM tensor ceilings at the datasheet's tensor clock", "[analysis][ceilings]") {
  const Ceilings c = table_ceilings(h100_sxm(1830000));
  // Datasheet (dense = half the sparsity figures): TF32 494.7, FP16/BF16 989.4, FP8 1978.9 TFLOP/s.
  CHECK(flops(c, Precision::kTf32Tensor) == Approx(494.7e12).epsilon(0.005));
  CHECK(flops(c, Precision::kFp16Tensor) == Approx(989.4e12).epsilon(0.005));
  CHECK(flops(c, Precision::kFp8Tensor) == Approx(1978.9e12).epsilon(0.005));
}

TEST_CASE("A100 SXM and V100 table ceilings", "[analysis][ceilings]") {
  DeviceInfo a100;
  a100.compute_capability_major = 8;
  a100.sm_count = 108;
  a100.core_clock_khz = 1410000;
  a100.memory_clock_khz = 1215000;
  a100.memory_bus_width_bits = 5120;
  const Ceilings c = table_ceilings(a100);
  // 108 x 2048 x 1.41e9 = 311.9e12 (datasheet 312); 108 x 128 x 1.41e9 = 19.49e12 (19.5 FP64 tensor);
  // 108 x 1024 x 1.41e9 = 155.9e12 (156 TF32); 2 x 1215e6 x 640 = 1.555e12 B/s (1555 GB/s, 40 GB part).
  CHECK(flops(c, Precision::kFp16Tensor) == Approx(312e12).epsilon(0.005));
  CHECK(flops(c, Precision::kFp64Tensor) == Approx(19.5e12).epsilon(0.005));
  CHECK(flops(c, Precision::kTf32Tensor) == Approx(156e12).epsilon(0.005));
  CHECK(c.dram_bytes_per_s == Approx(1.555e12).epsilon(0.001));
  CHECK(c.link_bytes_per_s == 0.0);  // PCIe unknown
  CHECK(c.link_source == CeilingSource::kUnknown);

  DeviceInfo v100;
  v100.compute_capability_major = 7;
  v100.sm_count = 80;
  v100.core_clock_khz = 1530000;
  const Ceilings v = table_ceilings(v100);
  // 80 x 1024 x 1.53e9 = 125.3e12 (datasheet 125 TF tensor); 80 x 64 x 1.53e9 = 7.83e12 (7.8 FP64).
  CHECK(flops(v, Precision::kFp16Tensor) == Approx(125e12).epsilon(0.005));
  CHECK(flops(v, Precision::kFp64) == Approx(7.8e12).epsilon(0.005));
  // No FP64 tensor pipe on Volta: the fp64 pipe is the roof.
  CHECK(flops(v, Precision::kFp64Tensor) == 0.0);
  CHECK(v.flops_for(Precision::kFp64Tensor) == flops(v, Precision::kFp64));
  CHECK(v.effective_precision(Precision::kTf32Tensor) == Precision::kFp32);
}

TEST_CASE("GeForce parts run tensor math with fp32 accumulate at half rate", "[analysis][ceilings]") {
  DeviceInfo d;
  d.name = "NVIDIA GeForce RTX 3090";
  d.compute_capability_major = 8;
  d.compute_capability_minor = 6;
  d.sm_count = 82;
  d.core_clock_khz = 1695000;
  const Ceilings g = table_ceilings(d);
  // GA102 whitepaper, RTX 3090: tf32 dense 35.6 TFLOP/s = 82 x 256 x 1.695e9 = 35.58e12;
  // fp16 tensor with fp32 accumulate 71 = 82 x 512 x 1.695e9 = 71.16e12; fp32 unchanged:
  // 82 x 256 x 1.695e9 = 35.58e12 (sheet 35.6).
  CHECK(flops(g, Precision::kTf32Tensor) == Approx(35.6e12).epsilon(0.002));
  CHECK(flops(g, Precision::kFp16Tensor) == Approx(71.16e12).epsilon(0.002));
  CHECK(flops(g, Precision::kFp32) == Approx(35.6e12).epsilon(0.002));
  CHECK(g.architecture.find("GeForce") != std::string::npos);

  d.name = "NVIDIA RTX A6000";  // same chip, professional part: full rate
  d.sm_count = 84;
  d.core_clock_khz = 1800000;
  const Ceilings a = table_ceilings(d);
  // A6000 datasheet: tf32 154.8 with sparsity -> 77.4 dense = 84 x 512 x 1.8e9.
  CHECK(flops(a, Precision::kTf32Tensor) == Approx(77.4e12).epsilon(0.002));
  CHECK(a.architecture == "Ampere GA10x (sm_86)");

  DeviceInfo ada;
  ada.name = "NVIDIA GeForce RTX 4090";
  ada.compute_capability_major = 8;
  ada.compute_capability_minor = 9;
  ada.sm_count = 128;
  ada.core_clock_khz = 2520000;
  const Ceilings r = table_ceilings(ada);
  // Ada whitepaper, RTX 4090: tf32 82.6, fp8 with fp32 accumulate 330.3 (dense).
  CHECK(flops(r, Precision::kTf32Tensor) == Approx(82.6e12).epsilon(0.002));
  CHECK(flops(r, Precision::kFp8Tensor) == Approx(330.3e12).epsilon(0.002));
  CHECK(flops(r, Precision::kFp64) == Approx(128 * 4 * 2.52e9));  // not a tensor pipe: unchanged
}

TEST_CASE("Unknown architecture and nearest minor", "[analysis][ceilings]") {
  DeviceInfo d;
  d.compute_capability_major = 3;
  d.sm_count = 10;
  d.core_clock_khz = 1000000;
  const Ceilings c = table_ceilings(d);
  CHECK(c.architecture.empty());
  CHECK(flops(c, Precision::kFp32) == 0.0);
  CHECK(c.ridge_flops_per_byte(Precision::kFp32) == 0.0);
  bool exact = true;
  const ArchitectureRates* r = architecture_rates(8, 7, &exact);  // Orin: nearest listed is sm_86
  REQUIRE(r != nullptr);
  CHECK(r->cc_minor == 6);
  CHECK_FALSE(exact);
}

TEST_CASE("PCIe per-lane rates", "[analysis][ceilings]") {
  CHECK(pcie_bytes_per_s(3, 16) == Approx(15.754e9).epsilon(1e-4));  // 8 GT/s x 128/130 / 8 x 16
  CHECK(pcie_bytes_per_s(1, 1) == Approx(250e6));
  CHECK(pcie_bytes_per_s(4, 8) == Approx(15.754e9).epsilon(1e-4));
  CHECK(pcie_bytes_per_s(0, 16) == 0.0);
  CHECK(pcie_bytes_per_s(9, 16) == 0.0);
}

TEST_CASE("Precision of HLO types and names", "[analysis][ceilings]") {
  using T = hlo::PrimitiveType;
  using A = hlo::AccessPattern;
  CHECK(precision_for(T::kF32, A::kDot) == Precision::kTf32Tensor);
  CHECK(precision_for(T::kF32, A::kElementwise) == Precision::kFp32);
  CHECK(precision_for(T::kBF16, A::kConvolution) == Precision::kFp16Tensor);
  CHECK(precision_for(T::kF64, A::kDot) == Precision::kFp64Tensor);
  CHECK(precision_for(T::kS32, A::kReduction) == Precision::kFp32);
  CHECK(std::string(precision_name(Precision::kFp8Tensor)) == "fp8_tensor");
  CHECK(precision_from_name("tf32_tensor") == Precision::kTf32Tensor);
  CHECK_THROWS_AS(precision_from_name("fp7"), Error);
}

namespace {
// A Blackwell RTX (sm_120) board as the driver describes it. GDDR7 memory clock as the driver
// reports it: half the per-pin data rate (28 Gbps -> 14001 MHz, the clocks.max.memory that
// nvidia-smi shows on an RTX PRO 6000 Blackwell Workstation Edition; 30 Gbps -> 15001 MHz).
DeviceInfo sm120(const char* name, uint32_t sms, uint64_t clock_khz, uint64_t mem_khz, uint32_t bus_bits) {
  DeviceInfo d;
  d.name = name;
  d.compute_capability_major = 12;
  d.compute_capability_minor = 0;
  d.sm_count = sms;
  d.core_clock_khz = clock_khz;
  d.memory_clock_khz = mem_khz;
  d.memory_bus_width_bits = bus_bits;
  d.pcie_generation = 5;
  d.pcie_link_width = 16;
  return d;
}
}  // namespace

// NVIDIA's figures (docs/roofline.md, "Ceilings", cites each): FP32 TFLOPS, "AI TOPS" (FP4
// tensor with sparsity: 8x the dense FP16-with-FP16-accumulate rate), memory bandwidth. The
// dense tensor rates XLA's dots run at on GeForce (FP32 accumulate) are half of that rate.
TEST_CASE("GeForce RTX 5080 (GB203) ceilings reproduce NVIDIA's figures", "[analysis][ceilings]") {
  // 10,752 CUDA cores = 84 SMs, boost 2617 MHz, 16 GB GDDR7 on 256 bit at 30 Gbps.
  const Ceilings c = table_ceilings(sm120("NVIDIA GeForce RTX 5080", 84, 2617000, 15001000, 256));
  CHECK(c.architecture == "Blackwell RTX (sm_120), GeForce (half-rate tensor with fp32 accumulate)");
  CHECK(c.architecture_exact);
  CHECK(flops(c, Precision::kFp32) == Approx(56.3e12).epsilon(0.002));  // NVIDIA: 56.3 TFLOPS
  // AI TOPS 1801 (FP4, sparse) / 8 = 225.1 dense FP16 (FP16 accumulate); FP32 accumulate: half.
  CHECK(flops(c, Precision::kFp16Tensor) == Approx(1801e12 / 8 / 2).epsilon(0.002));
  CHECK(flops(c, Precision::kFp8Tensor) == Approx(1801e12 / 4 / 2).epsilon(0.002));
  CHECK(flops(c, Precision::kTf32Tensor) == Approx(1801e12 / 16 / 2).epsilon(0.002));
  CHECK(flops(c, Precision::kFp64) == Approx(56.3e12 / 64).epsilon(0.002));  // 1/64 of FP32
  CHECK(flops(c, Precision::kFp64Tensor) == 0.0);
  CHECK(c.flops_for(Precision::kFp64Tensor) == flops(c, Precision::kFp64));
  CHECK(c.dram_bytes_per_s == Approx(960e9).epsilon(0.001));  // NVIDIA: 960 GB/s
  CHECK(c.link_description == "PCIe gen5 x16");
}

TEST_CASE("GeForce RTX 5090 (GB202) ceilings reproduce NVIDIA's figures", "[analysis][ceilings]") {
  // 21,760 CUDA cores = 170 SMs, boost 2407 MHz, 32 GB GDDR7 on 512 bit at 28 Gbps.
  const Ceilings c = table_ceilings(sm120("NVIDIA GeForce RTX 5090", 170, 2407000, 14001000, 512));
  CHECK(flops(c, Precision::kFp32) == Approx(104.8e12).epsilon(0.002));  // NVIDIA: 104.8 TFLOPS
  // AI TOPS 3352 / 8 = 419 dense FP16 (FP16 accumulate); 209.5 with FP32 accumulate.
  CHECK(flops(c, Precision::kFp16Tensor) == Approx(209.5e12).epsilon(0.002));
  CHECK(flops(c, Precision::kFp16Tensor) == Approx(3352e12 / 16).epsilon(0.002));
  CHECK(flops(c, Precision::kFp8Tensor) == Approx(3352e12 / 8).epsilon(0.002));
  CHECK(flops(c, Precision::kTf32Tensor) == Approx(104.8e12).epsilon(0.002));
  CHECK(flops(c, Precision::kFp64) == Approx(1.637e12).epsilon(0.002));
  CHECK(c.dram_bytes_per_s == Approx(1792e9).epsilon(0.001));  // NVIDIA: 1792 GB/s
  // Ridge of f32 dots (tf32 tensor) vs fp32 vector: both 104.8e12 / 1.792e12 = 58.5 FLOP/B.
  CHECK(c.ridge_flops_per_byte(Precision::kTf32Tensor) == Approx(58.5).epsilon(0.002));
}

TEST_CASE("RTX PRO 6000 Blackwell (GB202, professional) runs tensor math at full rate", "[analysis][ceilings]") {
  // 24,064 CUDA cores = 188 SMs, boost 2617 MHz, 96 GB GDDR7 ECC on 512 bit at 28 Gbps.
  const Ceilings c =
      table_ceilings(sm120("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 188, 2617000, 14001000, 512));
  CHECK(c.architecture == "Blackwell RTX (sm_120)");  // not a GeForce: no halving
  // NVIDIA: "125 TFLOPS" single precision; 188 x 256 x 2.617e9 = 125.95e12.
  CHECK(flops(c, Precision::kFp32) == Approx(125e12).epsilon(0.01));
  // NVIDIA: "4000 AI TOPS" (FP4, sparse); 188 x 1024 x 2.617e9 x 8 = 4030e12, so 503.8 dense FP16
  // with either accumulate, 1007.6 FP8, 251.9 TF32.
  CHECK(flops(c, Precision::kFp16Tensor) * 8 == Approx(4000e12).epsilon(0.01));
  CHECK(flops(c, Precision::kFp16Tensor) == Approx(503.8e12).epsilon(0.001));
  CHECK(flops(c, Precision::kFp8Tensor) == Approx(1007.6e12).epsilon(0.001));
  CHECK(flops(c, Precision::kTf32Tensor) == Approx(251.9e12).epsilon(0.001));
  CHECK(flops(c, Precision::kFp64) == Approx(125.95e12 / 64).epsilon(0.001));
  CHECK(c.dram_bytes_per_s == Approx(1792e9).epsilon(0.001));  // NVIDIA: 1792 GB/s
  CHECK(c.link_bytes_per_s == Approx(63.015e9).epsilon(1e-4));
}

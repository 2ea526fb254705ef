// FPGA offload model: what an HLO op (CardWork, card_work.hpp) would take on one FPGA card, with
// a range from the spread of the published measurements every constant comes from, in two
// scenarios (as XLA compiled it; restructured to compulsory traffic with on-chip reuse); and,
// over a trace, a ranking of ops and regions by a documented score with the host-link cost and
// the end-to-end speedup (Amdahl). One estimator (estimate_op_on_card) serves the trace
// rankings and the static estimate of a module (estimate_module). Formulas, constants with
// their sources and worked cases: docs/fpga-model.md; validation against measured FPGA
// results: docs/fpga-validation.md. Pure functions; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "fpgaprof/analysis/card_work.hpp"
#include "fpgaprof/analysis/ceilings.hpp"
#include "fpgaprof/analysis/energy_analysis.hpp"
#include "fpgaprof/analysis/region_paths.hpp"
#include "fpgaprof/analysis/roofline.hpp"
#include "fpgaprof/hlo/hlo_module.hpp"

namespace fpgaprof::analysis {

// A measured quantity: the value the model uses and the ends of the spread of the published
// measurements behind it (same unit; low <= nominal <= high). A value the user gives is exact
// (all three equal) unless the user gives its ends too.
struct Calibrated {
  double nominal = 0, low = 0, high = 0;
  static Calibrated exact(double v) { return {v, v, v}; }
};

// Seconds with their range: `low` with every constant at the fast end of its spread, `high` at
// the slow end (times are monotone in each constant, so these bound the spread).
struct TimeRange {
  double low = 0, nominal = 0, high = 0;
  TimeRange& operator+=(const TimeRange& o) {
    low += o.low;
    nominal += o.nominal;
    high += o.high;
    return *this;
  }
  TimeRange scaled(double k) const { return {low * k, nominal * k, high * k}; }
};

// Joules with their range: `low` = the time's low end x the power's low end, `high` = high x
// high (energy is monotone in both, so these bound the spread). All NaN: not estimated, or the
// card's power is unknown.
struct EnergyRange {
  double low = 0, nominal = 0, high = 0;
};

// One FPGA card: its memory (type, channels, per-channel peak), on-chip RAM, DSPs, host link,
// and the calibrated design-level quantities (defaults from the memory type's and the fabric's
// measured tables: calibration_for()). A default-constructed target is not valid: start from
// a preset or fill the card's figures; validate_fpga_target states the rules.
struct FpgaTarget {
  std::string name;  // "alveo-u55c"
  std::string description;
  std::string memory_type = "hbm2";       // "hbm2" (UltraScale+ HBM), "hbm2e" (Versal HBM), "ddr4"
  uint32_t memory_channels = 0;           // HBM pseudo-channels, or DDR channels (banks)
  double memory_channel_bytes_per_s = 0;  // peak of one channel
  double memory_capacity_bytes = 0;       // whole card memory (a channel holds capacity / channels)
  double sram_bytes = 0;                  // on-chip BRAM + URAM
  uint32_t dsp_count = 0;
  double dsps_per_fma_fp64 = 0;  // DSP slices one pipelined FMA of that type needs
  double dsps_per_fma_fp32 = 0;
  double dsps_per_fma_fp16 = 0;
  // Sustained FLOP/s per precision when known (an HLS report, a measurement): > 0 replaces the
  // DSP estimate of that precision, exactly (no range).
  double fp64_flops_per_s = 0;
  double fp32_flops_per_s = 0;
  double fp16_flops_per_s = 0;
  double link_bytes_per_s = 0;       // host link line rate, one direction
  double random_granule_bytes = 32;  // smallest memory access: HBM BL4 x 64 bit, DDR4 BL8 x 64 bit
  // Calibrated: nominal and the spread of the measurements (docs/fpga-model.md, "Constants").
  Calibrated clock_hz;              // kernel clock of a large design
  Calibrated dsp_utilization;       // share of the DSPs a compute-heavy design uses
  Calibrated stream_efficiency;     // share of a used channel's peak a streaming kernel reaches
  Calibrated channel_share;         // share of the card's channels a design drives
  Calibrated random_reads_per_s;    // data-dependent read accesses per second, per channel
  Calibrated rmw_updates_per_s;     // data-dependent read-modify-write updates per second, per channel
  Calibrated cross_channel_factor;  // random reads into an array larger than one channel
  Calibrated onchip_share;          // share of the on-chip RAM one array may occupy
  Calibrated onchip_lanes;          // data-dependent on-chip accesses per cycle of a banked design
  Calibrated sort_bytes_per_s;      // sorted bytes per second of a sort kernel
  Calibrated link_efficiency;       // achieved DMA bandwidth / link line rate
  Calibrated transfer_latency_s;    // per buffer moved over the host link
  Calibrated call_latency_s;        // per kernel launch
  // Board power while a design runs, in watts: card energy = card time x this (card_power.hpp).
  // A preset's is its card_power_presets() entry; all 0: unknown (card energy is then null).
  Calibrated loaded_w;

  double memory_bytes_per_s() const { return static_cast<double>(memory_channels) * memory_channel_bytes_per_s; }
  // Peak FLOP/s the card sustains for `p` at a clock and DSP utilization (tensor precisions
  // map to their element type: fp64_tensor -> fp64, tf32 -> fp32, fp16/fp8 -> fp16): the given
  // <type>_flops_per_s when > 0, else dsp_count x utilization / dsps_per_fma x 2 x clock.
  // 0 if unsupported.
  double flops_per_s(Precision p, double clock, double utilization) const;
  double flops_per_s(Precision p) const { return flops_per_s(p, clock_hz.nominal, dsp_utilization.nominal); }
  // True when some precision takes its rate from the DSP fields (no FLOP/s given for it).
  bool uses_dsp_model() const;
  // Streaming bandwidth of a design at the nominal constants: the channels it drives
  // (channel_share), each at the streaming efficiency.
  double stream_bytes_per_s() const;
};

// The calibrated defaults of a memory type ("hbm2", "hbm2e", "ddr4") and of the fabric (clock,
// DSP use, on-chip share, sort, host link, launch): every field of FpgaTarget that is
// Calibrated, plus random_granule_bytes. Throws Error(kInvalidArgument) for another type.
FpgaTarget calibration_for(const std::string& memory_type);

// Presets: "alveo-u55c", "alveo-u280", "alveo-u250", "alveo-u200", "versal-v80".
const std::vector<FpgaTarget>& fpga_presets();
// Throws Error(kInvalidArgument) naming the presets when `name` is unknown.
const FpgaTarget& fpga_preset(const std::string& name);
// The presets' names, comma-separated.
std::string fpga_preset_names();

// Throws Error(kInvalidArgument) naming the first bad field and the fix when `t` cannot be
// modelled: a name; a known memory_type; memory_channels >= 1; memory_channel_bytes_per_s,
// memory_capacity_bytes, sram_bytes, link_bytes_per_s positive and finite (and of plausible
// magnitude: a value in the wrong unit is refused); every Calibrated field with
// low <= nominal <= high, positive, shares in (0, 1]; dsps_per_fma_* and *_flops_per_s >= 0 with
// at least one precision that has a rate; dsp_count, clock and utilization when the DSP model
// is used; latencies >= 0 and under 1 s.
void validate_fpga_target(const FpgaTarget& t);

// ---- a card from named fields (a card file, a dict): docs/fpga-model.md, "Your own card" -------

// One field of a card, as a card file or dict names it. card_fields() is the one table of them:
// it drives card_from_fields (which names it accepts, its defaults), validate_fpga_target (each
// field's rule and its unit check), card_to_fields (a card as a table) and the docs' field list
// (card_fields_markdown).
enum class CardFieldKind : uint8_t {
  kText,        // a string (name, description, memory_type)
  kWhole,       // a whole number >= 1 that fits uint32 (memory_channels, dsp_count)
  kNumber,      // a double
  kCalibrated,  // a Calibrated: <name>, <name>_low, <name>_high
  kDerived,     // worked out from the others: an output, ignored when given back (except
                // memory_bytes_per_s without memory_channel_bytes_per_s: all channels' peak)
};
enum class CardRule : uint8_t {
  kNone,
  kPositive,       // finite and > 0 (0: missing)
  kNonNegative,    // finite and >= 0
  kShare,          // in (0, 1]
  kKnownPositive,  // a Calibrated that is all 0 (unknown) or positive at each end
};
enum class CardEnd : uint8_t { kNominal, kLow, kHigh };
struct CardField {
  const char* name;
  CardFieldKind kind;
  const char* unit;
  const char* default_value;  // in words: "required", "0", "calibrated (memory type)", ...
  const char* valid;          // the valid range in words
  const char* description;
  // Where it lives in FpgaTarget (one of them, by kind; none for kDerived).
  std::string FpgaTarget::*text = nullptr;
  uint32_t FpgaTarget::*whole = nullptr;
  double FpgaTarget::*number = nullptr;
  Calibrated FpgaTarget::*calibrated = nullptr;
  // kDerived: its value (nominal, and the ends when `derived_range`).
  Calibrated (*derive)(const FpgaTarget&) = nullptr;
  bool derived_range = false;
  // validate_fpga_target: the rule, the words after "must" when it fails, whether it applies
  // only when the DSP model is used, and the order of the checks (-1: none).
  CardRule rule = CardRule::kNone;
  const char* rule_text = "";
  bool dsp_model_only = false;
  int check_order = -1;
  // The unit check (a value in the wrong unit is off by 1e3..1e9): the end it reads, the
  // plausible bounds (0 at `unit_min` allowed when `zero_ok`), the hint, and its order (-1: none).
  CardEnd unit_end = CardEnd::kNominal;
  double unit_min = 0, unit_max = 0;
  bool zero_ok = false;
  const char* unit_hint = "";
  int unit_order = -1;
};
const std::vector<CardField>& card_fields();
// The names a card takes, in card_fields() order: "base", each field that is not derived (a
// calibrated one with its _low and _high), memory_bytes_per_s (all channels' bandwidth) after
// memory_channels, then the earlier names still read (hbm_bytes_per_s, hbm_efficiency).
std::vector<std::string> card_input_names();
// "text", "whole", "number", "calibrated" or "derived".
const char* card_field_kind_name(CardFieldKind k);

// One value of a card field as the caller got it, with what its messages quote.
struct CardValue {
  enum class Kind : uint8_t {
    kText,      // `text`
    kNumber,    // `number`; `shown`: the value as written (repr, JSON token)
    kTooLarge,  // a number beyond a double (10**400, a 401-digit literal); `shown` as written
    kOther,     // anything else
  };
  // Otherwise (kText, kOther) `shown` is the value's type as Python names it ("str", "bool",
  // "list", "dict"): "must be a number, not <shown>".
  Kind kind = Kind::kOther;
  std::string text;
  double number = 0;
  std::string shown;
};
using CardFields = std::vector<std::pair<std::string, CardValue>>;

// A card from named fields in the given order (docs/fpga-model.md, "Your own card"): `base` (a
// preset whose values are the defaults; the name becomes "<preset> (modified)" and the
// description gains "(modified: <fields>)" unless given), `memory_type` (the calibration of a
// card without a base), every card_fields() input, `<field>_low` / `<field>_high` of a calibrated
// field (given alone, a calibrated field is exact), `memory_bytes_per_s` (all channels together),
// the earlier names `hbm_bytes_per_s` and `hbm_efficiency`; derived fields are ignored (a card
// table goes back in unchanged). Validated. Throws Error(kInvalidArgument), one line naming the
// field and the fix, on an unknown field, a value of the wrong type, a number beyond a double,
// a whole number out of range, and whatever validate_fpga_target rejects.
FpgaTarget card_from_fields(const CardFields& fields);

// The same from the text of a card file: one JSON object. Throws Error(kInvalidArgument) when
// the text is not a JSON object, then as card_from_fields.
FpgaTarget card_from_json(const std::string& json_text);

// A card as a table, in card_fields() order: every field, a calibrated one as <name>, <name>_low,
// <name>_high, the derived ones last. It goes back into card_from_fields unchanged.
struct CardOutput {
  std::string name;
  CardFieldKind kind = CardFieldKind::kNumber;  // kText, kWhole, or kNumber (every other kind)
  std::string text;
  uint32_t whole = 0;
  double number = 0;
};
std::vector<CardOutput> card_to_fields(const FpgaTarget& t);

// card_fields() as the Markdown table docs/fpga-model.md shows ("Card fields").
std::string card_fields_markdown();

enum class Scenario : uint8_t {
  kAsCompiled,    // the HLO's own access pattern against card memory
  kRestructured,  // compulsory traffic only (each input once, each output once) at streaming
                  // efficiency, data-dependent accesses served on chip where their array fits
};
const char* scenario_name(Scenario s);

// One execution of one op on the card.
struct OpCardEstimate {
  bool estimated = false;        // false: cost unknown, or a precision the card lacks
  TimeRange compute_s;           // FLOPs at the card's rate (a sort: its sort rate)
  TimeRange memory_s;            // streamed + data-dependent traffic (or on-chip accesses)
  TimeRange time_s;              // max(compute, memory): the op's time, launch excluded
  double memory_bytes = 0;       // bytes the card moves in this scenario
  double memory_efficiency = 0;  // memory_bytes / (memory_s.nominal x card memory peak)
  std::string limit;             // "compute", "memory", "random access", "sort", "on-chip access"
  bool onchip = false;           // restructured: its data-dependent accesses are served on chip
  // restructured on chip as a gather + scatter (an SpMV-like design) whose output is tiled or
  // whose density is at most 1e-4: the matrix's structure (row imbalance, column spread), not
  // visible in the shapes, decides the figure (docs/fpga-model.md)
  bool structure_dependent = false;
  std::string note;  // why not estimated, or what the estimate assumes
};

// The card time of one execution of `work` (precision `p`) in `scenario`. The restructured time
// is never above the as-compiled one (a designer can keep what XLA did). `row_imbalance`: the
// user's HiSpMV imbalance ratio delta (FPGA '24, Eq. 2: the nonzeros of the most loaded of P PEs,
// rows dealt cyclically, over NNZ / P) of the matrix behind a restructured gather + scatter;
// 0: not known (docs/fpga-model.md, "Row imbalance").
OpCardEstimate estimate_op_on_card(const CardWork& work, Precision p, const FpgaTarget& t, Scenario scenario,
                                   double row_imbalance = 0);
// Throws Error(kInvalidArgument) unless `row_imbalance` is 0 (not known) or a finite ratio >= 1.
void validate_row_imbalance(double row_imbalance);

// One stage of a dataflow design: an op's work (not owned), its precision, how often it runs,
// and how many of those runs repeat it inside one invocation of the design (a loop body: its
// result goes to its next repetition).
struct DataflowStage {
  const CardWork* work = nullptr;
  Precision precision = Precision::kFp32;
  double executions = 1;
  double repeats = 0;
};

// The slow end of a restructured figure whose time the matrix's structure decides (a gather
// paired with a scatter at a density of at most 1e-4 or over a tiled output: row imbalance and
// column spread, which the shapes do not show) is the design whose tiles find no reuse, each
// gather and update a random access to card memory: the as-compiled slow end. Applied where a
// function's and a region's restructured figures are formed (an op's estimate takes its
// as-compiled slow end directly, in op_parts). docs/fpga-model.md, "When the structure decides".
void widen_for_structure(TimeRange& restructured, const TimeRange& as_compiled);

// The restructured time of `stages` built as one dataflow pipeline: `io` (the design's
// inputs read once and results written once, and its re-reads) streamed; intermediates streamed between stages on
// chip (in the order produced; a sort's or FFT's extra passes, and a repeated stage's state that
// does not fit on chip, through card memory); data-dependent accesses served from
// on-chip banks when every array they land in fits on chip together (each array once:
// RandomTraffic::source_id), else at the card
// memory's random rates; the stages' arithmetic sharing the DSPs. The pipeline takes the
// longest of compute, sort, memory and on-chip access. `onchip` (optional) says whether the
// nominal design serves its data-dependent accesses on chip; `structure_dependent` (optional)
// whether it is a gather + scatter whose figure the matrix's structure decides
// (OpCardEstimate::structure_dependent). docs/fpga-model.md, "Restructured".
// What a dataflow design moves through card memory besides its stages' traffic: `bytes` (its
// inputs read once and results written once) and, `reread_times` times, each of `rereads` (an
// argument an op needs again after an op summarized all of it, x / sum(x)) that is larger than
// the on-chip room at the range end at hand (onchip_share x sram_bytes): a design with room for
// it keeps it on chip. A plain number is io without re-reads.
struct DataflowIo {
  DataflowIo(double io_bytes = 0) : bytes(io_bytes) {}  // NOLINT(google-explicit-constructor)
  double bytes = 0;
  const std::vector<double>* rereads = nullptr;
  double reread_times = 1;
};
TimeRange dataflow_time(const std::vector<DataflowStage>& stages, const DataflowIo& io, const FpgaTarget& t,
                        bool* onchip = nullptr, bool* structure_dependent = nullptr, double row_imbalance = 0);
// The note an estimate carries when its restructured design is structure-dependent, without and
// with the user's row imbalance.
extern const char* const kStructureDependentNote;
extern const char* const kRowImbalanceNote;
// The same in a region row's estimate_note (shorter: the row says it beside its figures).
extern const char* const kStructureWidenedNote;

// Moving `bytes` over the host link in `buffers` separate transfers.
TimeRange link_time(double bytes, double buffers, const FpgaTarget& t, double gpu_link_bytes_per_s = 0);

struct FpgaOptions {
  // true: each execution's inputs and outputs cross the host link (the rest of the program
  // stays on the GPU); false: data already lives on the card.
  bool inputs_cross_link = true;
  double gpu_link_bytes_per_s = 0;  // the GPU's host link (one direction), 0 unknown
  double workload_ns = 0;           // end-to-end time of the traced workload; 0: trace span
  double min_time_share = 0.0;      // drop ops below this share of GPU time from the table
  // rank_fpga_regions: the store's region paths when the caller already has them (not owned;
  // must be built from the same store); nullptr: built there.
  const RegionPaths* region_paths = nullptr;
  // The trace's GPU energy (analyze_energy of the same store, with the same region paths and op
  // indices; not owned): the GPU joules each candidate is compared with. nullptr, or a report
  // without samples: every candidate's GPU energy is unknown (null), never 0.
  const EnergyReport* energy = nullptr;
  // The user's row imbalance ratio (HiSpMV's delta) for every restructured scatter served on
  // chip, as estimate_module takes it (validate_row_imbalance); 0: not known.
  double row_imbalance = 0;
};

// The offload verdict of an op or region from its nominal speedups: "as compiled" (it gains
// as XLA compiled it), "restructured only" (only a restructured design gains), "neither", or
// "" when not estimated.
std::string offload_scenario(double speedup, double restructured_speedup);

// The answer in words, from a row's scenario: "gains" (as compiled), "only restructured",
// "no" (neither), "unknown: bound only" (a bound that decides nothing: `bound` true and
// scenario ""), "unknown: not estimated" (nothing to bound it by).
std::string offload_verdict(const std::string& scenario, bool bound);

// The verdict of one scenario in time and energy together (docs/fpga-model.md, "Energy verdict"),
// from its speedup range and its energy ratio range (card joules / GPU joules), decided in this
// order:
//   "unknown: not estimated"  `estimated` false, or a speedup end that is not a number;
//   "unknown: no GPU energy"  `gpu_energy_known` false (no NVML samples, or none cover it);
//   "unknown: no card energy" a ratio end that is not a number (the card's power is unknown);
//   "gains"                   faster across its speedup range (speedup_low > 1);
//   "wins only on energy"     not faster across it, but less energy across the ratio range
//                             (ratio_high < 1);
//   "loses"                   no faster anywhere in its range (speedup_high <= 1) and no less
//                             energy anywhere in it (ratio_low >= 1);
//   "uncertain"               otherwise: a range straddles 1 and nothing is won across it.
// (An op in a precision the card lacks is "loses" in the op ranking: the card cannot run it.)
std::string time_energy_verdict(bool estimated, double speedup_low, double speedup_high, bool gpu_energy_known,
                                double ratio_low, double ratio_high);

// The most GPU time offloading could save, in ns: `gpu_ns` less the fastest card total either
// scenario reaches (the fast ends of their ranges: gpu_ns / the speedups' upper ends), 0 when
// neither beats the GPU even there, all of `gpu_ns` when there is nothing to bound the card
// time by (both NaN). The ranking key of ops and regions (docs/fpga-model.md, "Ranking").
double could_save_ns(double gpu_ns, double speedup_high, double restructured_speedup_high);

// One candidate with every input of its score and every intermediate of its what-if.
// Candidates are ranked by what offloading could change (`could_save_ns`, then GPU time, then
// score). Ops whose static cost is unknown (OpCost::cost_known false: a custom call without a
// cost rule, or HLO that was not captured) get no estimate and no score (NaN), take their place
// by what their bound leaves possible (all of their GPU time without a bound) and stay out of
// the combined speedups. Where the trace still bounds them, their card times are
// lower bounds and their speedups upper bounds (`estimate_basis`):
//   "measured bound": hardware counters measured the op's FLOPs and DRAM bytes on the GPU (over
//     `measured_coverage` of its time, scaled to all of it); a card as compiled, without the
//     GPU's caches, moves at least those bytes, streamed at its best (its access pattern is
//     unknown); restructured, at least its operands and results once.
//   "operand bound": its operands and results alone (FLOPs unknown), streamed once.
// Otherwise (no bytes known either) every field derived from FLOPs or bytes is NaN.
struct FpgaCandidate {
  uint32_t op_index = 0;
  std::string name;
  std::string module;
  hlo::AccessPattern pattern = hlo::AccessPattern::kUnknown;
  Precision precision = Precision::kFp32;
  uint64_t executions = 0;
  uint64_t kernel_count = 0;
  // The executions the card figures are for: all of them, or, when a counter replay left some
  // of its kernels without timestamps (the GPU time covers the timed ones only), executions x
  // timed kernels / kernels, so that the card and the GPU are compared on the same runs.
  double costed_executions = 0;
  bool cost_known = true;  // OpCost::cost_known
  // What the what-if rests on: "static" (the cost model's rule for the HLO op), "author" (a
  // custom kernel's own figures), "measured bound" / "operand bound" (bounds, above), or "" (none).
  std::string estimate_basis;
  double measured_coverage = 0;  // share of its GPU time the counters covered ("measured bound")
  // "measured bound": the DRAM bytes it moved on the GPU over its operands and results. Above 1
  // the GPU re-read data from memory (a design keeping it on chip saves the difference); below 1
  // it read part of its operands or found them in the L2 cache. 0 otherwise.
  double measured_traffic_ratio = 0;
  std::string estimate_note;  // empty, or why the score / what-if is not estimated
  // score inputs
  double gpu_time_ns = 0;
  double time_share = 0;         // gpu_time / all kernels' time
  double intensity = 0;          // FLOP/byte (static)
  double ridge = 0;              // GPU ridge point for its precision
  double memory_boundness = 0;   // clamp(1 - intensity / ridge, 0, 1); 0.5 if ridge unknown
  double pattern_affinity = 0;   // table in docs/fpga-model.md
  double working_set_bytes = 0;  // OpCost::working_set_bytes
  std::string onchip_source;     // where it comes from: OpCost::working_set_source
  double sram_bytes = 0;         // the card's on-chip memory
  bool fits_on_chip = false;
  double onchip_factor = 0;        // 1 if it fits, else 0.5 + 0.5 x sram / working set
  double host_bytes_per_call = 0;  // HtoD + DtoH bytes the op already moves per execution
  // gpu_time / (gpu_time + transfer_s), 1 when nothing crosses the link: what the host link
  // costs against what the op costs on the GPU today. Independent of the card's compute and
  // memory model, so a slower card never raises it (nor the score); more bytes lower it.
  double link_factor = 0;
  double score = 0;  // time_share x (0.25 + 0.75 boundness) x affinity x onchip x link
  // what-if on the card, as compiled (whole trace, seconds; *_low / *_high: the range)
  double flops = 0, bytes = 0;                // whole trace (static cost model)
  double stream_bytes = 0, random_bytes = 0;  // card traffic as compiled, whole trace
  double memory_efficiency = 0;               // card traffic / (card_memory_s x memory peak), nominal
  std::string card_limit;                     // what bounds the card time as compiled (nominal)
  double card_compute_s = 0, card_memory_s = 0, card_latency_s = 0, card_time_s = 0;
  double card_time_low_s = 0, card_time_high_s = 0;
  double transfer_bytes = 0, transfer_s = 0, transfer_low_s = 0, transfer_high_s = 0;
  double fpga_total_s = 0, fpga_total_low_s = 0, fpga_total_high_s = 0;  // card_time + transfer
  double op_speedup = 0, op_speedup_low = 0, op_speedup_high = 0;        // gpu_time / fpga_total
  double workload_speedup = 0, workload_speedup_low = 0, workload_speedup_high = 0;
  // restructured (compulsory traffic, on-chip reuse): the design headroom
  double restructured_bytes = 0;     // card traffic restructured, whole trace
  bool restructured_onchip = false;  // its data-dependent accesses are served on chip
  // OpCardEstimate::structure_dependent of the restructured design: the matrix's structure, not
  // visible in the shapes, decides its restructured figures
  bool restructured_structure_dependent = false;
  double restructured_card_time_s = 0, restructured_card_time_low_s = 0, restructured_card_time_high_s = 0;
  double restructured_fpga_total_s = 0;
  double restructured_op_speedup = 0, restructured_op_speedup_low = 0, restructured_op_speedup_high = 0;
  double restructured_workload_speedup = 0;
  // card energy (J) of card_time_s and restructured_card_time_s at the card's loaded_w; NaN when
  // not estimated (a bound included) or the card's power is unknown
  EnergyRange card_energy_j, restructured_card_energy_j;
  // GPU energy beside the card energy (docs/fpga-model.md, "Energy verdict"), from
  // FpgaOptions::energy. gpu_energy_j: the joules the energy analysis attributes to the op
  // (EnergyReport::ops: the board's energy split by busy-time share, an attribution, not a
  // measurement); gpu_energy_coverage: the share of gpu_time_ns inside sampled intervals. Both
  // NaN when the trace has no energy or none of the op's time was sampled.
  double gpu_energy_j = 0, gpu_energy_coverage = 0;
  // card_energy_j x gpu_energy_coverage / gpu_energy_j (the card's joules for the sampled share
  // of its executions over the GPU's for them), its ends from the card energy's; NaN when either
  // side is unknown. The same for restructured_card_energy_j.
  EnergyRange energy_ratio, restructured_energy_ratio;
  // time_energy_verdict() of each scenario: op_speedup / restructured_op_speedup ranges and ratios.
  std::string energy_verdict, restructured_energy_verdict;
  // offload_scenario(op_speedup, restructured_op_speedup); for a bound, "neither" when even the
  // fast ends of both upper bounds stay under 1, else "" (undecided without a cost).
  std::string scenario;
  std::string verdict;       // offload_verdict(scenario, is_bound())
  double could_save_ns = 0;  // could_save_ns(gpu_time_ns, op_speedup_high, restructured_op_speedup_high)
  // What the restructured figures rest on: restructured_basis(restructured_onchip, random_bytes).
  std::string restructured_basis;
  bool is_bound() const { return estimate_basis == "measured bound" || estimate_basis == "operand bound"; }
};

struct FpgaReport {
  FpgaTarget target;
  std::vector<FpgaCandidate> candidates;  // ranked: could_save_ns, then GPU time, then score
  double workload_ns = 0;
  double gpu_kernel_ns = 0;
  // Every estimated candidate with op_speedup > 1 offloaded together (their savings add); the
  // range offloads the same ops at the ends of their ranges.
  double combined_speedup = 1.0, combined_speedup_low = 1.0, combined_speedup_high = 1.0;
  uint32_t combined_count = 0;
  // The same with every op whose restructured design gains.
  double restructured_combined_speedup = 1.0;
  uint32_t restructured_combined_count = 0;
  // Candidates without an estimate (unknown static cost) and their GPU time: not in the
  // combined speedup, which therefore covers only the rest of the GPU time. Of them, those with
  // a bound (estimate_basis "measured bound" / "operand bound") and those the bound rules out
  // (scenario "neither": no gain even at the fast ends).
  uint32_t not_estimated_count = 0;
  double not_estimated_gpu_ns = 0;
  uint32_t bounded_count = 0;
  uint32_t ruled_out_count = 0;
  double ruled_out_gpu_ns = 0;
  double row_imbalance = 0;  // FpgaOptions::row_imbalance the ranking used (0: not known)
};

// A user region (fpgaprof.region) as an offload unit: every instance of one region path
// ("outer > inner", inclusive of nested regions) moved to the card together. Its ops run on
// the card one after another; data crosses the host link at the jitted calls (HLO module
// executions) inside it: each call's parameters in, its results out. Kernels of ops without a
// static cost (or without an op, or in a precision the card cannot run) are not modelled: they
// are assumed to take their GPU time on the card, and `estimated_share` says how much of the
// region that is. docs/fpga-model.md, "Regions".
struct FpgaRegionCandidate {
  std::string path;           // region names from the outermost, joined by " > "
  std::string name;           // the innermost name
  uint32_t depth = 0;         // 0: outermost
  uint64_t instances = 0;     // region records with this path
  uint64_t kernel_count = 0;  // kernels launched inside (nested regions included)
  uint32_t op_count = 0;      // distinct HLO ops among them
  std::string top_op;         // the op with the most GPU time inside ("" none)
  bool estimated = false;     // at least one op inside can be modelled on the card
  std::string estimate_note;  // empty, or what is not estimated and why
  // score inputs
  double gpu_time_ns = 0;
  double time_share = 0;         // gpu_time / all kernels' time
  double estimated_share = 0;    // share of gpu_time in ops the model can put on the card
  double intensity = 0;          // estimated ops' FLOPs / bytes
  double memory_boundness = 0;   // estimated ops' memory_boundness, GPU-time weighted
  double pattern_affinity = 0;   // estimated ops' pattern_affinity, GPU-time weighted
  double working_set_bytes = 0;  // the largest working set among its estimated ops
  std::string onchip_source;     // that op's OpCost::working_set_source
  double sram_bytes = 0;
  bool fits_on_chip = false;
  double onchip_factor = 0;
  double host_bytes_per_instance = 0;  // HtoD + DtoH bytes copied inside, per instance (shown)
  double link_factor = 0;              // gpu_time / (gpu_time + transfer_s); 1 without transfer
  double score = 0;                    // time_share x estimated_share x (0.25 + 0.75 boundness)
                                       //   x affinity x onchip x link
  // what-if (whole trace, seconds), as compiled; *_low / *_high: the range
  double module_calls = 0;            // jitted calls inside (card invocations)
  bool module_calls_counted = false;  // true: counted from XlaModule ranges; false: estimated
  double flops = 0, bytes = 0;        // estimated ops, whole trace
  double card_compute_s = 0;          // sum over estimated ops
  double card_memory_s = 0;           // sum over estimated ops
  double random_access_bytes = 0;     // estimated ops' data-dependent card traffic
  double memory_efficiency = 0;       // card traffic / (card_memory_s x memory peak)
  double card_latency_s = 0;          // module_calls x call latency
  double kept_gpu_s = 0;              // GPU time of the kernels not estimated (kept as is)
  double card_time_s = 0, card_time_low_s = 0, card_time_high_s = 0;  // ops + latency + kept
  // module_calls x module parameters + results (none with the data on the card), + handoff_bytes
  double transfer_bytes = 0;
  double handoff_bytes = 0;  // what ops kept on the GPU hand to and take from the card's ops
  double transfer_s = 0, transfer_low_s = 0, transfer_high_s = 0;
  double fpga_total_s = 0, fpga_total_low_s = 0, fpga_total_high_s = 0;
  double region_speedup = 0, region_speedup_low = 0, region_speedup_high = 0;  // gpu_time / fpga_total
  double workload_speedup = 0, workload_speedup_low = 0, workload_speedup_high = 0;
  // restructured: each estimated op at its restructured time
  double restructured_card_time_s = 0, restructured_card_time_low_s = 0, restructured_card_time_high_s = 0;
  double restructured_fpga_total_s = 0;
  double restructured_region_speedup = 0, restructured_region_speedup_low = 0, restructured_region_speedup_high = 0;
  // card energy (J) of card_time_s and restructured_card_time_s without kept_gpu_s (the card's
  // own design: ops and launches) at the card's loaded_w; NaN when not estimated or the card's
  // power is unknown
  EnergyRange card_energy_j, restructured_card_energy_j;
  // GPU energy beside the card energy (docs/fpga-model.md, "Energy verdict"), from
  // FpgaOptions::energy: gpu_energy_j the attributed joules of the kernels launched in the path
  // (sub-paths included; EnergyReport::path_op_kernels), gpu_energy_coverage the share of
  // gpu_time_ns inside sampled intervals; kept_gpu_energy_j the part of gpu_energy_j of the
  // kernels kept on the GPU (kept_gpu_s). NaN when the trace has no energy or none of the
  // region's kernel time was sampled.
  double gpu_energy_j = 0, gpu_energy_coverage = 0, kept_gpu_energy_j = 0;
  // (card_energy_j x gpu_energy_coverage + kept_gpu_energy_j) / gpu_energy_j: the region's
  // energy with the offload (the card's design, the kept kernels still on the GPU) over its
  // energy now; ends from the card energy's; NaN when either side is unknown. The same for
  // restructured_card_energy_j.
  EnergyRange energy_ratio, restructured_energy_ratio;
  // time_energy_verdict() of each scenario: region_speedup / restructured_region_speedup ranges.
  std::string energy_verdict, restructured_energy_verdict;
  std::string scenario;  // offload_scenario(region_speedup, restructured_region_speedup)
  std::string verdict;   // offload_verdict(scenario, false)
  // could_save_ns(gpu_time_ns, region_speedup_high, restructured_region_speedup_high): all of
  // its GPU time when not estimated
  double could_save_ns = 0;
  // What the restructured figures rest on: restructured_basis(true, random_access_bytes).
  std::string restructured_basis;
  // The region holds an op, runs a module, or is as one design a gather + scatter whose figure
  // the matrix's structure decides: its restructured slow end is as compiled (widen_for_structure).
  bool restructured_structure_dependent = false;
};

// The label of a restructured figure whose data-dependent accesses a restructured design serves
// on chip: it rests on the on-chip access parallelism published HBM sparse designs achieve
// (onchip_lanes), which no anchor of another access pattern validates (docs/fpga-validation.md).
extern const char* const kRestructuredOnchipBasis;
// kRestructuredOnchipBasis when `onchip` and `random_bytes` > 0 (data-dependent accesses served
// on chip), "" otherwise (the figure rests on the streaming, compute and memory constants).
const char* restructured_basis(bool onchip, double random_bytes);

// Pattern affinity used in the score (documented table).
double pattern_affinity(hlo::AccessPattern p);

// `ops` and `roofline` as given to / returned by analyze_roofline (same order);
// `host_bytes_per_op`: empty or, per op, HtoD+DtoH bytes attributed to it over the trace.
// Throws Error(kInvalidArgument) on mismatched sizes or a target validate_fpga_target rejects.
FpgaReport rank_fpga_candidates(const std::vector<OpCost>& ops, const RooflineReport& roofline,
                                const FpgaTarget& target, const FpgaOptions& options,
                                const std::vector<double>& host_bytes_per_op = {});

// Every region path with kernels inside, ranked like the ops (could_save_ns, then GPU time,
// then score; a region without any estimated op (estimated false: every derived field NaN)
// could save all of its GPU time). Region
// paths are keyed by (enclosing path, name); a name containing " > " is shown in quotes. Nested paths
// are ranked side by side, so their savings overlap and are not added up. `ops`, `roofline`
// and `op_of_kernel` as given to analyze_roofline; options.min_time_share applies. Paths are
// RegionPaths' (options.region_paths when given). Throws Error(kInvalidArgument) on mismatched
// sizes (a region_paths of another store included) or an invalid target.
std::vector<FpgaRegionCandidate> rank_fpga_regions(const TraceStore& store, const std::vector<OpCost>& ops,
                                                   const std::vector<uint32_t>& op_of_kernel,
                                                   const RooflineReport& roofline, const FpgaTarget& target,
                                                   const FpgaOptions& options);

// ---- static estimate of a whole module (no trace, no GPU) -------------------------------------

// One op of the module as the card would run it: an instruction of the entry computation, or
// of a computation it runs through while / conditional / call (multiplied by the loop's trip
// count), fusions as one op. Times cover all `executions`.
struct StaticOpEstimate {
  std::string op;           // instruction name
  std::string computation;  // its computation
  std::string opcode;
  hlo::AccessPattern pattern = hlo::AccessPattern::kUnknown;
  Precision precision = Precision::kFp32;
  std::string source;     // "file:line" or ""
  double executions = 1;  // product of the trip counts around it
  bool estimated = false;
  double flops = 0, bytes = 0;                                      // all executions (static cost model)
  double stream_bytes = 0, random_bytes = 0, compulsory_bytes = 0;  // all executions
  double memory_efficiency = 0;
  std::string card_limit;
  TimeRange card_compute_s, card_memory_s, card_time_s;  // as compiled
  TimeRange restructured_time_s;
  // card energy (J) of card_time_s and restructured_time_s at the card's loaded_w; NaN when not
  // estimated or the card's power is unknown
  EnergyRange card_energy_j, restructured_card_energy_j;
  bool restructured_onchip = false;
  bool restructured_structure_dependent = false;  // OpCardEstimate::structure_dependent, restructured
  std::string estimate_note;
  // What the restructured figures rest on: restructured_basis(restructured_onchip, random_bytes).
  std::string restructured_basis;
};

struct ModuleEstimate {
  std::string module;
  FpgaTarget target;
  std::vector<StaticOpEstimate> ops;  // program order
  // Everything on the card, data resident in card memory, one launch: as compiled the ops one
  // after another; restructured the better of each op restructured alone and the function as one
  // dataflow design (restructured_dataflow: the latter; restructured_onchip: its data-dependent
  // accesses served on chip).
  TimeRange card_time_s, restructured_card_time_s;
  // Their energy (J) at the card's loaded_w; NaN when the card's power is unknown, and when an op
  // is in no time above (not_estimated_count, unsupported_count: the times are lower bounds).
  EnergyRange card_energy_j, restructured_card_energy_j;
  bool restructured_dataflow = false;
  bool restructured_onchip = false;
  TimeRange call_latency_s;  // the one launch (included in the card times)
  // Arguments to the card and results back over the host link (one buffer each).
  double transfer_bytes = 0;
  double transfer_buffers = 0;
  TimeRange transfer_s;
  TimeRange total_s, restructured_total_s;  // card time + transfer
  uint32_t not_estimated_count = 0;         // ops without a cost (in no time above)
  uint32_t unsupported_count = 0;           // ops in a precision the card cannot run (in no time above)
  double row_imbalance = 0;                 // the user's delta given to the estimate (0: not known)
  std::vector<std::string> notes;           // unknown trip counts, custom calls, ...
};

// The module's entry computation on `target` (validated), with the user's `row_imbalance`
// (estimate_op_on_card; validated, 0: not known). Throws Error(kInvalidArgument) when the module
// has no entry computation.
ModuleEstimate estimate_module(const hlo::Module& module, const FpgaTarget& target, double row_imbalance = 0);

}  // namespace fpgaprof::analysis

// The result tables of result_schema.hpp for the FPGA rankings, the module estimate, the
// roofline point and the transfer statistics, in the order the Python dicts have them, and the
// registry of every table (result_tables); the trace-wide rows are in result_schema_trace.cpp,
// analyze()'s envelope in result_schema_envelope.cpp, the core's own results in
// result_schema_core.cpp.
#include "fpgaprof/analysis/result_schema.hpp"

#include <cmath>

#include "fpgaprof/hlo/buffer_assignment.hpp"

namespace fpgaprof::analysis {

namespace {

using VT = ValueType;

FieldValue none() { return {}; }

// Names of values shared by several tables.
constexpr const char* kScenario =
    "the offload verdict from the nominal speedups: 'as compiled' (gains as XLA compiled it), 'restructured only' "
    "(only a restructured dataflow design gains), 'neither'; '' when not estimated (docs/fpga-model.md)";
constexpr const char* kVerdict = "offload_verdict(scenario, bound): the ranking's one-line conclusion";
constexpr const char* kCouldSave =
    "the GPU time offloading could save at the fast end of its range (docs/fpga-model.md, \"Ranking\"): the "
    "ranking key";
constexpr const char* kCardTime = "time on the card as compiled (compute, memory and latency), whole trace";
constexpr const char* kRestructuredCardTime =
    "card time of the restructured design (compulsory traffic, on-chip reuse), launches included";
constexpr const char* kCardEnergy =
    "card energy of card_time_s at the card's loaded_w (low: time low x power low; high: high x high); null when "
    "not estimated or the card's power is unknown";
constexpr const char* kRestructuredCardEnergy =
    "card energy of restructured_card_time_s at the card's loaded_w (low x low, high x high); null when not "
    "estimated or the card's power is unknown";
constexpr const char* kOpGpuEnergy =
    "GPU joules of the op in the trace: the energy analysis' attribution (the board's measured energy split by "
    "busy-time share within each sampling interval; an attribution, not a measurement: docs/energy.md), over the "
    "part of its GPU time that was sampled (gpu_energy_coverage); null when the trace has no energy (no NVML) or "
    "none of its time was sampled";
constexpr const char* kRegionGpuEnergy =
    "GPU joules of the kernels launched in the path (its sub-paths' included): the energy analysis' attribution, "
    "as for an op, so the row compares the same work on both sides (the window's measured joules, idle gaps and "
    "host work included, are energy_report(by=\"region\")'s: docs/energy.md), over the part of its GPU time that "
    "was sampled (gpu_energy_coverage); null when the trace has no energy (no NVML) or none of its kernels' time "
    "was sampled";
constexpr const char* kOpGpuEnergyCoverage =
    "share of gpu_time_ns inside sampled intervals, the part gpu_energy_j covers; null with gpu_energy_j";
constexpr const char* kRegionGpuEnergyCoverage =
    "share of gpu_time_ns (the path's kernels) inside sampled intervals, the part gpu_energy_j covers; null with "
    "gpu_energy_j";
constexpr const char* kEnergyRatio =
    "card / GPU energy as compiled: card_energy_j x gpu_energy_coverage / gpu_energy_j (low, high: the card "
    "energy's ends; below 1 the card needs less energy); null when either energy is unknown";
constexpr const char* kRestructuredEnergyRatio =
    "card / GPU energy restructured: restructured_card_energy_j x gpu_energy_coverage / gpu_energy_j (low, high: "
    "the card energy's ends); null when either energy is unknown";
constexpr const char* kRegionCardEnergy =
    "card energy of card_time_s without kept_gpu_s (the card's own design: its ops and launches) at the card's "
    "loaded_w (low: time low x power low; high: high x high); the kept kernels' energy stays the GPU's "
    "(kept_gpu_energy_j); null when not estimated or the card's power is unknown";
constexpr const char* kRegionRestructuredCardEnergy =
    "card energy of restructured_card_time_s without kept_gpu_s at the card's loaded_w (low x low, high x high); "
    "null when not estimated or the card's power is unknown";
constexpr const char* kRegionKeptGpuEnergy =
    "the part of gpu_energy_j of the kernels the region keeps on the GPU (kept_gpu_s: no cost, no HLO op, a "
    "precision the card lacks): with the offload they still run there; null with gpu_energy_j";
constexpr const char* kRegionEnergyRatio =
    "the region's energy with the offload over its energy now, as compiled: (card_energy_j x gpu_energy_coverage + "
    "kept_gpu_energy_j) / gpu_energy_j (low, high: the card energy's ends; below 1 the offload needs less "
    "energy); null when either energy is unknown";
constexpr const char* kRegionRestructuredEnergyRatio =
    "energy_ratio restructured: (restructured_card_energy_j x gpu_energy_coverage + kept_gpu_energy_j) / "
    "gpu_energy_j; null when either energy is unknown";
constexpr const char* kEnergyVerdict =
    "time and energy together, as compiled (docs/fpga-model.md, \"Energy verdict\"): 'gains' (faster across the "
    "speedup range), 'wins only on energy' (not faster across it, energy_ratio_high < 1), 'loses' (speedup_high "
    "<= 1 and energy_ratio_low >= 1; or a precision the card lacks), 'uncertain' (a range straddles 1, nothing won across it), 'unknown: not "
    "estimated', 'unknown: no GPU energy', 'unknown: no card energy'";
constexpr const char* kRestructuredEnergyVerdict =
    "energy_verdict of the restructured design (its speedup range and restructured_energy_ratio)";
constexpr const char* kMemoryEfficiency =
    "bytes the card moves as compiled / (card_memory_s x the card's memory peak), nominal";
constexpr const char* kCardLimit =
    "what bounds the card time as compiled at nominal constants: compute, memory, random access, sort, on-chip "
    "access, cycles (one clock cycle per execution at least) ('' when not estimated)";

FieldValue nan_null(double v) { return std::isnan(v) ? none() : FieldValue{v}; }

// A card / GPU energy ratio (an EnergyRange member) as a range of x, null (all three) where its
// nominal is NaN.
template <auto M, class Ctx>
ResultField<result_detail::RowOf<M>, Ctx> ratio_member(const char* name, const char* description) {
  ResultField<result_detail::RowOf<M>, Ctx> f = energy_member<M, Ctx>(name, description);
  f.info = result_detail::info(name, VT::kFloat, true, true, "x", description);
  return f;
}

// The GPU energy beside the card's, in a ranking row (op or region).
template <class R, class C>
void push_energy_comparison(ResultTable<R, C>& v, const char* gpu_energy, const char* coverage,
                            const char* ratio = kEnergyRatio,
                            const char* restructured_ratio = kRestructuredEnergyRatio) {
  v.push_back(computed<R, C>("gpu_energy_j", VT::kFloat, true, "J", gpu_energy,
                             [](const R& r, const C&) { return nan_null(r.gpu_energy_j); }));
  v.push_back(computed<R, C>("gpu_energy_coverage", VT::kFloat, true, "fraction", coverage,
                             [](const R& r, const C&) { return nan_null(r.gpu_energy_coverage); }));
  v.push_back(ratio_member<&R::energy_ratio, C>("energy_ratio", ratio));
  v.push_back(ratio_member<&R::restructured_energy_ratio, C>("restructured_energy_ratio", restructured_ratio));
}

}  // namespace

// Whether the matrix's structure decides the restructured figures (fpga_model.hpp OpCardEstimate).
constexpr const char* kStructureDependent =
    "the restructured design is or holds a gather + scatter (SpMV-like) whose output is tiled or whose density is at "
    "most 1e-4: row imbalance and column spread, not visible in the shapes, decide its figure, and the range's slow "
    "end is the as-compiled one (tiles that find no reuse; docs/fpga-model.md)";

// The user's row imbalance, in the static estimate and in the trace ranking alike.
constexpr const char* kRowImbalanceGiven =
    "the row imbalance ratio applied (HiSpMV's delta) to the restructured gathers + scatters: given by the user, "
    "or computed by estimate() from the function's arguments (null: none)";

// What the restructured figures rest on (fpga_model.hpp restructured_basis).
constexpr const char* kRestructuredBasis =
    "what the restructured figures rest on: \"a designer's target: ...\" when a restructured design serves "
    "data-dependent accesses on chip (the on-chip parallelism of published HBM SpMV designs, onchip_lanes), "
    "else \"\" (docs/fpga-model.md)";

const ResultTable<FpgaCandidate, FpgaOpRowContext>& fpga_op_row_fields() {
  using R = FpgaCandidate;
  using C = FpgaOpRowContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(computed<R, C>("rank", VT::kInt, false, "", "1-based position in the ranking",
                               [](const R&, const C& c) { return FieldValue{uint64_t{c.rank}}; }));
    v.push_back(member<&R::name, C>("op", "", "the HLO instruction"));
    v.push_back(member<&R::module, C>("module", "", "its HLO module"));
    v.push_back(member<&R::op_index, C>("op_index", "",
                                        "the op's index into the analysis' ops (prof.ops' order): one op, where "
                                        "several compilations of a function give ops of the same module and op name"));
    v.push_back(computed<R, C>("source", VT::kString, false, "", "\"file:line\" of the op ('' unknown)",
                               [](const R& r, const C& c) { return FieldValue{c.inputs->sources[r.op_index]}; }));
    v.push_back(computed<R, C>(
        "pattern", VT::kString, false, "", "access pattern (hlo::access_pattern_name)",
        [](const R& r, const C&) { return FieldValue{std::string(hlo::access_pattern_name(r.pattern))}; }));
    v.push_back(
        computed<R, C>("precision", VT::kString, false, "", "the precision it runs at on the card",
                       [](const R& r, const C&) { return FieldValue{std::string(precision_name(r.precision))}; }));
    v.push_back(member<&R::executions, C>("executions", "", "executions of the op in the trace"));
    v.push_back(member<&R::kernel_count, C>("kernel_count", "", "its kernels in the trace"));
    v.push_back(member<&R::cost_known, C>("cost_known", "", "the static cost model has a rule for it"));
    v.push_back(
        member<&R::estimate_note, C>("estimate_note", "", "empty, or why the score / what-if is not estimated"));
    v.push_back(computed<R, C>(
        "estimate_basis", VT::kString, true, "",
        "what the what-if rests on: 'static' (the cost model's rule), 'author' (a custom kernel's own figures), "
        "'measured bound' / 'operand bound' (cost unknown: every time a lower bound, every speedup an upper bound); "
        "null: not estimated",
        [](const R& r, const C&) { return r.estimate_basis.empty() ? none() : FieldValue{r.estimate_basis}; }));
    v.push_back(computed<R, C>("measured_coverage", VT::kFloat, true, "fraction",
                               "share of the op's GPU time the counters covered (estimate_basis 'measured bound')",
                               [](const R& r, const C&) {
                                 return r.estimate_basis == "measured bound" ? FieldValue{r.measured_coverage} : none();
                               }));
    v.push_back(computed<R, C>(
        "measured_traffic_ratio", VT::kFloat, true, "x",
        "estimate_basis 'measured bound': the DRAM bytes it moved on the GPU over its operands and results (above "
        "1: data re-read from memory, which a design keeping it on chip saves)",
        [](const R& r, const C&) {
          return r.measured_traffic_ratio > 0 ? FieldValue{r.measured_traffic_ratio} : none();
        }));
    v.push_back(member<&R::gpu_time_ns, C>("gpu_time_ns", "ns", "its kernels' time on the GPU"));
    v.push_back(member<&R::time_share, C>("time_share", "fraction", "gpu_time_ns / all kernels' time"));
    v.push_back(member<&R::intensity, C>("intensity", "FLOP/byte", "static arithmetic intensity"));
    v.push_back(member<&R::ridge, C>("ridge", "FLOP/byte", "the GPU's ridge point for its precision"));
    v.push_back(member<&R::memory_boundness, C>("memory_boundness", "fraction",
                                                "clamp(1 - intensity / ridge, 0, 1); 0.5 when the ridge is unknown"));
    v.push_back(member<&R::pattern_affinity, C>("pattern_affinity", "",
                                                "the access pattern's affinity (docs/fpga-model.md, \"Score\")"));
    v.push_back(member<&R::working_set_bytes, C>("working_set_bytes", "bytes", "what it needs on chip at once"));
    v.push_back(computed<R, C>(
        "onchip_source", VT::kString, true, "", "where working_set_bytes comes from (null when the cost is unknown)",
        [](const R& r, const C&) { return r.cost_known ? FieldValue{r.onchip_source} : none(); }));
    v.push_back(computed<R, C>(
        "onchip_input_bytes", VT::kFloat, true, "bytes",
        "inputs it needs on chip, from XLA's buffer assignment (null otherwise)", [](const R& r, const C& c) {
          const OpCost& o = c.inputs->ops[r.op_index];
          return o.working_set_source == "xla buffer assignment" ? FieldValue{o.onchip_input_bytes} : none();
        }));
    v.push_back(computed<R, C>(
        "onchip_output_bytes", VT::kFloat, true, "bytes",
        "outputs it needs on chip, from XLA's buffer assignment (null otherwise)", [](const R& r, const C& c) {
          const OpCost& o = c.inputs->ops[r.op_index];
          return o.working_set_source == "xla buffer assignment" ? FieldValue{o.onchip_output_bytes} : none();
        }));
    v.push_back(computed<R, C>(
        "onchip_temporary_bytes", VT::kFloat, true, "bytes",
        "temporaries it needs on chip, from XLA's buffer assignment (null otherwise)", [](const R& r, const C& c) {
          const OpCost& o = c.inputs->ops[r.op_index];
          return o.working_set_source == "xla buffer assignment" ? FieldValue{o.onchip_temporary_bytes} : none();
        }));
    v.push_back(member<&R::sram_bytes, C>("sram_bytes", "bytes", "the card's on-chip memory"));
    v.push_back(computed<R, C>(
        "fits_on_chip", VT::kBool, true, "", "working_set_bytes fits in sram_bytes (null when the cost is unknown)",
        [](const R& r, const C&) { return r.cost_known ? FieldValue{r.fits_on_chip} : none(); }));
    v.push_back(member<&R::onchip_factor, C>("onchip_factor", "", "1 if it fits, else 0.5 + 0.5 x sram / working set"));
    v.push_back(member<&R::host_bytes_per_call, C>("host_bytes_per_call", "bytes",
                                                   "HtoD + DtoH bytes the op already moves per execution"));
    v.push_back(member<&R::link_factor, C>("link_factor", "",
                                           "gpu_time / (gpu_time + transfer_s), 1 when nothing crosses the link"));
    v.push_back(member<&R::score, C>("score", "",
                                     "the documented score (docs/fpga-model.md, \"Score\"): time_share x (0.25 + 0.75 "
                                     "boundness) x affinity x onchip x link"));
    v.push_back(member<&R::flops, C>("flops", "FLOP", "static cost model, whole trace"));
    v.push_back(member<&R::bytes, C>("bytes", "bytes", "static cost model, whole trace"));
    v.push_back(member<&R::stream_bytes, C>("stream_bytes", "bytes",
                                            "card traffic as compiled that streams (contiguous), whole trace"));
    v.push_back(member<&R::random_bytes, C>(
        "random_bytes", "bytes",
        "card traffic as compiled moved by data-dependent accesses (gathers, scatters), whole trace"));
    v.push_back(member<&R::memory_efficiency, C>("memory_efficiency", "fraction", kMemoryEfficiency));
    v.push_back(member<&R::card_limit, C>("card_limit", "", kCardLimit));
    v.push_back(member<&R::card_compute_s, C>("card_compute_s", "s", "compute time on the card, nominal"));
    v.push_back(member<&R::card_memory_s, C>("card_memory_s", "s", "memory time on the card, nominal"));
    v.push_back(member<&R::card_latency_s, C>("card_latency_s", "s", "launch latency on the card, nominal"));
    v.push_back(
        range_members<&R::card_time_s, &R::card_time_low_s, &R::card_time_high_s, C>("card_time_s", "s", kCardTime));
    v.push_back(member<&R::transfer_bytes, C>("transfer_bytes", "bytes", "bytes over the host link for the card"));
    v.push_back(range_members<&R::transfer_s, &R::transfer_low_s, &R::transfer_high_s, C>(
        "transfer_s", "s", "host-link time of transfer_bytes"));
    v.push_back(range_members<&R::fpga_total_s, &R::fpga_total_low_s, &R::fpga_total_high_s, C>(
        "fpga_total_s", "s", "card_time_s + transfer_s"));
    v.push_back(range_members<&R::op_speedup, &R::op_speedup_low, &R::op_speedup_high, C>(
        "op_speedup", "x", "gpu_time / fpga_total (low: over fpga_total_high_s; high: over fpga_total_low_s)"));
    v.push_back(range_members<&R::workload_speedup, &R::workload_speedup_low, &R::workload_speedup_high, C>(
        "workload_speedup", "x", "the workload's speedup with this op alone on the card (Amdahl)"));
    v.push_back(member<&R::restructured_bytes, C>(
        "restructured_bytes", "bytes", "card traffic of the restructured design (compulsory bytes), whole trace"));
    v.push_back(
        computed<R, C>("restructured_onchip", VT::kBool, true, "",
                       "the restructured design serves the op's data-dependent accesses from on-chip memory",
                       [](const R& r, const C&) { return r.cost_known ? FieldValue{r.restructured_onchip} : none(); }));
    v.push_back(
        range_members<&R::restructured_card_time_s, &R::restructured_card_time_low_s, &R::restructured_card_time_high_s,
                      C>("restructured_card_time_s", "s", kRestructuredCardTime));
    v.push_back(energy_member<&R::card_energy_j, C>("card_energy_j", kCardEnergy));
    v.push_back(
        energy_member<&R::restructured_card_energy_j, C>("restructured_card_energy_j", kRestructuredCardEnergy));
    push_energy_comparison(v, kOpGpuEnergy, kOpGpuEnergyCoverage);
    v.push_back(member<&R::restructured_fpga_total_s, C>("restructured_fpga_total_s", "s",
                                                         "restructured_card_time_s + transfer_s"));
    v.push_back(
        range_members<&R::restructured_op_speedup, &R::restructured_op_speedup_low, &R::restructured_op_speedup_high,
                      C>("restructured_op_speedup", "x", "op_speedup of the restructured design"));
    v.push_back(member<&R::restructured_workload_speedup, C>("restructured_workload_speedup", "x",
                                                             "workload_speedup of the restructured design"));
    v.push_back(member<&R::scenario, C>("scenario", "", kScenario));
    v.push_back(member<&R::verdict, C>("verdict", "", kVerdict));
    v.push_back(member<&R::energy_verdict, C>("energy_verdict", "", kEnergyVerdict));
    v.push_back(
        member<&R::restructured_energy_verdict, C>("restructured_energy_verdict", "", kRestructuredEnergyVerdict));
    v.push_back(member<&R::could_save_ns, C>("could_save_ns", "ns", kCouldSave));
    v.push_back(member<&R::restructured_basis, C>("restructured_basis", "", kRestructuredBasis));
    v.push_back(computed<R, C>(
        "restructured_structure_dependent", VT::kBool, true, "", kStructureDependent,
        [](const R& r, const C&) { return r.cost_known ? FieldValue{r.restructured_structure_dependent} : none(); }));
    return v;
  }();
  return t;
}

const ResultTable<FpgaRegionCandidate, RankContext>& fpga_region_row_fields() {
  using R = FpgaRegionCandidate;
  using C = RankContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(computed<R, C>("rank", VT::kInt, false, "", "1-based position in the ranking",
                               [](const R&, const C& c) { return FieldValue{uint64_t{c.rank}}; }));
    v.push_back(member<&R::path, C>("region", "", "the region path: names from the outermost, joined by \" > \""));
    v.push_back(member<&R::name, C>("name", "", "the innermost name"));
    v.push_back(member<&R::depth, C>("depth", "", "0: outermost"));
    v.push_back(member<&R::estimated, C>("estimated", "", "at least one op inside can be modelled on the card"));
    v.push_back(member<&R::instances, C>("instances", "", "region records with this path"));
    v.push_back(member<&R::kernel_count, C>("kernel_count", "", "kernels launched inside (nested regions included)"));
    v.push_back(member<&R::op_count, C>("op_count", "", "distinct HLO ops among them"));
    v.push_back(member<&R::top_op, C>("top_op", "", "the op with the most GPU time inside ('' none)"));
    v.push_back(member<&R::estimate_note, C>("estimate_note", "", "empty, or what is not estimated and why"));
    v.push_back(member<&R::gpu_time_ns, C>("gpu_time_ns", "ns", "its kernels' time on the GPU"));
    v.push_back(member<&R::time_share, C>("time_share", "fraction", "gpu_time_ns / all kernels' time"));
    v.push_back(member<&R::estimated_share, C>("estimated_share", "fraction",
                                               "share of gpu_time_ns in ops the model can put on the card"));
    v.push_back(member<&R::intensity, C>("intensity", "FLOP/byte", "estimated ops' FLOPs / bytes"));
    v.push_back(member<&R::memory_boundness, C>("memory_boundness", "fraction",
                                                "estimated ops' memory_boundness, GPU-time weighted"));
    v.push_back(
        member<&R::pattern_affinity, C>("pattern_affinity", "", "estimated ops' pattern_affinity, GPU-time weighted"));
    v.push_back(member<&R::working_set_bytes, C>("working_set_bytes", "bytes",
                                                 "the largest working set among its estimated ops"));
    v.push_back(computed<R, C>(
        "onchip_source", VT::kString, true, "", "where that working set comes from (null when not estimated)",
        [](const R& r, const C&) { return r.estimated ? FieldValue{r.onchip_source} : none(); }));
    v.push_back(member<&R::sram_bytes, C>("sram_bytes", "bytes", "the card's on-chip memory"));
    v.push_back(computed<R, C>("fits_on_chip", VT::kBool, true, "",
                               "working_set_bytes fits in sram_bytes (null when not estimated)",
                               [](const R& r, const C&) { return r.estimated ? FieldValue{r.fits_on_chip} : none(); }));
    v.push_back(member<&R::onchip_factor, C>("onchip_factor", "", "1 if it fits, else 0.5 + 0.5 x sram / working set"));
    v.push_back(member<&R::host_bytes_per_instance, C>("host_bytes_per_instance", "bytes",
                                                       "HtoD + DtoH bytes copied inside, per instance"));
    v.push_back(
        member<&R::link_factor, C>("link_factor", "", "gpu_time / (gpu_time + transfer_s); 1 without transfer"));
    v.push_back(member<&R::score, C>(
        "score", "", "time_share x estimated_share x (0.25 + 0.75 boundness) x affinity x onchip x link"));
    v.push_back(member<&R::module_calls, C>("module_calls", "", "jitted calls inside (card invocations)"));
    v.push_back(member<&R::module_calls_counted, C>("module_calls_counted", "",
                                                    "true: counted from XlaModule ranges; false: estimated"));
    v.push_back(member<&R::flops, C>("flops", "FLOP", "estimated ops, whole trace"));
    v.push_back(member<&R::bytes, C>("bytes", "bytes", "estimated ops, whole trace"));
    v.push_back(member<&R::random_access_bytes, C>(
        "random_access_bytes", "bytes",
        "card traffic of its ops' data-dependent accesses (gathers, scatters) as compiled"));
    v.push_back(member<&R::memory_efficiency, C>(
        "memory_efficiency", "fraction",
        "card traffic / (card_memory_s x the card's memory peak): its ops' efficiencies weighted by their bytes"));
    v.push_back(member<&R::card_compute_s, C>("card_compute_s", "s", "sum over estimated ops"));
    v.push_back(member<&R::card_memory_s, C>("card_memory_s", "s", "sum over estimated ops"));
    v.push_back(member<&R::card_latency_s, C>("card_latency_s", "s", "module_calls x call latency"));
    v.push_back(member<&R::kept_gpu_s, C>("kept_gpu_s", "s", "GPU time of the kernels not estimated (kept as is)"));
    v.push_back(range_members<&R::card_time_s, &R::card_time_low_s, &R::card_time_high_s, C>(
        "card_time_s", "s", "ops + latency + kept, whole trace"));
    v.push_back(member<&R::transfer_bytes, C>(
        "transfer_bytes", "bytes",
        "module_calls x module parameters + results (none with the data on the card), + handoff_bytes"));
    v.push_back(member<&R::handoff_bytes, C>(
        "handoff_bytes", "bytes",
        "what the ops kept on the GPU hand to and take from the card's ops of their modules, over the host link "
        "(with the data on the card, also the module arguments and results they read and give)"));
    v.push_back(range_members<&R::transfer_s, &R::transfer_low_s, &R::transfer_high_s, C>(
        "transfer_s", "s", "host-link time of transfer_bytes"));
    v.push_back(range_members<&R::fpga_total_s, &R::fpga_total_low_s, &R::fpga_total_high_s, C>(
        "fpga_total_s", "s", "card_time_s + transfer_s"));
    v.push_back(range_members<&R::region_speedup, &R::region_speedup_low, &R::region_speedup_high, C>(
        "region_speedup", "x", "gpu_time / fpga_total"));
    v.push_back(range_members<&R::workload_speedup, &R::workload_speedup_low, &R::workload_speedup_high, C>(
        "workload_speedup", "x", "the workload's speedup with this region on the card (Amdahl)"));
    v.push_back(
        range_members<&R::restructured_card_time_s, &R::restructured_card_time_low_s, &R::restructured_card_time_high_s,
                      C>("restructured_card_time_s", "s", kRestructuredCardTime));
    v.push_back(energy_member<&R::card_energy_j, C>("card_energy_j", kRegionCardEnergy));
    v.push_back(
        energy_member<&R::restructured_card_energy_j, C>("restructured_card_energy_j", kRegionRestructuredCardEnergy));
    push_energy_comparison(v, kRegionGpuEnergy, kRegionGpuEnergyCoverage, kRegionEnergyRatio,
                           kRegionRestructuredEnergyRatio);
    v.push_back(computed<R, C>("kept_gpu_energy_j", VT::kFloat, true, "J", kRegionKeptGpuEnergy,
                               [](const R& r, const C&) { return nan_null(r.kept_gpu_energy_j); }));
    v.push_back(member<&R::restructured_fpga_total_s, C>("restructured_fpga_total_s", "s",
                                                         "restructured_card_time_s + transfer_s"));
    v.push_back(range_members<&R::restructured_region_speedup, &R::restructured_region_speedup_low,
                              &R::restructured_region_speedup_high, C>(
        "restructured_region_speedup", "x",
        "region_speedup of the restructured design: the better of each op restructured and the region's ops as one "
        "dataflow design"));
    v.push_back(member<&R::scenario, C>("scenario", "", kScenario));
    v.push_back(member<&R::verdict, C>("verdict", "", kVerdict));
    v.push_back(member<&R::energy_verdict, C>("energy_verdict", "", kEnergyVerdict));
    v.push_back(
        member<&R::restructured_energy_verdict, C>("restructured_energy_verdict", "", kRestructuredEnergyVerdict));
    v.push_back(member<&R::could_save_ns, C>("could_save_ns", "ns",
                                             "the GPU time offloading could save at the fast end of its range (all "
                                             "of its GPU time when not estimated): the ranking key"));
    v.push_back(member<&R::restructured_basis, C>("restructured_basis", "", kRestructuredBasis));
    v.push_back(computed<R, C>(
        "restructured_structure_dependent", VT::kBool, true, "", kStructureDependent,
        [](const R& r, const C&) { return r.estimated ? FieldValue{r.restructured_structure_dependent} : none(); }));
    return v;
  }();
  return t;
}

const ResultTable<FpgaReport, NoContext>& fpga_report_fields() {
  using R = FpgaReport;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(nested_rows<R, C>("target", VT::kObject, false, "the card as the model saw it (fpga_target)",
                                  [](const R& r, const C&, ResultWriter& w) { write_card(r.target, w); }));
    v.push_back(member<&R::workload_ns, C>("workload_ns", "ns", "the workload's wall time the speedups are over"));
    v.push_back(member<&R::gpu_kernel_ns, C>("gpu_kernel_ns", "ns", "all kernels' time"));
    v.push_back(member<&R::combined_speedup, C>(
        "combined_speedup", "x", "every op that gains as compiled (op_speedup > 1) moved to the card together"));
    v.push_back(member<&R::combined_count, C>("combined_count", "", "the ops in combined_speedup"));
    v.push_back(member<&R::combined_speedup_low, C>("combined_speedup_low", "x",
                                                    "the same ops at the slow ends of their ranges"));
    v.push_back(member<&R::combined_speedup_high, C>("combined_speedup_high", "x",
                                                     "the same ops at the fast ends of their ranges"));
    v.push_back(member<&R::restructured_combined_speedup, C>(
        "restructured_combined_speedup", "x", "every op whose restructured design gains, moved together"));
    v.push_back(member<&R::restructured_combined_count, C>("restructured_combined_count", "",
                                                           "the ops in restructured_combined_speedup"));
    v.push_back(member<&R::not_estimated_count, C>("not_estimated_count", "",
                                                   "candidates without an estimate (not in the combined speedups)"));
    v.push_back(member<&R::not_estimated_gpu_ns, C>("not_estimated_gpu_ns", "ns", "their GPU time"));
    v.push_back(member<&R::bounded_count, C>(
        "bounded_count", "",
        "of the not estimated ops, those with a bound (estimate_basis 'measured bound' or 'operand bound')"));
    v.push_back(member<&R::ruled_out_count, C>(
        "ruled_out_count", "",
        "of the bounded ops, those whose upper-bound speedups stay under 1 even at the fast ends (scenario 'neither')"));
    v.push_back(member<&R::ruled_out_gpu_ns, C>("ruled_out_gpu_ns", "ns", "their GPU time"));
    v.push_back(computed<R, C>("row_imbalance", VT::kFloat, true, "x", kRowImbalanceGiven, [](const R& r, const C&) {
      return r.row_imbalance >= 1 ? FieldValue{r.row_imbalance} : none();
    }));
    return v;
  }();
  return t;
}

const ResultTable<StaticOpEstimate, NoContext>& module_estimate_op_fields() {
  using R = StaticOpEstimate;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::op, C>("op", "", "the instruction"));
    v.push_back(member<&R::computation, C>("computation", "", "its computation"));
    v.push_back(member<&R::opcode, C>("opcode", "", "its HLO opcode"));
    v.push_back(computed<R, C>(
        "pattern", VT::kString, false, "", "access pattern (hlo::access_pattern_name)",
        [](const R& r, const C&) { return FieldValue{std::string(hlo::access_pattern_name(r.pattern))}; }));
    v.push_back(
        computed<R, C>("precision", VT::kString, false, "", "the precision it runs at on the card",
                       [](const R& r, const C&) { return FieldValue{std::string(precision_name(r.precision))}; }));
    v.push_back(member<&R::source, C>("source", "", "\"file:line\" or ''"));
    v.push_back(member<&R::executions, C>("executions", "", "product of the trip counts around it"));
    v.push_back(member<&R::estimated, C>("estimated", "", "the cost model has a rule for it"));
    v.push_back(member<&R::flops, C>("flops", "FLOP", "all executions (static cost model)"));
    v.push_back(member<&R::bytes, C>("bytes", "bytes", "all executions (static cost model)"));
    v.push_back(member<&R::stream_bytes, C>("stream_bytes", "bytes", "card traffic that streams, all executions"));
    v.push_back(member<&R::random_bytes, C>("random_bytes", "bytes",
                                            "card traffic of data-dependent accesses, all executions"));
    v.push_back(member<&R::compulsory_bytes, C>("compulsory_bytes", "bytes",
                                                "the restructured design's traffic, all executions"));
    v.push_back(member<&R::memory_efficiency, C>("memory_efficiency", "fraction", kMemoryEfficiency));
    v.push_back(member<&R::card_limit, C>("card_limit", "", kCardLimit));
    v.push_back(range_member<&R::card_compute_s, C>("card_compute_s", "s", "compute time on the card"));
    v.push_back(range_member<&R::card_memory_s, C>("card_memory_s", "s", "memory time on the card"));
    v.push_back(computed<R, C>("card_latency_s", VT::kFloat, false, "s",
                               "0: the module's one launch is counted once, in call_latency_s",
                               [](const R&, const C&) { return FieldValue{0.0}; }));
    v.push_back(range_member<&R::card_time_s, C>("card_time_s", "s", "time on the card as compiled"));
    v.push_back(range_member<&R::restructured_time_s, C>("restructured_card_time_s", "s",
                                                         "card time of the restructured design"));
    v.push_back(energy_member<&R::card_energy_j, C>("card_energy_j", kCardEnergy));
    v.push_back(
        energy_member<&R::restructured_card_energy_j, C>("restructured_card_energy_j", kRestructuredCardEnergy));
    v.push_back(
        computed<R, C>("restructured_onchip", VT::kBool, true, "",
                       "the restructured design serves its data-dependent accesses on chip (null when not "
                       "estimated)",
                       [](const R& r, const C&) { return r.estimated ? FieldValue{r.restructured_onchip} : none(); }));
    v.push_back(member<&R::estimate_note, C>("estimate_note", "", "empty, or why it is not estimated"));
    v.push_back(member<&R::restructured_basis, C>("restructured_basis", "", kRestructuredBasis));
    v.push_back(computed<R, C>(
        "restructured_structure_dependent", VT::kBool, true, "", kStructureDependent,
        [](const R& r, const C&) { return r.estimated ? FieldValue{r.restructured_structure_dependent} : none(); }));
    return v;
  }();
  return t;
}

const ResultTable<ModuleEstimate, NoContext>& module_estimate_fields() {
  using R = ModuleEstimate;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::module, C>("module", "", "the HLO module"));
    v.push_back(nested_rows<R, C>("target", VT::kObject, false, "the card as the model saw it (fpga_target)",
                                  [](const R& r, const C&, ResultWriter& w) { write_card(r.target, w); }));
    v.push_back(range_member<&R::card_time_s, C>("card_time_s", "s",
                                                 "everything on the card, data resident, one launch, as compiled"));
    v.push_back(range_member<&R::restructured_card_time_s, C>(
        "restructured_card_time_s", "s",
        "the better of each op restructured alone and the function as one dataflow design"));
    v.push_back(energy_member<&R::card_energy_j, C>("card_energy_j", kCardEnergy));
    v.push_back(
        energy_member<&R::restructured_card_energy_j, C>("restructured_card_energy_j", kRestructuredCardEnergy));
    v.push_back(
        range_member<&R::call_latency_s, C>("call_latency_s", "s", "the one launch (included in the card times)"));
    v.push_back(member<&R::transfer_bytes, C>("transfer_bytes", "bytes",
                                              "arguments to the card and results back over the host link"));
    v.push_back(member<&R::transfer_buffers, C>("transfer_buffers", "", "arrays that is (one transfer each)"));
    v.push_back(range_member<&R::transfer_s, C>("transfer_s", "s", "host-link time of transfer_bytes"));
    v.push_back(range_member<&R::total_s, C>("total_s", "s", "card_time_s + transfer_s"));
    v.push_back(range_member<&R::restructured_total_s, C>("restructured_total_s", "s",
                                                          "restructured_card_time_s + transfer_s"));
    v.push_back(member<&R::not_estimated_count, C>("not_estimated_count", "", "ops without a cost (in no time above)"));
    v.push_back(member<&R::unsupported_count, C>("unsupported_count", "",
                                                 "ops in a precision the card cannot run (in no time above: as "
                                                 "compiled the function cannot run on the card)"));
    v.push_back(computed<R, C>("row_imbalance", VT::kFloat, true, "x", kRowImbalanceGiven, [](const R& r, const C&) {
      return r.row_imbalance >= 1 ? FieldValue{r.row_imbalance} : none();
    }));
    v.push_back(member<&R::notes, C>("notes", "", "unknown trip counts, custom calls, ..."));
    v.push_back(nested_rows<R, C>(
        "ops", VT::kObjectList, false, "one row per op (module_estimate_op), program order",
        [](const R& r, const C& c, ResultWriter& w) { write_rows(module_estimate_op_fields(), r.ops, c, w); }));
    return v;
  }();
  return t;
}

const ResultTable<RooflinePoint, NoContext>& roofline_point_fields() {
  using R = RooflinePoint;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    const auto measured = [](const R& r, const C&) { return r.has_measured; };
    constexpr const char* kMeasured = "has_measured";
    ResultTable<R, C> v;
    v.push_back(member<&R::kernel_count, C>("kernel_count", "", "its kernels"));
    v.push_back(member<&R::executions, C>("executions", "", "executions of its ops"));
    v.push_back(member<&R::time_ns, C>("time_ns", "ns", "sum of kernel durations"));
    v.push_back(computed<R, C>("time_s", VT::kFloat, false, "s", "time_ns in seconds",
                               [](const R& r, const C&) { return FieldValue{static_cast<double>(r.time_ns) * 1e-9}; }));
    v.push_back(computed<R, C>("mean_kernel_ns", VT::kFloat, false, "ns", "time_ns / kernels that have a duration",
                               [](const R& r, const C&) { return FieldValue{r.mean_kernel_ns()}; }));
    v.push_back(member<&R::mean_blocks, C>("mean_blocks", "", "mean grid size (blocks) of its kernels"));
    v.push_back(member<&R::flops, C>("flops", "FLOP", "static, whole trace"));
    v.push_back(member<&R::bytes, C>("bytes", "bytes", "static, whole trace"));
    v.push_back(member<&R::cost_coverage, C>("cost_coverage", "fraction",
                                             "share of time_ns spent in kernels with a known cost"));
    v.push_back(member<&R::intensity, C>("intensity", "FLOP/byte", "static arithmetic intensity"));
    v.push_back(member<&R::achieved_flops_per_s, C>("achieved_flops_per_s", "FLOP/s", "flops / time"));
    v.push_back(member<&R::lower_bound_bytes, C>(
        "lower_bound_bytes", "bytes",
        "kernels of ops without a static cost: their operands and results alone (a lower bound); 0 when none"));
    v.push_back(computed<R, C>("lower_bound_bytes_per_s", VT::kFloat, true, "bytes/s",
                               "lower_bound_bytes over those kernels' time (null when none)", [](const R& r, const C&) {
                                 return r.lower_bound_bytes_per_s > 0 ? FieldValue{r.lower_bound_bytes_per_s} : none();
                               }));
    v.push_back(member<&R::achieved_bytes_per_s, C>("achieved_bytes_per_s", "bytes/s", "bytes / time"));
    v.push_back(
        computed<R, C>("precision", VT::kString, false, "", "the roof used (ceilings' effective precision)",
                       [](const R& r, const C&) { return FieldValue{std::string(precision_name(r.precision))}; }));
    v.push_back(
        member<&R::roof_flops_per_s, C>("roof_flops_per_s", "FLOP/s", "min(peak FLOP/s, intensity x DRAM bandwidth)"));
    v.push_back(member<&R::ridge_flops_per_byte, C>("ridge_flops_per_byte", "FLOP/byte", "the ridge point"));
    v.push_back(member<&R::percent_of_roof, C>("percent_of_roof", "percent",
                                               "achieved / roof (bandwidth / DRAM peak when flops = 0)"));
    v.push_back(computed<R, C>("bound", VT::kString, false, "", "compute, memory, latency or unknown",
                               [](const R& r, const C&) { return FieldValue{std::string(bound_name(r.bound))}; }));
    v.push_back(
        member<&R::has_measured, C>("has_measured", "", "hardware counters covered at least one of its kernels"));
    v.push_back(only_when(member<&R::measured_kernel_count, C>("measured_kernel_count", "", "kernels with counters"),
                          kMeasured, +measured));
    v.push_back(only_when(member<&R::measured_time_ns, C>("measured_time_ns", "ns", "sum of their durations"),
                          kMeasured, +measured));
    v.push_back(
        only_when(member<&R::measured_coverage, C>("measured_coverage", "fraction", "measured_time_ns / time_ns"),
                  kMeasured, +measured));
    v.push_back(only_when(member<&R::measured_flops, C>("measured_flops", "FLOP", "of the covered kernels"), kMeasured,
                          +measured));
    v.push_back(
        only_when(member<&R::measured_bytes, C>("measured_bytes", "bytes", "DRAM read + write of the covered kernels"),
                  kMeasured, +measured));
    v.push_back(only_when(
        member<&R::measured_intensity, C>("measured_intensity", "FLOP/byte", "measured_flops / measured_bytes"),
        kMeasured, +measured));
    v.push_back(only_when(member<&R::measured_percent_of_roof, C>("measured_percent_of_roof", "percent",
                                                                  "rate over measured_time_ns against the roof"),
                          kMeasured, +measured));
    v.push_back(only_when(
        computed<R, C>("measured_bound", VT::kString, false, "",
                       "bound from the covered kernels' sums, mean duration and grid",
                       [](const R& r, const C&) { return FieldValue{std::string(bound_name(r.measured_bound))}; }),
        kMeasured, +measured));
    return v;
  }();
  return t;
}

const ResultTable<TransferStats, NoContext>& transfer_stats_fields() {
  using R = TransferStats;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::count, C>("count", "", "copies"));
    v.push_back(member<&R::bytes, C>("bytes", "bytes", "bytes copied"));
    v.push_back(member<&R::busy_ns, C>("busy_ns", "ns", "union of the copies' intervals"));
    v.push_back(member<&R::duration_sum_ns, C>("duration_sum_ns", "ns", "sum of the copies' durations"));
    v.push_back(member<&R::kernel_overlap_ns, C>("kernel_overlap_ns", "ns", "copy time overlapping kernels"));
    v.push_back(member<&R::pinned_count, C>("pinned_count", "", "copies from or to pinned host memory"));
    v.push_back(member<&R::pageable_count, C>("pageable_count", "", "copies from or to pageable host memory"));
    v.push_back(member<&R::pageable_bytes, C>("pageable_bytes", "bytes", "their bytes"));
    v.push_back(member<&R::sync_count, C>("sync_count", "", "synchronous copies"));
    v.push_back(member<&R::async_count, C>("async_count", "", "asynchronous copies"));
    v.push_back(member<&R::tiny_count, C>("tiny_count", "", "copies under the tiny-copy size"));
    v.push_back(member<&R::timed_bytes, C>("timed_bytes", "bytes", "bytes of the copies with a duration"));
    v.push_back(computed<R, C>("achieved_bytes_per_s", VT::kFloat, false, "bytes/s", "timed_bytes / busy time",
                               [](const R& r, const C&) { return FieldValue{r.achieved_bytes_per_s()}; }));
    v.push_back(member<&R::link_bytes, C>(
        "link_bytes", "bytes",
        "bytes of HtoD or DtoH copies whose link peak is known (0 for other directions and all)"));
    v.push_back(member<&R::link_capacity_bytes, C>(
        "link_capacity_bytes", "bytes",
        "what the link could have moved in their busy time (0 for other directions and all)"));
    return v;
  }();
  return t;
}

namespace {
template <class R, class C>
std::vector<FieldInfo> infos(const ResultTable<R, C>& t) {
  std::vector<FieldInfo> out;
  out.reserve(t.size());
  for (const auto& f : t) out.push_back(f.info);
  return out;
}
}  // namespace

const std::vector<ResultTableInfo>& result_tables() {
  static const std::vector<ResultTableInfo> t = {
      {"trace_analysis", "analyze(store, ...): the whole analysis of a trace", infos(trace_analysis_fields())},
      {"devices", "devices: per-device rows and their balance", infos(devices_fields())},
      {"fpga_op_row", "fpga.candidates[]: one HLO op ranked as an FPGA offload candidate", infos(fpga_op_row_fields())},
      {"fpga_region_row", "fpga.regions[]: one region path ranked as an offload unit", infos(fpga_region_row_fields())},
      {"fpga_report", "fpga: the ranking's totals and combined speedups", infos(fpga_report_fields())},
      {"module_estimate_op", "estimate_hlo(...).ops[]: one op of a module on a card, no trace",
       infos(module_estimate_op_fields())},
      {"module_estimate", "estimate_hlo(...): a module's totals on a card", infos(module_estimate_fields())},
      {"roofline_point", "roofline.trace / ops[] / regions[] / kernels[]: one roofline point's measures",
       infos(roofline_point_fields())},
      {"transfer_stats", "transfers.groups[].all and .directions[*]: a group's copies", infos(transfer_stats_fields())},
      {"trace_totals", "totals: busy-time unions and record counts", infos(trace_totals_fields())},
      {"kernel_name_row", "kernels_by_name[]: one kernel name's durations", infos(kernel_name_row_fields())},
      {"kernel_name_module_row", "kernels_by_name[].modules[]: one module's launches of the name",
       infos(kernel_name_module_row_fields())},
      {"collectives", "collectives: collective kernels against compute", infos(collectives_fields())},
      {"collective_kind_row", "collectives.by_kind[]", infos(collective_kind_row_fields())},
      {"memory", "memory: the allocation analysis' totals", infos(memory_fields())},
      {"device_memory_row", "memory.devices[]", infos(device_memory_row_fields())},
      {"buffer_row", "memory.largest[]: one of the largest allocations", infos(buffer_row_fields())},
      {"module_memory", "module_memory[]: one HLO module's memory over its schedule", infos(module_memory_fields())},
      {"module_buffer", "module_memory[].buffers[] / live_at_peak[]", infos(module_buffer_fields())},
      {"onchip_need", "onchip_need(...): what one instruction needs on chip", infos(onchip_need_fields())},
      {"load_balance", "devices.balance: load balance over the devices", infos(load_balance_fields())},
      {"energy", "energy: the totals", infos(energy_fields())},
      {"energy_device_row", "energy.devices[]", infos(energy_device_row_fields())},
      {"energy_window", "energy.region_paths[] / regions[]: one window's energy", infos(energy_window_fields())},
      {"energy_op_row", "energy.ops[]", infos(energy_op_row_fields())},
      {"region_path_row", "region_paths[]: one region path's GPU time", infos(region_path_row_fields())},
      {"region_memory_row", "memory.regions[] (one per region record)", infos(region_memory_row_fields())},
      {"region_path_memory_row", "memory.regions[] (one per region path)", infos(region_path_memory_row_fields())},
      {"device_row", "devices.rows[]: one device", infos(device_row_fields())},
      {"device_row_memory", "devices.rows[].memory", infos(device_row_memory_fields())},
      {"device_copy_stats", "devices.rows[].directions[*]", infos(device_copy_stats_fields())},
      {"device_thread_row", "devices.rows[].threads[]", infos(device_thread_row_fields())},
      {"roofline", "roofline: the points by op, region and kernel name", infos(roofline_fields())},
      {"roofline_op_keys", "roofline.ops[]: the op (then roofline_point)", infos(roofline_op_keys_fields())},
      {"region_instance_keys", "a per-record region row's keys (then its values)",
       infos(region_instance_keys_fields())},
      {"region_path_keys", "a per-path region row's keys (then its values)", infos(region_path_keys_fields())},
      {"roofline_kernel_keys", "roofline.kernels[]: the kernel name (then roofline_point)",
       infos(roofline_kernel_keys_fields())},
      {"transfers", "transfers: copies by group, and their problems", infos(transfers_fields())},
      {"transfer_group_row", "transfers.groups[]: the trace, a region or an op", infos(transfer_group_row_fields())},
      {"transfer_directions", "transfers.groups[].directions: per direction with copies",
       infos(transfer_directions_fields())},
      {"transfer_direction_link", "transfers.groups[].directions[HtoD|DtoH]: after transfer_stats",
       infos(transfer_direction_link_fields())},
      {"device_directions", "devices.rows[].directions: per direction with copies", infos(device_directions_fields())},
      {"energy_path_keys", "energy.region_paths[]: the path (after energy_window)", infos(energy_path_keys_fields())},
      {"energy_instance_keys", "energy.regions[]: the region record (after energy_window)",
       infos(energy_instance_keys_fields())},
      {"ceilings", "table_ceilings(...), ceilings, devices.rows[].ceilings: one device's roofs",
       infos(ceilings_fields())},
      {"ceiling_peaks", "ceilings.peak_flops_per_s: per precision", infos(ceiling_peak_fields())},
      {"ceiling_sources", "ceilings.flops_source: per precision", infos(ceiling_source_fields())},
      {"trace_meta", "TraceStore.meta: the trace's metadata", infos(trace_meta_fields())},
      {"device_info", "DeviceInfo.to_dict(): one GPU as the capture saw it", infos(device_info_fields())},
      {"correlation_stats", "TraceStore.correlate(): what was left unmatched", infos(correlation_stats_fields())},
      {"diagnostic", "TraceStore.diagnostics[], analyze()'s warnings[]: one diagnostic record",
       infos(diagnostic_fields())},
      {"diagnostic_code", "diagnostic_codes()[]: one code of the table", infos(diagnostic_code_fields())},
      {"xla_range_name", "attribution.parse_xla_range_name(text)", infos(xla_range_name_fields())},
      {"card_field", "card_fields()[]: one field of the card table", infos(card_field_fields())},
      {"attribution_method_counts", "AttributionResult.count_by_method: kernels per method",
       infos(attribution_method_counts_fields())},
      {"transfer_flag_row", "transfers.flags[]: a transfer problem, cause and fix", infos(transfer_flag_row_fields())},
  };
  return t;
}

}  // namespace fpgaprof::analysis

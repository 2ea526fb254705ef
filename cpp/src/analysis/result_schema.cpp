// The result tables of result_schema.hpp: every field of the FPGA rankings, the module estimate,
// the roofline points and the transfer statistics, in the order the Python dicts have them.
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
constexpr const char* kMemoryEfficiency =
    "bytes the card moves as compiled / (card_memory_s x the card's memory peak), nominal";
constexpr const char* kCardLimit =
    "what bounds the card time as compiled at nominal constants: compute, memory, random access, sort, on-chip "
    "access ('' when not estimated)";

}  // namespace

const ResultTable<FpgaCandidate, FpgaOpRowContext>& fpga_op_row_fields() {
  using R = FpgaCandidate;
  using C = FpgaOpRowContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(computed<R, C>("rank", VT::kInt, false, "", "1-based position in the ranking",
                               [](const R&, const C& c) { return FieldValue{uint64_t{c.rank}}; }));
    v.push_back(member<&R::name, C>("op", "", "the HLO instruction"));
    v.push_back(member<&R::module, C>("module", "", "its HLO module"));
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
    v.push_back(member<&R::restructured_fpga_total_s, C>("restructured_fpga_total_s", "s",
                                                         "restructured_card_time_s + transfer_s"));
    v.push_back(
        range_members<&R::restructured_op_speedup, &R::restructured_op_speedup_low, &R::restructured_op_speedup_high,
                      C>("restructured_op_speedup", "x", "op_speedup of the restructured design"));
    v.push_back(member<&R::restructured_workload_speedup, C>("restructured_workload_speedup", "x",
                                                             "workload_speedup of the restructured design"));
    v.push_back(member<&R::scenario, C>("scenario", "", kScenario));
    v.push_back(member<&R::verdict, C>("verdict", "", kVerdict));
    v.push_back(member<&R::could_save_ns, C>("could_save_ns", "ns", kCouldSave));
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
    v.push_back(member<&R::transfer_bytes, C>("transfer_bytes", "bytes", "module_calls x module parameters + results"));
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
    v.push_back(member<&R::restructured_fpga_total_s, C>("restructured_fpga_total_s", "s",
                                                         "restructured_card_time_s + transfer_s"));
    v.push_back(range_members<&R::restructured_region_speedup, &R::restructured_region_speedup_low,
                              &R::restructured_region_speedup_high, C>(
        "restructured_region_speedup", "x",
        "region_speedup of the restructured design: the better of each op restructured and the region's ops as one "
        "dataflow design"));
    v.push_back(member<&R::scenario, C>("scenario", "", kScenario));
    v.push_back(member<&R::verdict, C>("verdict", "", kVerdict));
    v.push_back(member<&R::could_save_ns, C>("could_save_ns", "ns",
                                             "the GPU time offloading could save at the fast end of its range (all "
                                             "of its GPU time when not estimated): the ranking key"));
    return v;
  }();
  return t;
}

const ResultTable<FpgaReport, NoContext>& fpga_report_fields() {
  using R = FpgaReport;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(nested<R, C>("target", VT::kObject, false, "the card as the model saw it (fpga_target)"));
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
    v.push_back(
        computed<R, C>("restructured_onchip", VT::kBool, true, "",
                       "the restructured design serves its data-dependent accesses on chip (null when not "
                       "estimated)",
                       [](const R& r, const C&) { return r.estimated ? FieldValue{r.restructured_onchip} : none(); }));
    v.push_back(member<&R::estimate_note, C>("estimate_note", "", "empty, or why it is not estimated"));
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
    v.push_back(nested<R, C>("target", VT::kObject, false, "the card as the model saw it (fpga_target)"));
    v.push_back(range_member<&R::card_time_s, C>("card_time_s", "s",
                                                 "everything on the card, data resident, one launch, as compiled"));
    v.push_back(range_member<&R::restructured_card_time_s, C>(
        "restructured_card_time_s", "s",
        "the better of each op restructured alone and the function as one dataflow design"));
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
    v.push_back(member<&R::notes, C>("notes", "", "unknown trip counts, custom calls, ..."));
    v.push_back(nested<R, C>("ops", VT::kObjectList, false, "one row per op (module_estimate_op), program order"));
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
    v.push_back(computed<R, C>("mean_kernel_ns", VT::kFloat, false, "ns", "time_ns / kernel_count",
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
    v.push_back(computed<R, C>("achieved_bytes_per_s", VT::kFloat, false, "bytes/s", "bytes / busy time",
                               [](const R& r, const C&) { return FieldValue{r.achieved_bytes_per_s()}; }));
    v.push_back(member<&R::link_bytes, C>("link_bytes", "bytes", "bytes of copies whose link peak is known"));
    v.push_back(member<&R::link_capacity_bytes, C>("link_capacity_bytes", "bytes",
                                                   "what the link could have moved in their busy time"));
    return v;
  }();
  return t;
}

const ResultTable<GpuBusyTime, NoContext>& trace_totals_fields() {
  using R = GpuBusyTime;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::kernel_count, C>("kernel_count", "", "kernel records"));
    v.push_back(member<&R::kernel_time_ns, C>("kernel_time_ns", "ns", "sum of kernel durations"));
    v.push_back(member<&R::kernel_busy_ns, C>("kernel_busy_ns", "ns", "union of the kernels' intervals"));
    v.push_back(member<&R::copy_count, C>("copy_count", "", "copy records"));
    v.push_back(member<&R::copy_bytes, C>("copy_bytes", "bytes", "sum of the copies' bytes"));
    v.push_back(member<&R::copy_busy_ns, C>("copy_busy_ns", "ns", "union of the copies' intervals"));
    v.push_back(member<&R::memset_count, C>("memset_count", "", "memset records"));
    v.push_back(member<&R::memset_busy_ns, C>("memset_busy_ns", "ns", "union of the memsets' intervals"));
    v.push_back(member<&R::busy_ns, C>("gpu_busy_ns", "ns", "union of kernels, copies and memsets together"));
    return v;
  }();
  return t;
}

const ResultTable<KernelNameStats, TraceContext>& kernel_name_row_fields() {
  using R = KernelNameStats;
  using C = TraceContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(computed<R, C>("kernel", VT::kString, false, "", "the kernel name", [](const R& r, const C& c) {
      return FieldValue{std::string(c.store->strings.get(r.name))};
    }));
    v.push_back(member<&R::count, C>("count", "", "launches"));
    v.push_back(member<&R::total_ns, C>("total_ns", "ns", "sum of durations"));
    v.push_back(member<&R::min_ns, C>("min_ns", "ns", "shortest"));
    v.push_back(member<&R::max_ns, C>("max_ns", "ns", "longest"));
    return v;
  }();
  return t;
}

const ResultTable<CollectiveReport, NoContext>& collectives_fields() {
  using R = CollectiveReport;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::kernel_count, C>("kernel_count", "", "collective kernels"));
    v.push_back(member<&R::kernel_ns, C>("kernel_ns", "ns", "their summed durations"));
    v.push_back(member<&R::busy_ns, C>("busy_ns", "ns", "union of their intervals"));
    v.push_back(member<&R::compute_busy_ns, C>("compute_busy_ns", "ns", "union of the other kernels' intervals"));
    v.push_back(
        member<&R::overlap_ns, C>("overlap_ns", "ns", "time covered by both unions (communication hidden by compute)"));
    v.push_back(
        nested<R, C>("by_kind", VT::kObjectList, false, "one row per kind (collective_kind_row), most time first"));
    v.push_back(member<&R::first_end_ns, C>("first_end_ns", "ns", "end times of the first collective kernels"));
    return v;
  }();
  return t;
}

const ResultTable<CollectiveKindStats, NoContext>& collective_kind_row_fields() {
  using R = CollectiveKindStats;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::kind, C>("kind", "", "the collective (all-reduce, all-gather, ...)"));
    v.push_back(member<&R::count, C>("count", "", "its kernels"));
    v.push_back(member<&R::total_ns, C>("total_ns", "ns", "sum of their durations"));
    return v;
  }();
  return t;
}

const ResultTable<MemoryReport, NoContext>& memory_fields() {
  using R = MemoryReport;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::peak_in_use_bytes, C>("peak_in_use_bytes", "bytes", "all devices together"));
    v.push_back(member<&R::peak_ns, C>("peak_ns", "ns", "when that peak was reached"));
    v.push_back(member<&R::allocation_count, C>("allocation_count", "", "allocations"));
    v.push_back(member<&R::free_count, C>("free_count", "", "frees"));
    v.push_back(
        member<&R::unmatched_frees, C>("unmatched_frees", "", "releases of an address not allocated in the trace"));
    v.push_back(member<&R::unmatched_free_bytes, C>("unmatched_free_bytes", "bytes", "their bytes"));
    v.push_back(member<&R::reallocated_live, C>("reallocated_live", "",
                                                "allocations at a live address (the previous one dropped)"));
    v.push_back(member<&R::never_freed_count, C>("never_freed_count", "", "allocations still live at the end"));
    v.push_back(member<&R::never_freed_bytes, C>("never_freed_bytes", "bytes", "their bytes"));
    v.push_back(nested<R, C>("timeline_ns", VT::kIntList, false, "time of each matched allocation or free"));
    v.push_back(nested<R, C>("timeline_in_use_bytes", VT::kIntList, false, "bytes in use after it, all devices"));
    v.push_back(nested<R, C>("timeline_device_id", VT::kIntList, false, "its device"));
    v.push_back(
        nested<R, C>("timeline_device_in_use_bytes", VT::kIntList, false, "bytes in use on that device after it"));
    v.push_back(nested<R, C>("devices", VT::kObjectList, false, "one row per device (device_memory_row)"));
    v.push_back(nested<R, C>("largest", VT::kObjectList, false, "the largest allocations (buffer_row), largest first"));
    v.push_back(nested<R, C>("regions", VT::kObjectList, false, "per region record or per region path"));
    return v;
  }();
  return t;
}

const ResultTable<DeviceMemory, NoContext>& device_memory_row_fields() {
  using R = DeviceMemory;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::device_id, C>("device_id", "", "the device"));
    v.push_back(member<&R::peak_in_use_bytes, C>("peak_in_use_bytes", "bytes", "its highest level"));
    v.push_back(member<&R::peak_ns, C>("peak_ns", "ns", "when"));
    v.push_back(member<&R::final_in_use_bytes, C>("final_in_use_bytes", "bytes", "its level at the end"));
    return v;
  }();
  return t;
}

const ResultTable<BufferInfo, TraceContext>& buffer_row_fields() {
  using R = BufferInfo;
  using C = TraceContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::bytes, C>("bytes", "bytes", "its size"));
    v.push_back(member<&R::address, C>("address", "", "device address"));
    v.push_back(member<&R::alloc_ns, C>("alloc_ns", "ns", "when it was allocated"));
    v.push_back(
        computed<R, C>("free_ns", VT::kInt, true, "ns", "when it was freed (null: still allocated at the end)",
                       [](const R& r, const C&) { return r.free_ns == kNone64 ? none() : FieldValue{r.free_ns}; }));
    v.push_back(member<&R::device_id, C>("device_id", "", "the device"));
    v.push_back(member<&R::thread_id, C>("thread_id", "", "the allocating thread"));
    v.push_back(computed<R, C>("region", VT::kString, true, "",
                               "the region path (\"outer > inner\") it was allocated in", [](const R& r, const C& c) {
                                 const uint32_t p = c.paths->path_of(r.region_index);
                                 return p != kNone32 ? FieldValue{c.paths->path(p)} : none();
                               }));
    v.push_back(
        computed<R, C>("api_call", VT::kString, true, "", "the allocating API function", [](const R& r, const C& c) {
          const TraceStore& s = *c.store;
          return r.api_index < s.api_calls.size()
                     ? FieldValue{std::string(s.strings.get(s.api_function_of(s.api_calls[r.api_index]).name))}
                     : none();
        }));
    return v;
  }();
  return t;
}

const ResultTable<ModuleMemory, NoContext>& module_memory_fields() {
  using R = ModuleMemory;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::module, C>("module", "", "the HLO module"));
    v.push_back(member<&R::module_index, C>("module_index", "", "into the trace's HLO modules"));
    v.push_back(member<&R::program_id, C>("program_id", "", "XLA program id (-1 unknown)"));
    v.push_back(member<&R::peak_source, C>(
        "peak_source", "", "'xla live ranges' (the peak over the schedule) or 'allocation sizes' (an upper bound)"));
    v.push_back(member<&R::peak_bytes, C>("peak_bytes", "bytes", "the module's peak"));
    v.push_back(member<&R::peak_position, C>("peak_position", "",
                                             "first schedule position at the peak (-1 without live ranges)"));
    v.push_back(
        member<&R::peak_instruction, C>("peak_instruction", "", "the instruction there ('' at the schedule's end)"));
    v.push_back(member<&R::xla_peak_bytes, C>("xla_peak_bytes", "bytes", "XLA's own live-range peak (0 absent)"));
    v.push_back(member<&R::parameter_bytes, C>("parameter_bytes", "bytes", "parameters"));
    v.push_back(member<&R::output_bytes, C>("output_bytes", "bytes", "outputs"));
    v.push_back(member<&R::temporary_bytes, C>("temporary_bytes", "bytes", "temporaries"));
    v.push_back(member<&R::constant_bytes, C>("constant_bytes", "bytes", "constants"));
    v.push_back(member<&R::thread_local_bytes, C>("thread_local_bytes", "bytes", "thread-local allocations"));
    v.push_back(member<&R::tuple_table_bytes, C>("tuple_table_bytes", "bytes", "tuple index tables"));
    v.push_back(member<&R::allocation_bytes, C>("allocation_bytes", "bytes", "every allocation's size (XLA's total)"));
    v.push_back(member<&R::allocation_count, C>("allocation_count", "", "allocations"));
    v.push_back(member<&R::unplaced_values, C>("unplaced_values", "", "values without a live range"));
    v.push_back(nested<R, C>("live_at_peak", VT::kObjectList, false,
                             "buffers live at the peak (module_buffer), largest first"));
    v.push_back(nested<R, C>("buffers", VT::kObjectList, false, "every counted buffer (module_buffer), largest first"));
    v.push_back(member<&R::sequence, C>("sequence", "", "the schedule (empty without live ranges)"));
    v.push_back(member<&R::live_bytes, C>("live_bytes", "bytes", "bytes live at each schedule position"));
    return v;
  }();
  return t;
}

const ResultTable<ModuleBuffer, NoContext>& module_buffer_fields() {
  using R = ModuleBuffer;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::allocation, C>("allocation", "", "XLA's allocation index"));
    v.push_back(member<&R::offset_bytes, C>("offset_bytes", "bytes", "offset in the allocation"));
    v.push_back(member<&R::size_bytes, C>("size_bytes", "bytes", "its size"));
    v.push_back(computed<R, C>(
        "kind", VT::kString, false, "", "parameter, output, temporary, constant, ...",
        [](const R& r, const C&) { return FieldValue{std::string(hlo::allocation_kind_name(r.kind))}; }));
    v.push_back(member<&R::producer, C>("producer", "", "the instruction of its largest value"));
    v.push_back(member<&R::values, C>("values", "", "every value's key (\"name{index}\")"));
    v.push_back(member<&R::shape, C>("shape", "", "the producer value's shape"));
    v.push_back(member<&R::op_name, C>("op_name", "", "the producer's metadata op_name"));
    v.push_back(member<&R::source, C>("source", "", "the producer's \"file:line\""));
    v.push_back(member<&R::start, C>("start", "", "first live position (-1 not placed)"));
    v.push_back(member<&R::end, C>("end", "", "last live position (-1 not placed)"));
    return v;
  }();
  return t;
}

const ResultTable<OnChipNeed, NoContext>& onchip_need_fields() {
  using R = OnChipNeed;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::input_bytes, C>("input_bytes", "bytes", "its operands' buffers"));
    v.push_back(member<&R::output_bytes, C>("output_bytes", "bytes", "its own values"));
    v.push_back(member<&R::temporary_bytes, C>("temporary_bytes", "bytes", "values of the computations it calls"));
    v.push_back(computed<R, C>("total_bytes", VT::kInt, false, "bytes", "the sum",
                               [](const R& r, const C&) { return FieldValue{r.total_bytes()}; }));
    return v;
  }();
  return t;
}

const ResultTable<LoadBalance, NoContext>& load_balance_fields() {
  using R = LoadBalance;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::device_count, C>("device_count", "", "rows compared"));
    v.push_back(member<&R::active_devices, C>("active_devices", "", "rows with busy time"));
    v.push_back(member<&R::max_busy_ns, C>("max_busy_ns", "ns", "the busiest device's busy time"));
    v.push_back(member<&R::min_busy_ns, C>("min_busy_ns", "ns", "the least busy device's"));
    v.push_back(member<&R::mean_busy_ns, C>("mean_busy_ns", "ns", "mean busy time"));
    v.push_back(
        computed<R, C>("imbalance", VT::kFloat, true, "x", "max / mean busy: 1 even (null when nothing was busy)",
                       [](const R& r, const C&) { return r.mean_busy_ns > 0 ? FieldValue{r.imbalance} : none(); }));
    v.push_back(computed<R, C>("slowest_device", VT::kInt, true, "", "the device with the most busy time",
                               [](const R& r, const C&) {
                                 return r.slowest_device == kNone32 ? none() : FieldValue{uint64_t{r.slowest_device}};
                               }));
    v.push_back(computed<R, C>(
        "least_busy_device", VT::kInt, true, "", "the device with the least busy time", [](const R& r, const C&) {
          return r.least_busy_device == kNone32 ? none() : FieldValue{uint64_t{r.least_busy_device}};
        }));
    v.push_back(member<&R::spread_ns, C>("spread_ns", "ns", "max - min busy"));
    v.push_back(member<&R::spread_fraction, C>("spread_fraction", "fraction", "spread / max busy"));
    return v;
  }();
  return t;
}

const ResultTable<EnergyReport, NoContext>& energy_fields() {
  using R = EnergyReport;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::measured, C>("measured", "", "the trace has power samples of at least one device"));
    v.push_back(member<&R::sample_period_ns, C>("sample_period_ns", "ns", "power sampling period"));
    v.push_back(member<&R::update_period_ns, C>("update_period_ns", "ns", "the driver's energy update period"));
    v.push_back(member<&R::total_joules, C>("total_joules", "J", "sum over devices"));
    v.push_back(member<&R::unattributed_joules, C>("unattributed_joules", "J", "kernels without an HLO op"));
    v.push_back(member<&R::copies_joules, C>("copies_joules", "J", "copies and memsets"));
    v.push_back(member<&R::idle_joules, C>("idle_joules", "J", "the not-busy part of each interval"));
    v.push_back(nested<R, C>("devices", VT::kObjectList, false, "one row per device with samples (energy_device_row)"));
    v.push_back(nested<R, C>("region_paths", VT::kObjectList, false,
                             "one row per (region path, device): energy_window + path_index, region, instances"));
    v.push_back(nested<R, C>("regions", VT::kObjectList, false,
                             "one row per (region record, device): energy_window + region_index, path_index, region"));
    v.push_back(nested<R, C>("ops", VT::kObjectList, false, "ops with energy, most joules first (energy_op_row)"));
    return v;
  }();
  return t;
}

const ResultTable<DeviceEnergy, NoContext>& energy_device_row_fields() {
  using R = DeviceEnergy;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::device_id, C>("device_id", "", "the device"));
    v.push_back(member<&R::samples, C>("samples", "", "its power sample records"));
    v.push_back(member<&R::first_ns, C>("first_ns", "ns", "start of the sampled span"));
    v.push_back(member<&R::last_ns, C>("last_ns", "ns", "end of the sampled span"));
    v.push_back(member<&R::joules, C>("joules", "J", "over the sampled span"));
    v.push_back(member<&R::mean_w, C>("mean_w", "W", "joules / span"));
    v.push_back(member<&R::peak_w, C>("peak_w", "W", "highest power reading (0 none)"));
    v.push_back(computed<R, C>("idle_w", VT::kFloat, true, "W", "median idle power (null unknown)",
                               [](const R& r, const C&) { return r.idle_w < 0 ? none() : FieldValue{r.idle_w}; }));
    v.push_back(member<&R::idle_ns, C>("idle_ns", "ns", "time with nothing running on the device"));
    v.push_back(member<&R::has_counter, C>("has_counter", "", "the device has total-energy readings"));
    v.push_back(member<&R::backwards_intervals, C>("backwards_intervals", "",
                                                   "intervals where the counter went backwards (power integrated)"));
    return v;
  }();
  return t;
}

const ResultTable<EnergyWindow, NoContext>& energy_window_fields() {
  using R = EnergyWindow;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::device_id, C>("device_id", "", "the device"));
    v.push_back(member<&R::joules, C>("joules", "J", "energy in the window"));
    v.push_back(member<&R::mean_w, C>("mean_w", "W", "joules / covered seconds"));
    v.push_back(member<&R::peak_w, C>("peak_w", "W", "highest power reading in force (0 unknown)"));
    v.push_back(member<&R::duration_ns, C>("duration_ns", "ns", "the window (summed over instances for a path)"));
    v.push_back(member<&R::coverage_ns, C>("coverage_ns", "ns", "the part within the device's sampled span"));
    v.push_back(member<&R::from_counter, C>("from_counter", "", "false: some of it integrates power readings"));
    return v;
  }();
  return t;
}

const ResultTable<OpEnergy, TraceContext>& energy_op_row_fields() {
  using R = OpEnergy;
  using C = TraceContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::op, C>("op_index", "", "into the analysis' ops"));
    v.push_back(computed<R, C>("hlo_op", VT::kString, false, "", "the HLO op ('' unknown)", [](const R& r, const C& c) {
      return FieldValue{r.op < c.inputs->ops.size() ? c.inputs->ops[r.op].name : std::string()};
    }));
    v.push_back(computed<R, C>("module", VT::kString, false, "", "its module ('' unknown)", [](const R& r, const C& c) {
      return FieldValue{r.op < c.inputs->ops.size() ? c.inputs->ops[r.op].module : std::string()};
    }));
    v.push_back(member<&R::joules, C>("joules", "J", "its energy"));
    v.push_back(member<&R::busy_ns, C>("busy_ns", "ns", "its kernel time within sampled intervals"));
    return v;
  }();
  return t;
}

const ResultTable<uint32_t, RegionPathGpuContext>& region_path_row_fields() {
  using R = uint32_t;
  using C = RegionPathGpuContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(computed<R, C>("path_index", VT::kInt, false, "", "the region path's id",
                               [](const R& p, const C&) { return FieldValue{uint64_t{p}}; }));
    v.push_back(computed<R, C>("region", VT::kString, false, "",
                               "the path: names from the outermost, joined by \" > \"",
                               [](const R& p, const C& c) { return FieldValue{c.paths->path(p)}; }));
    v.push_back(computed<R, C>("name", VT::kString, false, "", "the innermost name",
                               [](const R& p, const C& c) { return FieldValue{c.paths->name(p)}; }));
    v.push_back(computed<R, C>("depth", VT::kInt, false, "", "0: outermost",
                               [](const R& p, const C& c) { return FieldValue{uint64_t{c.paths->depth(p)}}; }));
    v.push_back(computed<R, C>("instances", VT::kInt, false, "", "region records with this path",
                               [](const R& p, const C& c) { return FieldValue{c.paths->instances(p)}; }));
    v.push_back(computed<R, C>("parent", VT::kInt, true, "", "the enclosing path's id (null at the top)",
                               [](const R& p, const C& c) {
                                 const uint32_t q = c.paths->parent(p);
                                 return q == kNone32 ? none() : FieldValue{uint64_t{q}};
                               }));
    v.push_back(computed<R, C>("kernel_count", VT::kInt, false, "", "kernels inside (nested paths included)",
                               [](const R& p, const C& c) { return FieldValue{(*c.gpu)[p].kernel_count}; }));
    v.push_back(computed<R, C>("kernel_ns", VT::kInt, false, "ns", "their summed durations",
                               [](const R& p, const C& c) { return FieldValue{(*c.gpu)[p].kernel_ns}; }));
    v.push_back(computed<R, C>("copy_count", VT::kInt, false, "", "copies inside",
                               [](const R& p, const C& c) { return FieldValue{(*c.gpu)[p].copy_count}; }));
    v.push_back(computed<R, C>("copy_ns", VT::kInt, false, "ns", "their summed durations",
                               [](const R& p, const C& c) { return FieldValue{(*c.gpu)[p].copy_ns}; }));
    v.push_back(computed<R, C>("memset_count", VT::kInt, false, "", "memsets inside",
                               [](const R& p, const C& c) { return FieldValue{(*c.gpu)[p].memset_count}; }));
    v.push_back(computed<R, C>("memset_ns", VT::kInt, false, "ns", "their summed durations",
                               [](const R& p, const C& c) { return FieldValue{(*c.gpu)[p].memset_ns}; }));
    v.push_back(computed<R, C>("gpu_ns", VT::kInt, false, "ns", "kernel_ns + copy_ns + memset_ns",
                               [](const R& p, const C& c) { return FieldValue{(*c.gpu)[p].gpu_ns()}; }));
    return v;
  }();
  return t;
}

const ResultTable<RegionMemory, TraceContext>& region_memory_row_fields() {
  using R = RegionMemory;
  using C = TraceContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(
        computed<R, C>("region", VT::kString, false, "", "the region record's name", [](const R& r, const C& c) {
          return FieldValue{std::string(c.store->strings.get(c.store->regions[r.region_index].name))};
        }));
    v.push_back(member<&R::region_index, C>("index", "", "the region record"));
    v.push_back(computed<R, C>("path", VT::kString, false, "", "its region path", [](const R& r, const C& c) {
      return FieldValue{c.paths->path(c.paths->path_of(r.region_index))};
    }));
    v.push_back(
        member<&R::in_use_at_start_bytes, C>("in_use_at_start_bytes", "bytes", "in use at its start, all devices"));
    v.push_back(member<&R::peak_in_use_bytes, C>("peak_in_use_bytes", "bytes", "max in use while it was open"));
    v.push_back(
        member<&R::allocated_bytes, C>("allocated_bytes", "bytes", "allocated inside (nested regions included)"));
    v.push_back(member<&R::freed_bytes, C>("freed_bytes", "bytes", "freed inside"));
    v.push_back(member<&R::allocations, C>("allocations", "", "allocations inside"));
    v.push_back(member<&R::frees, C>("frees", "", "frees inside"));
    return v;
  }();
  return t;
}

const ResultTable<RegionPathMemory, TraceContext>& region_path_memory_row_fields() {
  using R = RegionPathMemory;
  using C = TraceContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(computed<R, C>("region", VT::kString, false, "",
                               "the path: names from the outermost, joined by \" > \"",
                               [](const R& r, const C& c) { return FieldValue{c.paths->path(r.path)}; }));
    v.push_back(computed<R, C>("name", VT::kString, false, "", "the innermost name",
                               [](const R& r, const C& c) { return FieldValue{c.paths->name(r.path)}; }));
    v.push_back(computed<R, C>("depth", VT::kInt, false, "", "0: outermost",
                               [](const R& r, const C& c) { return FieldValue{uint64_t{c.paths->depth(r.path)}}; }));
    v.push_back(computed<R, C>("instances", VT::kInt, false, "", "region records with this path",
                               [](const R& r, const C& c) { return FieldValue{c.paths->instances(r.path)}; }));
    v.push_back(member<&R::path, C>("path_index", "", "the region path's id"));
    v.push_back(member<&R::peak_in_use_bytes, C>("peak_in_use_bytes", "bytes", "the highest of its instances' peaks"));
    v.push_back(member<&R::peak_region_index, C>("peak_region_index", "", "the instance that reached it"));
    v.push_back(
        member<&R::in_use_at_start_bytes, C>("in_use_at_start_bytes", "bytes", "that instance's level at its start"));
    v.push_back(member<&R::allocated_bytes, C>("allocated_bytes", "bytes", "summed over instances"));
    v.push_back(member<&R::freed_bytes, C>("freed_bytes", "bytes", "summed over instances"));
    v.push_back(member<&R::allocations, C>("allocations", "", "summed over instances"));
    v.push_back(member<&R::frees, C>("frees", "", "summed over instances"));
    return v;
  }();
  return t;
}

const ResultTable<DeviceRow, NoContext>& device_row_fields() {
  using R = DeviceRow;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::device_id, C>("device_id", "", "the device"));
    v.push_back(member<&R::has_record, C>("has_record", "", "a DeviceInfo with this id is in the trace"));
    v.push_back(computed<R, C>("name", VT::kString, false, "", "the device's name",
                               [](const R& r, const C&) { return FieldValue{r.ceilings.device_name}; }));
    v.push_back(nested<R, C>("ceilings", VT::kObject, false, "its ceilings (as table_ceilings)"));
    v.push_back(member<&R::kernel_count, C>("kernel_count", "", "its kernels"));
    v.push_back(member<&R::kernel_time_ns, C>("kernel_time_ns", "ns", "sum of kernel durations"));
    v.push_back(member<&R::kernel_busy_ns, C>("kernel_busy_ns", "ns", "union of kernel intervals"));
    v.push_back(member<&R::copy_count, C>("copy_count", "", "its copies"));
    v.push_back(member<&R::copy_bytes, C>("copy_bytes", "bytes", "their bytes"));
    v.push_back(member<&R::copy_busy_ns, C>("copy_busy_ns", "ns", "union of its copies' intervals"));
    v.push_back(member<&R::memset_count, C>("memset_count", "", "its memsets"));
    v.push_back(member<&R::memset_bytes, C>("memset_bytes", "bytes", "their bytes"));
    v.push_back(member<&R::busy_ns, C>("busy_ns", "ns", "union of its kernels, copies and memsets"));
    v.push_back(member<&R::idle_ns, C>("idle_ns", "ns", "wall time - busy_ns"));
    v.push_back(member<&R::busy_fraction, C>("busy_fraction", "fraction", "busy_ns / wall time"));
    v.push_back(member<&R::idle_fraction, C>("idle_fraction", "fraction", "idle_ns / wall time"));
    v.push_back(computed<R, C>(
        "first_start_ns", VT::kInt, true, "ns", "first activity start (null: none)",
        [](const R& r, const C&) { return r.last_end_ns > r.first_start_ns ? FieldValue{r.first_start_ns} : none(); }));
    v.push_back(computed<R, C>(
        "last_end_ns", VT::kInt, true, "ns", "last activity end (null: none)",
        [](const R& r, const C&) { return r.last_end_ns > r.first_start_ns ? FieldValue{r.last_end_ns} : none(); }));
    v.push_back(nested<R, C>("directions", VT::kObject, false, "per copy direction with copies (device_copy_stats)"));
    v.push_back(nested<R, C>("memory", VT::kObject, true, "its allocations (device_row_memory); null without any"));
    v.push_back(
        nested<R, C>("threads", VT::kObjectList, false, "launching threads (device_thread_row), most kernels first"));
    return v;
  }();
  return t;
}

const ResultTable<DeviceRow, NoContext>& device_row_memory_fields() {
  using R = DeviceRow;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::memory_peak_bytes, C>("peak_in_use_bytes", "bytes", "its highest level"));
    v.push_back(member<&R::memory_peak_ns, C>("peak_ns", "ns", "when"));
    v.push_back(member<&R::memory_final_bytes, C>("final_in_use_bytes", "bytes", "its level at the end"));
    return v;
  }();
  return t;
}

const ResultTable<DeviceCopyStats, LinkDirectionContext>& device_copy_stats_fields() {
  using R = DeviceCopyStats;
  using C = LinkDirectionContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::count, C>("count", "", "copies"));
    v.push_back(member<&R::bytes, C>("bytes", "bytes", "their bytes"));
    v.push_back(member<&R::busy_ns, C>("busy_ns", "ns", "union of their intervals"));
    v.push_back(computed<R, C>("achieved_bytes_per_s", VT::kFloat, false, "bytes/s", "bytes / busy time",
                               [](const R& r, const C&) { return FieldValue{r.achieved_bytes_per_s()}; }));
    v.push_back(member<&R::link_bytes, C>("link_bytes", "bytes", "bytes of the copies with a duration (HtoD, DtoH)"));
    v.push_back(computed<R, C>("link_bytes_per_s", VT::kFloat, true, "bytes/s",
                               "this device's host-link peak (null: not a link direction, or unknown)",
                               [](const R& r, const C& c) {
                                 return c.link_dir && r.link_bytes_per_s > 0 ? FieldValue{r.link_bytes_per_s} : none();
                               }));
    v.push_back(computed<R, C>(
        "link_percent", VT::kFloat, true, "percent",
        "use of the link while these copies ran (null: not a link direction, or unknown)", [](const R& r, const C& c) {
          return c.link_dir && r.link_bytes_per_s > 0 && r.busy_ns > 0 ? FieldValue{r.link_percent()} : none();
        }));
    return v;
  }();
  return t;
}

const ResultTable<DeviceThread, NoContext>& device_thread_row_fields() {
  using R = DeviceThread;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::thread_id, C>("thread_id", "", "the launching thread"));
    v.push_back(member<&R::kernel_count, C>("kernel_count", "", "kernels it launched on the device"));
    v.push_back(member<&R::kernel_time_ns, C>("kernel_time_ns", "ns", "those kernels' summed durations"));
    return v;
  }();
  return t;
}

const ResultTable<TransferFlag, TraceContext>& transfer_flag_row_fields() {
  using R = TransferFlag;
  using C = TraceContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::kind, C>("kind", "", "pageable, tiny_transfers or link_exceeded"));
    v.push_back(
        computed<R, C>("group_kind", VT::kString, false, "", "what the flagged group is",
                       [](const R& r, const C&) { return FieldValue{std::string(group_kind_name(r.group_kind))}; }));
    v.push_back(computed<R, C>(
        "index", VT::kInt, true, "", "the group's index (null: the trace)",
        [](const R& r, const C&) { return r.index == kNone32 ? none() : FieldValue{uint64_t{r.index}}; }));
    v.push_back(member<&R::count, C>("count", "", "copies concerned"));
    v.push_back(member<&R::bytes, C>("bytes", "bytes", "their bytes"));
    v.push_back(member<&R::message, C>("message", "", "cause and fix, one line"));
    v.push_back(only_when(
        computed<R, C>("region", VT::kString, false, "", "the region path flagged",
                       [](const R& r, const C& c) { return FieldValue{c.paths->path(r.index)}; }),
        "group_kind is region_path", +[](const R& r, const C&) { return r.group_kind == GroupKind::kRegionPath; }));
    return v;
  }();
  return t;
}

const ResultTable<uint32_t, IndexContext>& roofline_op_keys_fields() {
  using R = uint32_t;
  using C = IndexContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(computed<R, C>("op", VT::kString, false, "", "the HLO op",
                               [](const R& o, const C& c) { return FieldValue{c.inputs->ops[o].name}; }));
    v.push_back(computed<R, C>("module", VT::kString, false, "", "its HLO module",
                               [](const R& o, const C& c) { return FieldValue{c.inputs->ops[o].module}; }));
    v.push_back(computed<R, C>("pattern", VT::kString, false, "", "access pattern", [](const R& o, const C& c) {
      return FieldValue{std::string(hlo::access_pattern_name(c.inputs->ops[o].pattern))};
    }));
    v.push_back(computed<R, C>("source", VT::kString, false, "", "\"file:line\" ('' unknown)",
                               [](const R& o, const C& c) { return FieldValue{c.inputs->sources[o]}; }));
    v.push_back(computed<R, C>("category", VT::kString, false, "", "the attribution's category",
                               [](const R& o, const C& c) { return FieldValue{c.inputs->categories[o]}; }));
    v.push_back(computed<R, C>("cost_known", VT::kBool, false, "", "the static cost model has a rule for it",
                               [](const R& o, const C& c) { return FieldValue{c.inputs->ops[o].cost_known}; }));
    v.push_back(computed<R, C>(
        "cost_basis", VT::kString, false, "",
        "where its FLOPs and bytes come from: the cost rules, the custom kernel's own metadata, the counters "
        "(its measured_* columns), or its operands and results only (a lower bound of the bytes, FLOPs unknown)",
        [](const R& o, const C& c) {
          return FieldValue{std::string(cost_basis_name(c.inputs->ops[o], c.roofline->ops[o]))};
        }));
    return v;
  }();
  return t;
}

const ResultTable<uint32_t, IndexContext>& region_instance_keys_fields() {
  using R = uint32_t;
  using C = IndexContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(
        computed<R, C>("region", VT::kString, false, "", "the region record's name", [](const R& g, const C& c) {
          return FieldValue{std::string(c.store->strings.get(c.store->regions[g].name))};
        }));
    v.push_back(computed<R, C>("index", VT::kInt, false, "", "the region record",
                               [](const R& g, const C&) { return FieldValue{uint64_t{g}}; }));
    v.push_back(computed<R, C>("path", VT::kString, false, "", "its region path",
                               [](const R& g, const C& c) { return FieldValue{c.paths->path(c.paths->path_of(g))}; }));
    return v;
  }();
  return t;
}

const ResultTable<uint32_t, IndexContext>& region_path_keys_fields() {
  using R = uint32_t;
  using C = IndexContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(computed<R, C>("region", VT::kString, false, "",
                               "the path: names from the outermost, joined by \" > \"",
                               [](const R& p, const C& c) { return FieldValue{c.paths->path(p)}; }));
    v.push_back(computed<R, C>("name", VT::kString, false, "", "the innermost name",
                               [](const R& p, const C& c) { return FieldValue{c.paths->name(p)}; }));
    v.push_back(computed<R, C>("depth", VT::kInt, false, "", "0: outermost",
                               [](const R& p, const C& c) { return FieldValue{uint64_t{c.paths->depth(p)}}; }));
    v.push_back(computed<R, C>("instances", VT::kInt, false, "", "region records with this path",
                               [](const R& p, const C& c) { return FieldValue{c.paths->instances(p)}; }));
    v.push_back(computed<R, C>("path_index", VT::kInt, false, "", "the region path's id",
                               [](const R& p, const C&) { return FieldValue{uint64_t{p}}; }));
    return v;
  }();
  return t;
}

const ResultTable<StringId, IndexContext>& roofline_kernel_keys_fields() {
  using R = StringId;
  using C = IndexContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(computed<R, C>("kernel", VT::kString, false, "", "the kernel name", [](const R& k, const C& c) {
      return FieldValue{std::string(c.store->strings.get(k))};
    }));
    return v;
  }();
  return t;
}

const ResultTable<RooflineReport, NoContext>& roofline_fields() {
  using R = RooflineReport;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(nested<R, C>("trace", VT::kObject, false, "every kernel as one point (roofline_point)"));
    v.push_back(nested<R, C>("ops", VT::kObjectList, false, "one per op: roofline_op_keys + roofline_point"));
    v.push_back(
        nested<R, C>("regions", VT::kObjectList, false,
                     "one per region record (region_instance_keys) or path (region_path_keys), + roofline_point"));
    v.push_back(
        nested<R, C>("kernels", VT::kObjectList, false, "one per kernel name: roofline_kernel_keys + roofline_point"));
    v.push_back(member<&R::unattributed_kernels, C>("unattributed_kernels", "", "kernels with no op (cost unknown)"));
    v.push_back(member<&R::unattributed_ns, C>("unattributed_ns", "ns", "their time"));
    return v;
  }();
  return t;
}

const ResultTable<TransferReport, NoContext>& transfers_fields() {
  using R = TransferReport;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(
        nested<R, C>("groups", VT::kObjectList, false,
                     "the trace, then region paths (or records) with copies or syncs, then ops (transfer_group_row)"));
    v.push_back(nested<R, C>("flags", VT::kObjectList, false, "problems found, trace first (transfer_flag_row)"));
    v.push_back(member<&R::flags_left_out, C>("flags_left_out", "", "region flags beyond the kept number"));
    v.push_back(
        member<&R::link_bytes_per_s, C>("link_bytes_per_s", "bytes/s", "the link peak link_percent uses (0 unknown)"));
    v.push_back(member<&R::link_source, C>("link_source", "", "table, measured, user or unknown"));
    v.push_back(member<&R::link_description, C>("link_description", "", "the link, e.g. \"PCIe gen5 x16\""));
    return v;
  }();
  return t;
}

const ResultTable<TransferGroup, IndexContext>& transfer_group_row_fields() {
  using R = TransferGroup;
  using C = IndexContext;
  static const ResultTable<R, C> t = [] {
    const auto is_path = +[](const R& g, const C&) { return g.kind == GroupKind::kRegionPath; };
    constexpr const char* kPath = "kind is region_path";
    ResultTable<R, C> v;
    v.push_back(computed<R, C>("kind", VT::kString, false, "", "trace, region, region_path or op",
                               [](const R& g, const C&) { return FieldValue{std::string(group_kind_name(g.kind))}; }));
    v.push_back(computed<R, C>(
        "index", VT::kInt, true, "", "region record, op or path id (null: the trace)",
        [](const R& g, const C&) { return g.index == kNone32 ? none() : FieldValue{uint64_t{g.index}}; }));
    v.push_back(computed<R, C>("name", VT::kString, false, "", "the region's (innermost) name, the op's, or \"trace\"",
                               [](const R& g, const C& c) {
                                 switch (g.kind) {
                                   case GroupKind::kRegion:
                                     return FieldValue{
                                         std::string(c.store->strings.get(c.store->regions[g.index].name))};
                                   case GroupKind::kOp: return FieldValue{c.inputs->ops[g.index].name};
                                   case GroupKind::kRegionPath: return FieldValue{c.paths->name(g.index)};
                                   case GroupKind::kTrace: break;
                                 }
                                 return FieldValue{std::string("trace")};
                               }));
    v.push_back(only_when(computed<R, C>("region", VT::kString, false, "", "the region path",
                                         [](const R& g, const C& c) { return FieldValue{c.paths->path(g.index)}; }),
                          kPath, is_path));
    v.push_back(
        only_when(computed<R, C>("depth", VT::kInt, false, "", "0: outermost",
                                 [](const R& g, const C& c) { return FieldValue{uint64_t{c.paths->depth(g.index)}}; }),
                  kPath, is_path));
    v.push_back(
        only_when(computed<R, C>("instances", VT::kInt, false, "", "region records with this path",
                                 [](const R& g, const C& c) { return FieldValue{c.paths->instances(g.index)}; }),
                  kPath, is_path));
    v.push_back(only_when(
        computed<R, C>("path", VT::kString, false, "", "the record's region path",
                       [](const R& g, const C& c) { return FieldValue{c.paths->path(c.paths->path_of(g.index))}; }),
        "kind is region", +[](const R& g, const C&) { return g.kind == GroupKind::kRegion; }));
    v.push_back(nested<R, C>("directions", VT::kObject, false,
                             "per direction with copies: transfer_stats, + link_percent for HtoD and DtoH"));
    v.push_back(nested<R, C>("all", VT::kObject, false, "every direction together (transfer_stats)"));
    v.push_back(member<&R::host_wait_ns, C>("host_wait_ns", "ns", "union of the host's sync waits"));
    v.push_back(member<&R::sync_calls, C>("sync_calls", "", "sync calls counted in host_wait_ns"));
    return v;
  }();
  return t;
}

const ResultTable<TraceAnalysis, AnalyzeContext>& trace_analysis_fields() {
  using R = TraceAnalysis;
  using C = AnalyzeContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(nested<R, C>("ceilings", VT::kObject, false, "the ceilings the roofline used (as table_ceilings)"));
    v.push_back(member<&R::warnings, C>("warnings", "", "what the analysis could not do, one line each"));
    v.push_back(
        computed<R, C>("region_rows", VT::kString, false, "",
                       "path (one row per region path) or instance (one per region record)", [](const R& a, const C&) {
                         return FieldValue{std::string(a.region_rows == RegionRows::kPaths ? "path" : "instance")};
                       }));
    v.push_back(nested<R, C>("transfers", VT::kObject, false, "copies by group (transfers)"));
    v.push_back(nested<R, C>("memory", VT::kObject, false, "device memory (memory)"));
    v.push_back(nested<R, C>("devices", VT::kObject, false, "per-device rows and balance (devices)"));
    v.push_back(nested<R, C>("roofline", VT::kObject, false, "roofline points (roofline)"));
    v.push_back(nested<R, C>("fpga", VT::kObject, false,
                             "the FPGA ranking (fpga_report, candidates: fpga_op_row, regions: fpga_region_row)"));
    v.push_back(
        nested<R, C>("fpga_other_targets", VT::kObjectList, false, "the same as fpga on each other card asked for"));
    v.push_back(nested<R, C>("totals", VT::kObject, false, "busy-time unions and record counts (trace_totals)"));
    v.push_back(nested<R, C>("region_paths", VT::kObjectList, false, "GPU time per region path (region_path_row)"));
    v.push_back(nested<R, C>("region_path_of", VT::kIntList, false, "the region path of each region record"));
    v.push_back(nested<R, C>("kernels_by_name", VT::kObjectList, false, "per distinct kernel name (kernel_name_row)"));
    v.push_back(nested<R, C>("device_dram_bytes_per_s", VT::kFloatList, false,
                             "DRAM peak per device of the trace, bytes/s (0 unknown)"));
    v.push_back(nested<R, C>("module_memory", VT::kObjectList, false,
                             "per HLO module with a buffer assignment (module_memory)"));
    v.push_back(nested<R, C>("collectives", VT::kObject, false, "collective kernels (collectives)"));
    v.push_back(nested<R, C>("energy", VT::kObject, false, "GPU energy from the power samples (energy)"));
    v.push_back(only_when(
        nested<R, C>("attribution", VT::kObject, false, "the AttributionResult the analysis computed"),
        "with_attribution", +[](const R&, const C& c) { return c.with_attribution; }));
    return v;
  }();
  return t;
}

const ResultTable<DeviceReport, NoContext>& devices_fields() {
  using R = DeviceReport;
  using C = NoContext;
  static const ResultTable<R, C> t = [] {
    ResultTable<R, C> v;
    v.push_back(member<&R::wall_ns, C>("wall_ns", "ns", "the wall time the idle shares are taken of"));
    v.push_back(nested<R, C>("rows", VT::kObjectList, false, "one per device, by id (device_row)"));
    v.push_back(nested<R, C>("balance", VT::kObject, false, "load balance over the devices (load_balance)"));
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
      {"transfer_flag_row", "transfers.flags[]: a transfer problem, cause and fix", infos(transfer_flag_row_fields())},
  };
  return t;
}

}  // namespace fpgaprof::analysis

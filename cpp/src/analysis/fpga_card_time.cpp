// The card time of one op (estimate_op_on_card), of a dataflow design (dataflow_time) and of
// host-link transfers (link_time), each at both ends of the calibrated constants' spread.
#include "fpgaprof/analysis/fpga_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <unordered_set>
#include <utility>

#include "fpgaprof/error.hpp"

namespace fpgaprof::analysis {

const char* const kStructureDependentNote =
    "restructured: a gather paired with a scatter over a tiled output or at a density of at most 1e-4 (an "
    "SpMV-like design): row imbalance and column spread, not visible in the shapes, decide its time; the "
    "nominal is a target for a design like the published ones, and the slow end is as compiled (a design whose "
    "tiles find no reuse) (docs/fpga-model.md, \"Gathers through a tiled vector\")";

const char* const kStructureWidenedNote =
    "restructured slow end as compiled: a gather + scatter whose time the matrix's structure decides "
    "(docs/fpga-model.md, \"When the structure decides\")";

const char* const kRowImbalanceNote =
    "restructured: a scatter (with or without its gather) at the row imbalance applied (HiSpMV's delta, given or "
    "computed from the function's arguments): "
    "nominal a design that deals rows to its PEs cyclically (delta / 1.22 times the balanced time, at least "
    "1), slow end with a dense row's accumulation stalls (10 cycles a nonzero at delta >= 2), fast end a "
    "hybrid row distribution (HiSpMV); the column spread is still not known: at a density of at most 1e-4 or "
    "over a tiled output the slow end is as compiled (docs/fpga-model.md, \"Row imbalance\")";

const char* scenario_name(Scenario s) { return s == Scenario::kAsCompiled ? "as compiled" : "restructured"; }

// ---- the card model ---------------------------------------------------------------------------
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kBram36Bytes = 36.0 * 1024.0 / 8.0;  // one 36 Kb block RAM: the smallest on-chip copy
constexpr double kPortBytes = 8.0;                    // a block RAM / UltraRAM port: 72 bits with 8 of ECC

// A restructured gather + scatter (an SpMV-like design) keeps a tile of its output on chip and
// streams the gathered vector through a window, re-reading it once per output tile, over the
// channel that feeds it; the output goes out over its own. Design facts of calibration designs
// (docs/fpga-model.md, "Gathers through a tiled vector"):
// - the output tile: HiSparse's partial-buffer design 0.5 MB ("only 0.5 MB", FPGA '22 Sec. 6.1:
//   the slow end), its row-interleaving and fixed-point designs 4 MB of URAM (nominal), Serpens
//   a16 16 x 8 x 12,288 x 8 B = 12,582,912 B (src/serpens.h URAM_DEPTH, local_C: the fast end);
// - one channel for each vector: HiSparse Sec. 6.1 "16 for the matrix, 2 for the input and
//   result vectors"; Serpens one read_X task;
// - the vector's loading overlaps the matrix stream only at the fast end (HiSparse Sec. 3.1
//   double-buffers it; HiSpMV Sec. 3.2's private buffering runs load and compute in turn).
constexpr double kOutputTileBytes[] = {12582912.0, 4194304.0, 524288.0};  // fast, nominal, slow
constexpr double kVectorChannels = 1.0;
// HiSpMV Sec. 2.3: "for very low-density matrices (e.g., rho <= 10^-4)" loading x and streaming
// y become the bottleneck; HiSpMV-16 (Table 2) achieves a median 204.3 on-chip accesses per
// cycle on its 8 balanced cells above that density and 102.5 on its 3 at or below it (1.99x).
// At such a density, or with its output tiled, the matrix's structure (row imbalance, column
// spread) decides the design's time: the slow end is then the design whose tiles find no reuse,
// each gather and update a random access to card memory as compiled (op_parts for an op;
// widen_for_structure for a function and a region).
constexpr double kLowDensity = 1e-4;
// Row imbalance given by the user (HiSpMV's ratio delta, FPGA '24 Eq. 2: the nonzeros of the
// most loaded of P PEs, rows dealt to them cyclically, over NNZ / P). Designs that deal rows
// cyclically (Serpens, HiSparse, AMD's: HiSpMV Sec. 2.1) run at the pace of that PE. HiSpMV
// Table 2's cycle counts show no loss up to delta 1.22 (its "Row Distri." speedup is 1.00 on
// all ten balanced matrices, delta 1.01-1.22) and a loss of 2.3-47x on the ten at 2.28-32.8:
// the nominal design's PE work is max(1, delta / 1.22) times the balanced one. At delta >= 2
// ("imbalanced matrices with delta >= 2", Sec. 2.1) a dense row also stalls its PE on the
// accumulation's read-after-write dependency, up to one nonzero per dependency distance: 10
// cycles in Serpens, 7 in HiSparse (Table 1), the longest at the slow end. The fast end is
// HiSpMV's hybrid row distribution, which spreads dense rows over all PEs.
constexpr double kBalancedUpTo = 1.22;
constexpr double kImbalanced = 2.0;
constexpr double kRawDistanceCycles = 10.0;

// Every calibrated constant at one end of its spread (or at its nominal value).
struct Corner {
  double clock, dsp_util, stream_eff, channel_share, random_reads, rmw_updates, cross, onchip_share, onchip_lanes,
      sort_rate, link_eff, transfer_latency, call_latency;
  int end;  // 0 fast, 1 nominal, 2 slow (kOutputTileBytes)
};

enum class End { kFast, kNominal, kSlow };

double pick(const Calibrated& c, End e, bool larger_is_faster) {
  if (e == End::kNominal) return c.nominal;
  return (e == End::kFast) == larger_is_faster ? c.high : c.low;
}

Corner corner(const FpgaTarget& t, End e) {
  return {pick(t.clock_hz, e, true),
          pick(t.dsp_utilization, e, true),
          pick(t.stream_efficiency, e, true),
          pick(t.channel_share, e, true),
          pick(t.random_reads_per_s, e, true),
          pick(t.rmw_updates_per_s, e, true),
          pick(t.cross_channel_factor, e, true),
          pick(t.onchip_share, e, true),
          pick(t.onchip_lanes, e, true),
          pick(t.sort_bytes_per_s, e, true),
          pick(t.link_efficiency, e, true),
          pick(t.transfer_latency_s, e, false),
          pick(t.call_latency_s, e, false),
          e == End::kFast      ? 0
          : e == End::kNominal ? 1
                               : 2};
}

constexpr End kEnds[] = {End::kFast, End::kNominal, End::kSlow};

void set_end(TimeRange& r, End e, double v) { (e == End::kFast ? r.low : e == End::kNominal ? r.nominal : r.high) = v; }

// Streaming bandwidth of a design: the channels it drives, each at the streaming efficiency.
double stream_bytes_per_s(const FpgaTarget& t, const Corner& c) {
  return static_cast<double>(t.memory_channels) * c.channel_share * t.memory_channel_bytes_per_s * c.stream_eff;
}

// Seconds for the data-dependent accesses of one RandomTraffic against card memory. Each
// access moves its run rounded up to the access granule; a channel serves at most
// random_reads_per_s accesses (rmw_updates_per_s updates, each a read and a write) and no more
// bytes than it streams. An array larger than one channel cannot be replicated per channel:
// cross_channel_factor applies.
double random_seconds(const RandomTraffic& r, const FpgaTarget& t, const Corner& c) {
  if (!(r.accesses > 0)) return 0.0;
  const double g = t.random_granule_bytes;
  const double txn = std::max(1.0, std::ceil(std::max(r.run_bytes, 1.0) / g)) * g;
  const double channel_bytes = t.memory_channel_bytes_per_s * c.stream_eff;
  const double per_channel = r.read_modify_write ? std::min(c.rmw_updates, channel_bytes / (2 * txn))
                                                 : std::min(c.random_reads, channel_bytes / txn);
  const double channel_capacity = t.memory_capacity_bytes / static_cast<double>(t.memory_channels);
  const double factor = r.source_bytes > channel_capacity ? c.cross : 1.0;
  const double rate = static_cast<double>(t.memory_channels) * c.channel_share * per_channel * factor;
  const double operations = r.read_modify_write ? r.accesses / 2 : r.accesses;
  return rate > 0 ? operations / rate : 0.0;
}

// On chip: the array spread over block RAMs serves up to onchip_lanes accesses per cycle, each
// block two reads (dual-ported) or one read-modify-write update. While room is left a read-only
// array is copied (any lane reads any element of its copy); an updated array is instead
// partitioned by index into as many banks (each update routed to the bank that holds its
// element, as the shuffle units of the published HBM SpMV designs do: HiSparse, Serpens), which
// takes the same blocks; updates spread evenly over the banks is the assumption (a histogram
// of one hot bin would serialize). A block RAM port is 72 bits wide (UG573): an access of r
// bytes takes ceil(r / 8) port cycles.
double onchip_seconds(const RandomTraffic& r, const FpgaTarget& t, const Corner& c) {
  const double room = c.onchip_share * t.sram_bytes;
  const double footprint = std::max(r.source_bytes, kBram36Bytes);
  const double copies = std::max(1.0, std::floor(room / footprint));  // copies or partitions
  const double blocks = copies * std::ceil(footprint / kBram36Bytes);
  const double per_cycle = std::min(c.onchip_lanes, r.read_modify_write ? blocks : 2 * blocks);
  const double operations = r.read_modify_write ? r.accesses / 2 : r.accesses;
  const double cycles_each = std::ceil(std::max(r.run_bytes, 1.0) / kPortBytes);
  return c.clock > 0 ? operations * cycles_each / (per_cycle * c.clock) : 0.0;
}

// Passes over card memory of a sort or FFT whose data does not fit on chip: a two-phase design
// (runs or sub-transforms on chip, then one merge or transpose pass).
double passes(const CardWork& w, const FpgaTarget& t, const Corner& c) {
  const double room = c.onchip_share * t.sram_bytes;
  if (w.sort_length > 0 && w.sort_length * w.sort_element_bytes > room) return 2.0;
  if (w.fft_length > 0 && w.fft_length * w.fft_point_bytes > room) return 2.0;
  return 1.0;
}

struct Parts {
  double compute = 0, memory = 0, random = 0, sort = 0, onchip = 0;
  double vectors = 0;                // a tiled vector's loads and the output's stores over their channels
  bool vectors_overlap = false;      // ... hidden under the matrix stream (the fast end) or added to it
  double pe_factor = 1;              // the most loaded PE's work over the mean's, of a scatter (row imbalance, stalls)
  double pe_memory = -1;             // the scatters' own stream (their matrix), which pe_factor slows; < 0: all memory
  double memory_bytes = 0;           // what the card moves in this design
  bool restructured = false;         // the restructured design was faster and is the one given
  bool structure_dependent = false;  // a gather + scatter whose time the matrix's structure decides
  double access() const {
    // The most loaded PE slows its scatter's stream and on-chip accesses; the rest of the design
    // streams at the memory's pace.
    const double own = pe_memory < 0 ? memory : std::min(pe_memory, memory);
    const double pes = std::max(memory, pe_factor * std::max(own, onchip));
    return vectors_overlap ? std::max(pes, vectors) : pes + vectors;
  }
  double cycles = 0;  // the clock cycles the design takes at least: one per execution (II = 1)
  double time() const { return std::max({compute, sort, access(), cycles}); }
};

// One stage's arithmetic: FLOPs at the card's rate of its precision, a sort at the sort rate
// (its work is comparisons, not FLOPs).
void stage_compute(const CardWork& w, Precision p, const FpgaTarget& t, const Corner& c, Parts& out) {
  const double sort_bytes = w.sort_length * w.sort_count * w.sort_element_bytes;
  if (sort_bytes > 0) {
    out.sort += sort_bytes / c.sort_rate;
  } else {
    const double rate = t.flops_per_s(p, c.clock, c.dsp_util);
    out.compute += w.flops > 0 && rate > 0 ? w.flops / rate : 0.0;
  }
}

Parts as_compiled_parts(const CardWork& w, Precision p, const FpgaTarget& t, const Corner& c) {
  Parts out;
  stage_compute(w, p, t, c, out);
  // One execution of an op that does any work takes at least a clock cycle: a loop body of a
  // few scalar ops, run a million times, is a million cycles, not a million times its bytes'
  // share of the memory's rate.
  out.cycles = c.clock > 0 && (w.bytes > 0 || w.flops > 0) ? 1.0 / c.clock : 0.0;
  const double k = passes(w, t, c);
  for (const RandomTraffic& r : w.random) out.random += random_seconds(r, t, c);
  out.memory = k * w.stream_bytes / stream_bytes_per_s(t, c) + out.random;
  out.memory_bytes = k * w.stream_bytes + w.random_bytes();
  return out;
}

// The arrays a design's data-dependent accesses land in, each once however many gathers and
// scatters of the design land in it: the on-chip room they take when they fit.
double random_sources(const std::vector<DataflowStage>& stages) {
  double sources = 0;
  std::unordered_set<uint64_t> counted;
  for (const DataflowStage& s : stages)
    for (const RandomTraffic& r : s.work->random)
      if (r.source_id == 0 || counted.insert(r.source_id).second) sources += r.source_bytes;
  return sources;
}

// Stages run as one dataflow pipeline: the `io_bytes` (inputs read once, outputs written once)
// streamed, intermediates streamed from stage to stage on chip (FIFOs: the design consumes them
// in the order they are produced), a sort's or FFT's extra passes over data that does not fit
// on chip through card memory, and the state a repeated stage (a loop body) hands to its next
// repetition through card memory when it does not fit on chip, the data-dependent accesses served from on-chip banks
// when every array they land in fits on chip together (else they stay random against card memory), the stages'
// arithmetic sharing the DSPs. The pipeline takes the longest of these.
// `row_imbalance` >= 1: the user's delta for a scatter, with or without its gather (kBalancedUpTo); 0 not known.
Parts dataflow_parts(const std::vector<DataflowStage>& stages, double io_bytes, const FpgaTarget& t, const Corner& c,
                     double row_imbalance) {
  Parts out;
  const double room = c.onchip_share * t.sram_bytes;
  double spill = 0;
  const double sources = random_sources(stages);
  const bool fits = sources <= room;
  for (const DataflowStage& s : stages) {
    const CardWork& w = *s.work;
    Parts one;
    stage_compute(w, s.precision, t, c, one);
    out.compute += s.executions * one.compute;
    // A stage issues at most one execution a cycle (a loop body pipelined at II = 1).
    if (c.clock > 0 && (w.bytes > 0 || w.flops > 0)) out.cycles = std::max(out.cycles, s.executions / c.clock);
    out.sort += s.executions * one.sort;
    const double k = passes(w, t, c);
    if (k > 1) spill += (k - 1) * s.executions * (w.input_bytes + w.output_bytes);
    // A stage repeated inside one design invocation (a loop body) hands its result to its next
    // repetition: larger than the on-chip room, it goes out to card memory and back each time.
    // Its other inputs (a matrix every trip reads), larger than the room, are read again each
    // time, as far as one execution reads them: no more than it streams as compiled (a trip that
    // takes one row, x[i], reads the row; over the trips the matrix once). The io holds them once
    // per invocation of the design.
    if (s.repeats > 0 && w.output_bytes > room) spill += 2 * s.repeats * w.output_bytes;
    if (s.repeats > 0 && w.input_bytes > room) {
      const double others = std::max(0.0, w.input_bytes - w.output_bytes);
      const double each = std::min(others, w.stream_bytes);
      spill += std::max(0.0, s.executions * each - std::max(s.executions - s.repeats, 0.0) * others);
    }
    for (RandomTraffic r : w.random) {
      if (r.restructured_accesses >= 0 && r.restructured_accesses < r.accesses) {
        r.bytes *= r.restructured_accesses / r.accesses;
        r.accesses = r.restructured_accesses;
      }
      (fits ? out.onchip : out.random) += s.executions * (fits ? onchip_seconds(r, t, c) : random_seconds(r, t, c));
    }
  }
  double matrix_io = io_bytes;
  if (fits) {
    // The gathered vectors (read-only sources) and the updated outputs (read-modify-write
    // targets) of the on-chip accesses: a tiled design re-reads each vector once per output
    // tile and moves both over one channel each, in turn, instead of streaming them with the
    // rest. The tiles, the density and the tiled-output test are one execution's (x, y,
    // gathers); the traffic is every execution's (x_moved, y_moved): a loop body or a module
    // called many times tiles the same output each time.
    // The io holds them once per design invocation (executions less repeats: a region's calls,
    // a function's one call): xy_io. The scatters' own stream (scatter_bytes): what their stages
    // read and write besides the arrays they access at random (the matrix of an SpMV); a row
    // imbalance slows it, not the rest of the design.
    double x = 0, y = 0, gathers = 0, x_elems = 0, y_elems = 0, x_moved = 0, y_moved = 0, xy_io = 0;
    double scatter_bytes = 0;
    for (const DataflowStage& s : stages) {
      double stage_sources = 0;
      bool updates = false;
      // A stage's arrays, each once as a gathered vector and once as an updated output: an
      // array both gathered and scattered is still a scatter's target (its rows, its PEs).
      std::unordered_set<uint64_t> seen_x, seen_y;
      for (const RandomTraffic& r : s.work->random) {
        if (r.source_id != 0 && !(r.read_modify_write ? seen_y : seen_x).insert(r.source_id).second) {
          if (!r.read_modify_write) gathers += r.accesses;
          continue;
        }
        const double run = std::max(r.run_bytes, 1.0);
        stage_sources += r.source_bytes;
        xy_io += std::max(s.executions - s.repeats, 0.0) * r.source_bytes;
        if (r.read_modify_write) {
          updates = true;
          y += r.source_bytes;
          y_moved += s.executions * r.source_bytes;
          y_elems += r.source_bytes / run;
        } else {
          x += r.source_bytes;
          x_moved += s.executions * r.source_bytes;
          x_elems += r.source_bytes / run;
          gathers += r.accesses;
        }
      }
      if (updates) scatter_bytes += s.executions * std::max(0.0, s.work->compulsory_bytes - stage_sources);
    }
    // Only a gather paired with a scatter (an SpMV-like design) is known to tile this way.
    if (x > 0 && y > 0 && x_elems > 0 && y_elems > 0) {
      const double tiles = std::max(1.0, std::ceil(y / kOutputTileBytes[c.end]));
      const double channel = kVectorChannels * t.memory_channel_bytes_per_s * c.stream_eff;
      out.vectors = channel > 0 ? (tiles * x_moved + y_moved) / channel : 0.0;
      out.vectors_overlap = c.end == 0;
      matrix_io = std::max(0.0, io_bytes - xy_io);
      spill += (tiles - 1) * x_moved;
      // its density: nonzeros (the gathers) / (rows x columns)
      const bool sparse = gathers / (x_elems * y_elems) <= kLowDensity;
      // the same test at every end: the nominal design's output tile
      out.structure_dependent = sparse || y > kOutputTileBytes[1];
    }
    // The output's rows are dealt to the PEs (or banks) that update them: with or without its
    // gather, a scatter runs at the pace of its most loaded PE.
    if (y > 0 && row_imbalance >= 1 && c.end > 0) {
      out.pe_factor = std::max(1.0, row_imbalance / kBalancedUpTo) *
                      (c.end == 2 && row_imbalance >= kImbalanced ? kRawDistanceCycles : 1.0);
      out.pe_memory = scatter_bytes / stream_bytes_per_s(t, c);  // on chip: no random traffic
    }
  }
  out.memory_bytes = io_bytes + spill;
  out.memory = (matrix_io + spill) / stream_bytes_per_s(t, c) + out.random;
  out.restructured = true;
  return out;
}

Parts op_parts(const CardWork& w, Precision p, const FpgaTarget& t, const Corner& c, Scenario s, double row_imbalance) {
  const Parts out = as_compiled_parts(w, p, t, c);
  if (s == Scenario::kAsCompiled) return out;
  // Restructured: the op alone as a dataflow design, its compulsory traffic streamed once (an
  // op that reads only part of an operand, a slice, needs no more than it moves as compiled).
  const DataflowStage stage{&w, p, 1.0, 0.0};
  const double io = w.random.empty() ? std::min(w.compulsory_bytes, w.stream_bytes) : w.compulsory_bytes;
  const Parts r = dataflow_parts({stage}, io, t, c, row_imbalance);  // a second pass over memory is added there
  // The slow end of a design whose time the matrix's structure decides is the design whose tiles
  // find no reuse: each gather and update a random access to card memory, as compiled.
  if (c.end == 2 && r.structure_dependent) return out;
  return r.time() < out.time() ? r : out;
}

std::string limit_of(const Parts& p) {
  const double t = p.time();
  if (t <= 0) return "";
  if (p.sort == t) return "sort";
  if (p.cycles == t && p.cycles > std::max({p.compute, p.access()})) return "cycles";
  // the tiled vectors' loads and stores are memory traffic over their channels
  if (p.access() == t && p.onchip > 0 && p.onchip >= std::max(p.memory, p.vectors)) return "on-chip access";
  if (p.compute == t) return "compute";
  return p.random > p.memory - p.random + p.vectors ? "random access" : "memory";
}

}  // namespace

void validate_row_imbalance(double row_imbalance) {
  if (row_imbalance == 0) return;
  if (!std::isfinite(row_imbalance) || row_imbalance < 1 || row_imbalance > 1e9) {
    char got[64];
    std::snprintf(got, sizeof got, "%g", row_imbalance);
    throw Error(ErrorKind::kInvalidArgument,
                std::string("row_imbalance ") + got +
                    " is not a row imbalance ratio: give HiSpMV's delta (the most loaded of P PEs' nonzeros over "
                    "NNZ / P, rows dealt cyclically; 1 = balanced, at most P), e.g. from "
                    "fpgaprof.fpga.row_imbalance(row_lengths), or 0 when not known");
  }
}

void widen_for_structure(TimeRange& restructured, const TimeRange& as_compiled) {
  restructured.high = std::max(restructured.high, as_compiled.high);
}

OpCardEstimate estimate_op_on_card(const CardWork& work, Precision p, const FpgaTarget& t, Scenario scenario,
                                   double row_imbalance) {
  OpCardEstimate e;
  if (!work.known) {
    e.note = "not estimated: no FLOP/byte count";
    e.compute_s = e.memory_s = e.time_s = {kNaN, kNaN, kNaN};
    e.memory_bytes = e.memory_efficiency = kNaN;
    return e;
  }
  const bool sorts = work.sort_length > 0;
  if (!sorts && work.flops > 0 && t.flops_per_s(p) <= 0) {
    e.note = std::string("the card has no DSP mapping for ") + precision_name(p) +
             " (its dsps_per_fma and flops_per_s are 0): not offloadable";
    e.compute_s = e.memory_s = e.time_s = {kNaN, kNaN, kNaN};
    e.memory_bytes = e.memory_efficiency = kNaN;
    return e;
  }
  e.estimated = true;
  Parts nominal;
  for (End end : kEnds) {
    const Parts parts = op_parts(work, p, t, corner(t, end), scenario, row_imbalance);
    set_end(e.compute_s, end, std::max(parts.compute, parts.sort));
    set_end(e.memory_s, end, parts.access());  // streamed, on chip and the tiled vectors
    set_end(e.time_s, end, parts.time());
    if (end == End::kNominal) nominal = parts;
  }
  e.onchip = nominal.restructured && nominal.onchip > 0;
  e.structure_dependent = nominal.restructured && nominal.structure_dependent;
  e.memory_bytes = nominal.memory_bytes;
  e.memory_efficiency = nominal.memory > 0 ? e.memory_bytes / (nominal.memory * t.memory_bytes_per_s())
                                           : t.stream_efficiency.nominal * t.channel_share.nominal;
  e.limit = limit_of(nominal);
  if (sorts) e.note = "sort: at the measured sort rate of published designs";
  return e;
}

TimeRange dataflow_time(const std::vector<DataflowStage>& stages, const DataflowIo& io, const FpgaTarget& t,
                        bool* onchip, bool* structure_dependent, double row_imbalance) {
  TimeRange r;
  for (End end : kEnds) {
    const Corner c = corner(t, end);
    // The re-reads share the end's on-chip room with each other and with the arrays the
    // design's data-dependent accesses keep there (dataflow_parts, when they fit): one kept on
    // chip takes its bytes from what is left; one that does not fit what is left is read again.
    const double room = c.onchip_share * t.sram_bytes;
    const double sources = random_sources(stages);
    double left = sources <= room ? room - sources : room;
    double io_bytes = io.bytes;
    if (io.rereads != nullptr)
      for (const double bytes : *io.rereads) {
        if (bytes <= left)
          left -= bytes;
        else
          io_bytes += io.reread_times * bytes;
      }
    const Parts parts = dataflow_parts(stages, io_bytes, t, c, row_imbalance);
    set_end(r, end, parts.time());
    if (end == End::kNominal && onchip != nullptr) *onchip = parts.onchip > 0;
    if (end == End::kNominal && structure_dependent != nullptr) *structure_dependent = parts.structure_dependent;
  }
  return r;
}

TimeRange link_time(double bytes, double buffers, const FpgaTarget& t, double gpu_link_bytes_per_s) {
  TimeRange r;
  for (End end : kEnds) {
    const Corner c = corner(t, end);
    double link = t.link_bytes_per_s * c.link_eff;
    if (gpu_link_bytes_per_s > 0) link = std::min(link, gpu_link_bytes_per_s);
    set_end(r, end, (link > 0 ? bytes / link : 0.0) + buffers * c.transfer_latency);
  }
  return r;
}
}  // namespace fpgaprof::analysis

// What one optimized HLO module holds in memory over its schedule, from XLA's buffer
// assignment and live ranges (hlo/buffer_assignment.hpp), and what one of its instructions needs
// on chip. Sizes in bytes; positions are indices into the flattened schedule
// (LiveRanges::sequence). Pure functions; results own their data. docs/fpga-model.md, "On-chip
// sizes from XLA".
//
// Counting rules (module_memory):
// - A buffer is a slice of an allocation (allocation, offset, size). A value is live at every
//   position of its live range [start, end], both ends included (an instruction's operands and
//   its result are live at its position together); the values sharing a slice (an in-place
//   update, a loop-carried buffer) count once while any of them is live.
// - Tuple index tables (values whose shape is a tuple: pointers, not data) and thread-local
//   allocations (scratch inside a called computation) are not counted in the peak; their bytes
//   are reported apart.
// - A parameter or constant value without a live range is live over the whole schedule; any
//   other value without one is not placed (counted in unplaced_values).
// - Without live ranges the peak is the sum of the counted buffers (an upper bound:
//   peak_source "allocation sizes").
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "fpgaprof/hlo/buffer_assignment.hpp"
#include "fpgaprof/hlo/hlo_module.hpp"

namespace fpgaprof::analysis {

// One buffer (allocation slice) and what lives in it.
struct ModuleBuffer {
  uint32_t allocation = 0;
  uint64_t offset_bytes = 0;
  uint64_t size_bytes = 0;
  hlo::AllocationKind kind = hlo::AllocationKind::kTemporary;
  std::string producer;             // the instruction of its largest value (at the peak: the live one)
  std::vector<std::string> values;  // every value's key ("name{index}"), by value id
  std::string shape;                // the producer value's shape
  std::string op_name;              // the producer's metadata op_name ("" without the HLO)
  std::string source;               // the producer's "file:line" ("" unknown)
  int64_t start = -1, end = -1;     // first and last live position (inclusive); -1 not placed
};

struct ModuleMemory {
  std::string module;
  uint32_t module_index = 0;  // into TraceStore::hlo_modules (analyze_trace)
  int64_t program_id = -1;
  // "xla live ranges": the peak over the schedule from the live ranges; "allocation sizes":
  // no live ranges, every counted buffer at once (an upper bound).
  std::string peak_source;
  uint64_t peak_bytes = 0;
  int64_t peak_position = -1;    // first position at the peak (-1 without live ranges)
  std::string peak_instruction;  // sequence[peak_position] ("" at the schedule's end)
  uint64_t xla_peak_bytes = 0;   // what XLA's own live-range dump lists at its peak (0 absent)
  // Bytes of the counted buffers by kind (each buffer once), and what is left out of the peak.
  uint64_t parameter_bytes = 0, output_bytes = 0, temporary_bytes = 0, constant_bytes = 0;
  uint64_t thread_local_bytes = 0;  // thread-local allocations
  uint64_t tuple_table_bytes = 0;   // tuple index tables
  uint64_t allocation_bytes = 0;    // every allocation's size (XLA's "total bytes")
  uint32_t allocation_count = 0;
  uint32_t unplaced_values = 0;
  std::vector<ModuleBuffer> live_at_peak;  // largest first
  std::vector<ModuleBuffer> buffers;       // every counted buffer, largest first
  std::vector<std::string> sequence;       // the schedule (empty without live ranges)
  std::vector<uint64_t> live_bytes;        // bytes live at each position 0..max (max + 1 entries)
};

// `module` may be nullptr (no HLO text: no op names nor source lines); `ranges` nullptr without
// a live-range dump.
ModuleMemory module_memory(const std::string& module_name, const hlo::BufferAssignment& assignment,
                           const hlo::LiveRanges* ranges, const hlo::Module* module);

// What one instruction (a candidate op) needs on chip while it runs, from the buffer
// assignment: its operands' buffers (each distinct operand once; the operand's shape when no
// value of that name is assigned, e.g. a get-tuple-element), its own values (outputs) and the
// values of the computations it calls, recursively (temporaries: a fusion's scratch, a loop
// body's buffers). Tuple index tables are left out. known false when the instruction is not in
// `module`.
struct OnChipNeed {
  bool known = false;
  uint64_t input_bytes = 0;
  uint64_t output_bytes = 0;
  uint64_t temporary_bytes = 0;
  uint64_t total_bytes() const { return input_bytes + output_bytes + temporary_bytes; }
};
OnChipNeed onchip_need(const hlo::Module& module, const hlo::BufferAssignment& assignment,
                       const std::string& instruction);

}  // namespace fpgaprof::analysis

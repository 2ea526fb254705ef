#include "fpgaprof/analysis/module_memory.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace fpgaprof::analysis {
namespace {

using hlo::AllocationKind;
using hlo::BufferAllocation;
using hlo::BufferValue;

struct Interval {
  int64_t start, end;  // inclusive
};

struct Slice {
  ModuleBuffer buffer;
  std::vector<const BufferValue*> values;
  std::vector<Interval> live;        // merged, sorted
  std::vector<Interval> value_live;  // per value (same order as values; start -1: none)
};

std::string source_of(const hlo::Instruction* ins) {
  if (ins == nullptr || ins->metadata().source_line < 0) return {};
  return ins->metadata().source_file + ":" + std::to_string(ins->metadata().source_line);
}

void describe(ModuleBuffer& b, const BufferValue& v, const hlo::Module* module) {
  b.producer = v.instruction;
  b.shape = v.shape;
  const hlo::Instruction* ins = module != nullptr ? module->find_instruction(v.instruction) : nullptr;
  b.op_name = ins != nullptr ? ins->metadata().op_name : std::string();
  b.source = source_of(ins);
}

std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (!out.empty() && i.start <= out.back().end + 1)
      out.back().end = std::max(out.back().end, i.end);
    else
      out.push_back(i);
  }
  return out;
}

bool counted(const BufferAllocation& a, const BufferValue& v) {
  return a.kind != AllocationKind::kThreadLocal && !v.is_tuple_table();
}

bool largest_first(const ModuleBuffer& a, const ModuleBuffer& b) {
  return std::tie(b.size_bytes, a.allocation, a.offset_bytes) < std::tie(a.size_bytes, b.allocation, b.offset_bytes);
}

}  // namespace

ModuleMemory module_memory(const std::string& module_name, const hlo::BufferAssignment& assignment,
                           const hlo::LiveRanges* ranges, const hlo::Module* module) {
  ModuleMemory out;
  out.module = module_name;
  out.allocation_count = static_cast<uint32_t>(assignment.allocations.size());
  std::unordered_map<std::string, Interval> range_of;
  if (ranges != nullptr)
    for (const hlo::LiveRange& r : ranges->ranges) range_of.emplace(r.value, Interval{r.start, r.end});
  const int64_t max_time = ranges != nullptr ? ranges->max_time : 0;

  std::vector<Slice> slices;
  std::map<std::tuple<uint32_t, uint64_t, uint64_t>, std::size_t> slice_of;
  for (const BufferAllocation& a : assignment.allocations) {
    out.allocation_bytes += a.size_bytes;
    if (a.kind == AllocationKind::kThreadLocal) out.thread_local_bytes += a.size_bytes;
    for (const BufferValue& v : a.values) {
      if (a.kind != AllocationKind::kThreadLocal && v.is_tuple_table()) out.tuple_table_bytes += v.size_bytes;
      if (!counted(a, v)) continue;
      auto [it, fresh] = slice_of.emplace(std::make_tuple(a.index, v.offset_bytes, v.size_bytes), slices.size());
      if (fresh) {
        Slice s;
        s.buffer.allocation = a.index;
        s.buffer.offset_bytes = v.offset_bytes;
        s.buffer.size_bytes = v.size_bytes;
        s.buffer.kind = a.kind;
        slices.push_back(std::move(s));
      }
      Slice& s = slices[it->second];
      s.values.push_back(&v);
      s.buffer.values.push_back(v.key());
      Interval live{-1, -1};
      if (ranges != nullptr) {
        auto r = range_of.find(v.key());
        if (r != range_of.end())
          live = r->second;
        else if (a.kind == AllocationKind::kParameter || a.kind == AllocationKind::kConstant)
          live = {0, max_time};
        else
          out.unplaced_values += 1;
      }
      s.value_live.push_back(live);
      if (live.start >= 0) s.live.push_back(live);
    }
  }

  for (Slice& s : slices) {
    s.live = merged(std::move(s.live));
    if (!s.live.empty()) {
      s.buffer.start = s.live.front().start;
      s.buffer.end = s.live.back().end;
    }
    const BufferValue* biggest = s.values.front();
    for (const BufferValue* v : s.values)
      if (v->size_bytes > biggest->size_bytes) biggest = v;
    describe(s.buffer, *biggest, module);
    switch (s.buffer.kind) {
      case AllocationKind::kParameter: out.parameter_bytes += s.buffer.size_bytes; break;
      case AllocationKind::kOutput: out.output_bytes += s.buffer.size_bytes; break;
      case AllocationKind::kConstant: out.constant_bytes += s.buffer.size_bytes; break;
      default: out.temporary_bytes += s.buffer.size_bytes; break;
    }
  }

  if (ranges == nullptr) {
    out.peak_source = "allocation sizes";
    for (const Slice& s : slices) out.peak_bytes += s.buffer.size_bytes;
    for (const Slice& s : slices) out.live_at_peak.push_back(s.buffer);
  } else {
    out.peak_source = "xla live ranges";
    out.xla_peak_bytes = ranges->xla_peak_bytes;
    out.sequence = ranges->sequence;
    // Difference array over positions 0..max (max is bounded by the parser: sequence + 1).
    std::vector<int64_t> diff(static_cast<std::size_t>(max_time) + 2, 0);
    for (const Slice& s : slices)
      for (const Interval& i : s.live) {
        diff[static_cast<std::size_t>(i.start)] += static_cast<int64_t>(s.buffer.size_bytes);
        diff[static_cast<std::size_t>(i.end) + 1] -= static_cast<int64_t>(s.buffer.size_bytes);
      }
    int64_t running = 0;
    out.live_bytes.reserve(static_cast<std::size_t>(max_time) + 1);
    for (int64_t t = 0; t <= max_time; ++t) {
      running += diff[static_cast<std::size_t>(t)];
      const uint64_t live = static_cast<uint64_t>(std::max<int64_t>(running, 0));
      out.live_bytes.push_back(live);
      if (out.peak_position < 0 || live > out.peak_bytes) {
        out.peak_bytes = live;
        out.peak_position = t;
      }
    }
    const int64_t p = out.peak_position;
    if (p >= 0 && static_cast<std::size_t>(p) < out.sequence.size())
      out.peak_instruction = out.sequence[static_cast<std::size_t>(p)];
    for (const Slice& s : slices) {
      bool live = false;
      for (const Interval& i : s.live) live = live || (i.start <= p && p <= i.end);
      if (!live) continue;
      ModuleBuffer b = s.buffer;
      // The value live at the peak names the buffer there.
      const BufferValue* at_peak = nullptr;
      for (std::size_t k = 0; k < s.values.size(); ++k) {
        const Interval& i = s.value_live[k];
        if (i.start >= 0 && i.start <= p && p <= i.end &&
            (at_peak == nullptr || s.values[k]->size_bytes > at_peak->size_bytes))
          at_peak = s.values[k];
      }
      if (at_peak != nullptr) describe(b, *at_peak, module);
      out.live_at_peak.push_back(std::move(b));
    }
  }
  std::sort(out.live_at_peak.begin(), out.live_at_peak.end(), largest_first);
  out.buffers.reserve(slices.size());
  for (Slice& s : slices) out.buffers.push_back(std::move(s.buffer));
  std::sort(out.buffers.begin(), out.buffers.end(), largest_first);
  return out;
}

OnChipNeed onchip_need(const hlo::Module& module, const hlo::BufferAssignment& assignment,
                       const std::string& instruction) {
  OnChipNeed need;
  const hlo::Instruction* ins = module.find_instruction(instruction);
  if (ins == nullptr) return need;
  need.known = true;
  // Bytes of the values each instruction defines (tuple index tables left out); thread-local
  // ones apart: they are scratch of a called computation, never an operand or a result.
  std::unordered_map<std::string, uint64_t> bytes_of, scratch_of;
  for (const BufferAllocation& a : assignment.allocations)
    for (const BufferValue& v : a.values) {
      if (v.is_tuple_table()) continue;
      (a.kind == AllocationKind::kThreadLocal ? scratch_of : bytes_of)[v.instruction] += v.size_bytes;
    }
  std::set<std::string> seen;
  for (std::size_t i = 0; i < ins->operands.size(); ++i) {
    if (!seen.insert(ins->operands[i]).second) continue;
    auto it = bytes_of.find(ins->operands[i]);
    if (it != bytes_of.end())
      need.input_bytes += it->second;
    else if (i < ins->operand_shapes().size())
      need.input_bytes += static_cast<uint64_t>(std::max<int64_t>(ins->operand_shapes()[i].byte_size(), 0));
  }
  auto own = bytes_of.find(ins->name);
  need.output_bytes =
      own != bytes_of.end() ? own->second : static_cast<uint64_t>(std::max<int64_t>(ins->shape.byte_size(), 0));
  // The computations it calls, each once.
  std::set<std::string> visited;
  std::vector<std::string> todo(ins->called_computations().begin(), ins->called_computations().end());
  while (!todo.empty()) {
    const std::string name = std::move(todo.back());
    todo.pop_back();
    if (!visited.insert(name).second) continue;
    const hlo::Computation* c = module.find(name);
    if (c == nullptr) continue;
    for (const hlo::Instruction& inner : c->instructions) {
      auto b = bytes_of.find(inner.name);
      if (b != bytes_of.end()) need.temporary_bytes += b->second;
      auto sc = scratch_of.find(inner.name);
      if (sc != scratch_of.end()) need.temporary_bytes += sc->second;
      for (const std::string& callee : inner.called_computations()) todo.push_back(callee);
    }
  }
  return need;
}

}  // namespace fpgaprof::analysis

// OpInputs: joins attribution (kernel/copy -> HLO op) with the parsed HLO modules into the
// per-op static costs and index mappings that the roofline, transfer and FPGA analyses take.
// Pure function; the result owns its data.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "fpgaprof/analysis/attribution.hpp"
#include "fpgaprof/analysis/roofline.hpp"
#include "fpgaprof/hlo/hlo_module.hpp"
#include "fpgaprof/trace_store.hpp"

namespace fpgaprof::analysis {

struct OpInputs {
  std::vector<OpCost> ops;              // one per AttributionResult::ops entry, same order
  std::vector<std::string> sources;     // "file:line" per op ("" unknown)
  std::vector<std::string> categories;  // attribution category per op
  std::vector<uint32_t> op_of_kernel;   // per TraceStore::kernels entry (kNone32: none)
  std::vector<uint32_t> op_of_memcpy;   // per TraceStore::memcpys entry
  std::vector<double> host_bytes;       // per op: HtoD + DtoH bytes of copies in its thunks
};

// Bytes one call of the module takes in and gives back: its entry computation's parameters
// plus its root (tuple elements summed). 0 without an entry computation.
double module_io_bytes(const hlo::Module& module);
// How many arrays that is (entry parameters + root leaves): host-link transfers per call.
double module_io_buffers(const hlo::Module& module);
// The entry parameters one call reads again after an op summarized them, the bytes of each,
// once per op that needs one again: an op that combines a parameter's elements into a result
// smaller than it (a reduction, reduce-window, dot, convolution, sort, library call, or a
// fusion holding one) must see all of it before anything that depends on its result runs
// (x / sum(x)), so a later reader reads it from card memory again unless it stays on chip: a
// dataflow design adds those larger than its on-chip room to its io. A gather, slice or
// per-element op reads only what it takes and summarizes nothing.
std::vector<double> module_reread_bytes(const hlo::Module& module);
// What each op without a cost hands to and takes from the module's ops with one (Handoff,
// roofline.hpp), per execution, each array once, seen through bitcasts and get-tuple-elements:
// the entry computation's ops, and those of the computations it runs (while bodies, calls,
// branches) with the ops of their own computation; in a while body also the loop state a card
// op computed on the previous trip and the state a card op reads on the next. Where one op
// alone runs a computation, also its arguments a card op of the caller computed and its
// results a card op of the caller reads, each time it runs; a loop's once a loop (the state
// from before it that no card op of the body replaces, the results read after it): a known
// trip count's share of each trip, each trip without one. Keyed by the op's name; ops that
// hand nothing are left out.
std::unordered_map<std::string, Handoff> module_handoff(const hlo::Module& module);

// `modules[i]` belongs to store.hlo_modules[i] (an empty name: unavailable); may be empty,
// then precision and working set fall back to fp32 and bytes written.
OpInputs op_inputs(const TraceStore& store, const AttributionResult& attribution,
                   const std::vector<hlo::Module>& modules);

}  // namespace fpgaprof::analysis

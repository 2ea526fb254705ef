// CardWork: what one execution of an HLO instruction asks of an FPGA card, read from the
// parsed, costed module (hlo::analyze_hlo): its arithmetic, its device-memory traffic split by
// how a card's memory serves it (streamed, or data-dependent accesses of some contiguous
// size into some array), the compulsory traffic a dedicated design needs, and the shape facts
// of the operations that are not one streaming pass (sort, FFT). The FPGA model
// (fpga_model.hpp) turns it into seconds on a card. Rules and worked cases: docs/fpga-model.md,
// "What an op asks of the card". Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fpgaprof/hlo/hlo_module.hpp"

namespace fpgaprof::analysis {

// Data-dependent accesses of one gather or scatter into one array.
struct RandomTraffic {
  double bytes = 0;         // bytes the accesses move (read + written), per execution
  double accesses = 0;      // number of data-dependent accesses (each reads or writes run_bytes)
  double run_bytes = 0;     // contiguous bytes per access (element size x contiguous slice)
  double source_bytes = 0;  // size of the array they land in
  // Which array that is: its name, through bitcasts and out of while bodies that carry it
  // unchanged in their loop state, with the computation it is named in, hashed (0: not known,
  // counted as its own). Accesses of one array from several gathers share it on chip.
  uint64_t source_id = 0;
  bool read_modify_write = false;  // scatter: every update reads and writes its target
  // A restructured design's accesses where fewer (-1: `accesses`): a gather XLA evaluates per
  // element its outer gathers take, read once instead and the outer gathers served from it.
  double restructured_accesses = -1;
};

struct CardWork {
  bool known = false;  // the cost model has a FLOP/byte count (no unknown custom call)
  double flops = 0;    // as hlo::Cost::flops, but an FFT's at 5 N log2 N (docs/fpga-model.md)
  double transcendentals = 0;
  double bytes = 0;  // as compiled, read + written (= hlo::Cost::bytes_accessed)
  // As compiled: bytes - random bytes stream (contiguous, in bursts); `random` holds the
  // data-dependent accesses of the gathers and scatters (none for other ops).
  double stream_bytes = 0;
  std::vector<RandomTraffic> random;
  // Compulsory: each distinct input array read once, the large constants inside, each output
  // written once.
  double compulsory_bytes = 0;
  double constant_bytes = 0;     // constants of more than one element inside a fusion
  double working_set_bytes = 0;  // hlo::Cost::working_set_bytes
  double input_bytes = 0;        // distinct operands: what crosses the host link in
  double output_bytes = 0;       // outputs (array leaves)
  double input_buffers = 0;      // distinct input arrays (host-link transfers in)
  double output_buffers = 0;     // output array leaves (host-link transfers out)
  // Sort: keys per sort (the sorted dimension), independent sorts, bytes per element moved
  // (keys + values of every operand).
  double sort_length = 0, sort_count = 0, sort_element_bytes = 0;
  // FFT: points per transform (product of fft_length), transforms, bytes per point.
  double fft_length = 0, fft_count = 0, fft_point_bytes = 0;
  double random_bytes() const;
};

// The card work of `ins`, an instruction of `module` (costed by analyze_costs). Fusions are
// read through their fused computation: a gather whose operand 0 is a fused parameter (through
// views and per-element ops: a bitcast, a convert, a scale by a broadcast scalar) reads that
// parameter at random instead of streaming it; a scatter into a
// fused parameter updates it in place at random (read and write). Other ops stream.
CardWork card_work(const hlo::Module& module, const hlo::Instruction& ins);

// A CardWork from totals alone (no HLO at hand: an op known only by its FLOPs and bytes): every
// byte streams, the inputs and outputs are one buffer each, compulsory = what it moves.
CardWork card_work_from_totals(double flops, double bytes_read, double bytes_written);

// Contiguous bytes one access of a gather moves: the slice's extent along the operand's
// minor-to-major dimensions while it spans each whole dimension, times the element size.
double gather_run_bytes(const hlo::Instruction& gather);
// The same for a scatter's update window into operand 0.
double scatter_run_bytes(const hlo::Instruction& scatter);

}  // namespace fpgaprof::analysis

// Board power of an FPGA card and the energy of card time. Each preset carries the board power
// that published measurements give for cards of its memory type (HBM2: U55C and U280; DDR4: U250
// and U200; HBM2e: V80), with the range of those measurements, and its own maximum; a figure that was not
// found is left unknown (zero), never filled in. The measurements, their sources and the rule that
// turns them into each value: python/fpgaprof/data/fpga_card_power.json and docs/fpga-model.md,
// "Card power". Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "fpgaprof/analysis/fpga_model.hpp"

namespace fpgaprof::analysis {

// The board power of one card, in watts. Each Calibrated is either known (0 < low <= nominal <=
// high) or unknown (all three 0: no published figure).
struct CardPower {
  std::string card;     // a preset name ("alveo-u280") or the custom card's name
  Calibrated idle_w;    // the board with its shell loaded and no kernel running
  Calibrated loaded_w;  // the board while a memory-bound design runs: what card time is charged at
  double max_w = 0;     // the most the board may draw (its vendor's limit); 0: not known
  std::string basis;    // where the figures come from, in one line (or why they are unknown)

  bool has_idle() const { return idle_w.nominal > 0; }
  bool has_loaded() const { return loaded_w.nominal > 0; }
};

// One entry per FPGA preset (fpga_presets()), in the same order, each with what was found.
const std::vector<CardPower>& card_power_presets();
// Throws Error(kInvalidArgument) naming the presets when `preset` is unknown.
const CardPower& card_power(const std::string& preset);

// Throws Error(kInvalidArgument) naming the field and the fix when `p` cannot be used: no card
// name; a Calibrated that is neither unknown (all 0) nor finite with 0 < low <= nominal <= high;
// a value over 2000 W (no PCIe card draws that: a figure in mW or uW is refused); max_w negative,
// not finite, or (when known) below loaded_w.high or idle_w.high.
void validate_card_power(const CardPower& p);

// The energy of `card_time` seconds (low <= nominal <= high, finite, >= 0) on a card drawing
// `p.loaded_w`: {low x low, nominal x nominal, high x high}. Throws Error(kInvalidArgument) when
// the time is not such a range, when `p` is invalid, or when its loaded power is unknown (the
// message names the card and says to give loaded_w).
EnergyRange card_energy(const TimeRange& card_time, const CardPower& p);

// The energy of `card_time` on `target` at its loaded_w (the FPGA model's rows): card_energy with
// the target's power; all NaN when the time is not finite (not estimated) or the target's power is
// unknown (loaded_w all 0). Throws as card_energy otherwise.
EnergyRange card_energy_on(const TimeRange& card_time, const FpgaTarget& target);

}  // namespace fpgaprof::analysis

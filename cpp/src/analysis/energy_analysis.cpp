#include "fpgaprof/analysis/energy_analysis.hpp"

#include <algorithm>
#include <limits>
#include <map>

#include "fpgaprof/analysis/interval_set.hpp"

namespace fpgaprof::analysis {
namespace {

constexpr uint32_t kUnattributedBucket = kNone32;
constexpr uint32_t kCopyBucket = kNone32 - 1;

// One device's samples as a cumulative energy curve (see the header).
class DeviceCurve {
 public:
  explicit DeviceCurve(std::vector<PowerSampleRecord> samples) : s_(std::move(samples)) {
    std::stable_sort(s_.begin(), s_.end(),
                     [](const PowerSampleRecord& a, const PowerSampleRecord& b) { return a.time_ns < b.time_ns; });
    for (const auto& r : s_) has_counter_ |= r.energy_mj != kNoEnergy;
    // A counter that never changed while it was read (a trace shorter than its update period,
    // or a stuck counter) says nothing of the energy: the power readings do.
    if (has_counter_ && s_.size() >= 2 && s_.back().time_ns > s_.front().time_ns) {
      uint64_t first = kNoEnergy;
      bool changed = false;
      for (const auto& r : s_) {
        if (r.energy_mj == kNoEnergy) continue;
        if (first == kNoEnergy) first = r.energy_mj;
        changed |= r.energy_mj != first;
      }
      if (!changed) {
        flat_counter_ = true;
        for (auto& r : s_) r.energy_mj = kNoEnergy;
      }
    }
    build();
  }

  bool empty() const { return s_.empty(); }
  // The span the curve covers: from its first knot to its last (with a counter, its first and
  // last steps; see build()).
  uint64_t first_ns() const { return t_.front(); }
  uint64_t last_ns() const { return t_.back(); }
  bool has_counter() const { return has_counter_; }
  // The counter never changed over the readings: the curve integrates the power readings.
  bool flat_counter() const { return flat_counter_; }
  uint64_t backwards() const { return backwards_; }
  const std::vector<PowerSampleRecord>& samples() const { return s_; }
  std::size_t knots() const { return t_.size(); }
  uint64_t knot_ns(std::size_t i) const { return t_[i]; }
  std::vector<uint64_t>::const_iterator knot_ns_begin() const { return t_.begin(); }
  std::vector<uint64_t>::const_iterator knot_ns_end() const { return t_.end(); }
  double knot_j(std::size_t i) const { return c_[i]; }

  // Watts of reading m (0 when its power is unknown).
  double watts(std::size_t m) const { return s_[m].power_mw == kNoPower ? 0.0 : s_[m].power_mw / 1000.0; }

  // C(t), t clamped to the sampled span.
  double at(uint64_t t) const {
    if (t <= t_.front()) return c_.front();
    if (t >= t_.back()) return c_.back();
    const std::size_t i = static_cast<std::size_t>(std::upper_bound(t_.begin(), t_.end(), t) - t_.begin()) - 1;
    const double f = static_cast<double>(t - t_[i]) / static_cast<double>(t_[i + 1] - t_[i]);
    return c_[i] + f * (c_[i + 1] - c_[i]);
  }

  // Whether every knot segment overlapping [a, b) comes from the counter.
  bool counter_only(uint64_t a, uint64_t b) const {
    if (t_.size() < 2) return has_counter_ && !flat_counter_;
    std::size_t i = static_cast<std::size_t>(std::upper_bound(t_.begin(), t_.end(), a) - t_.begin());
    i = i == 0 ? 0 : i - 1;
    for (; i + 1 < t_.size() && t_[i] < b; ++i) {
      if (!from_counter_[i + 1]) return false;
    }
    return true;
  }

  // The highest power in force during [a, b) (0 when none known): a reading without power
  // holds the one before it, as in the energy, for one reading (a read that failed once); from
  // the second such reading in a row (the sampler stops reading power after repeated failures)
  // the power in force is unknown, and so is the window's peak: the held reading could sit
  // under the window's mean. No reading with power in the device's samples: 0, unknown.
  double peak_w(uint64_t a, uint64_t b) const {
    if (!power_known_) return 0.0;
    std::size_t m = static_cast<std::size_t>(
        std::upper_bound(s_.begin(), s_.end(), a,
                         [](uint64_t t, const PowerSampleRecord& r) { return t < r.time_ns; }) -
        s_.begin());
    const auto unknown = [&](std::size_t k) {
      return k > 0 && s_[k].power_mw == kNoPower && s_[k - 1].power_mw == kNoPower;
    };
    if (m > 0 && unknown(m - 1)) return 0.0;
    double peak = m > 0 ? held_w_[m - 1] : 0.0;  // in force at a
    for (; m < s_.size() && s_[m].time_ns < b; ++m) {
      if (unknown(m)) return 0.0;
      peak = std::max(peak, held_w_[m]);
    }
    return peak;
  }

 private:
  // Power integral over readings [i, j): each reading's power held until the next reading.
  double power_joules(std::size_t i, std::size_t j) const {
    double e = 0;
    for (std::size_t m = i; m < j; ++m) e += held_w_[m] * static_cast<double>(s_[m + 1].time_ns - s_[m].time_ns) / 1e9;
    return e;
  }

  // The power in force from each reading to the next: its own; a reading without power is no
  // reading, so the last known one before it stays in force (the first known one after it
  // when none came before); 0 W only when no reading of this device has power.
  void hold_power() {
    held_w_.assign(s_.size(), 0.0);
    double held = 0.0;
    bool known = false;
    for (std::size_t m = 0; m < s_.size(); ++m) {
      if (s_[m].power_mw != kNoPower) {
        held = watts(m);
        if (!known) std::fill(held_w_.begin(), held_w_.begin() + static_cast<std::ptrdiff_t>(m), held);
        known = true;
      }
      held_w_[m] = held;
    }
    power_known_ = known;
  }

  void add_knot(std::size_t m, double c, bool counter) {
    if (!t_.empty() && s_[m].time_ns == t_.back()) {  // same time: keep the later value
      c_.back() = c;
      from_counter_.back() = from_counter_.back() && counter;
      return;
    }
    t_.push_back(s_[m].time_ns);
    c_.push_back(c);
    from_counter_.push_back(counter);
  }

  // With a counter the curve ends at its last step: the readings after it saw energy the
  // counter has not yet added (a flat stretch is not 0 W). It starts at the first reading,
  // unless the counter steps less often than it is read and its first step came sooner than
  // about one update period (the median time between steps) after the first reading: that
  // step's energy began before the trace, and the curve starts at the step. Those ends are left
  // unsampled, so the coverage of a window there says it.
  std::size_t first_knot() const {
    if (s_.front().energy_mj == kNoEnergy) return 0;
    // The time between two rises of the counter with only readings of the same value between
    // them (a reload or an unknown value between two rises says nothing of the period).
    std::vector<uint64_t> gaps;
    uint64_t rose_at = 0;
    bool rose = false;
    for (std::size_t j = 1; j < s_.size(); ++j) {
      const uint64_t a = s_[j - 1].energy_mj, b = s_[j].energy_mj;
      if (a == kNoEnergy || b == kNoEnergy || b < a) {
        rose = false;
      } else if (b > a) {
        if (rose) gaps.push_back(s_[j].time_ns - rose_at);
        rose = true;
        rose_at = s_[j].time_ns;
      }
    }
    uint64_t period = 0;
    if (!gaps.empty()) {
      std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
      period = gaps[gaps.size() / 2];
    }
    for (std::size_t j = 1; j < s_.size(); ++j) {
      const uint64_t e = s_[j].energy_mj;
      if (e == s_[0].energy_mj) continue;
      // an unknown or backward value: from the reading before (that interval comes from the
      // power readings); a step: from the first reading, or from the step (above)
      if (e == kNoEnergy || e < s_[0].energy_mj) return j - 1;
      const uint64_t waited = s_[j].time_ns - s_[0].time_ns;
      return period > 0 && static_cast<double>(waited) < 0.75 * static_cast<double>(period) ? j : 0;
    }
    return 0;
  }

  void build() {
    if (s_.empty()) return;
    hold_power();
    const std::size_t start = first_knot();
    add_knot(start, 0.0, true);
    double c = 0;
    std::size_t base = start;  // reading of the last knot
    for (std::size_t j = start + 1; j < s_.size(); ++j) {
      const uint64_t eb = s_[base].energy_mj;
      const uint64_t ej = s_[j].energy_mj;
      if (eb != kNoEnergy && ej != kNoEnergy) {
        if (ej == eb) continue;  // not a step of the counter: interpolated over
        if (ej >= eb) {
          c += static_cast<double>(ej - eb) / 1000.0;
          add_knot(j, c, true);
        } else {
          ++backwards_;  // a reload or a wrap: this interval from the power readings
          c += power_joules(base, j);
          add_knot(j, c, false);
        }
      } else {
        c += power_joules(base, j);
        add_knot(j, c, false);
      }
      base = j;
    }
  }

  std::vector<PowerSampleRecord> s_;
  std::vector<double> held_w_;  // power in force from reading m to the next, W
  bool power_known_ = false;    // some reading has power
  bool has_counter_ = false;
  bool flat_counter_ = false;
  uint64_t backwards_ = 0;
  std::vector<uint64_t> t_;         // knot times, strictly ascending
  std::vector<double> c_;           // C at each knot, J
  std::vector<bool> from_counter_;  // the segment ending at knot i came from the counter
};

EnergyWindow window(const DeviceCurve& d, uint32_t device_id, uint64_t start_ns, uint64_t end_ns) {
  EnergyWindow w;
  w.device_id = device_id;
  w.duration_ns = end_ns > start_ns ? end_ns - start_ns : 0;
  const uint64_t a = std::max(start_ns, d.first_ns());
  const uint64_t b = std::min(end_ns, d.last_ns());
  w.from_counter = d.has_counter() && !d.flat_counter();
  if (b <= a) return w;
  w.coverage_ns = b - a;
  w.joules = d.at(b) - d.at(a);
  w.mean_w = w.joules / (static_cast<double>(w.coverage_ns) / 1e9);
  w.peak_w = d.peak_w(a, b);
  w.from_counter = d.counter_only(a, b);
  return w;
}

struct Activity {
  uint64_t start_ns;
  uint64_t end_ns;
  uint32_t bucket;  // op index, kUnattributedBucket or kCopyBucket
  uint32_t path;    // a kernel's innermost region path; kNone32 for copies and kernels outside regions
};

}  // namespace

EnergyReport analyze_energy(const TraceStore& store, const RegionPaths& paths,
                            const std::vector<uint32_t>& op_of_kernel) {
  EnergyReport r;
  r.sample_period_ns = store.meta.power_sample_period_ns;
  r.update_period_ns = store.meta.energy_update_period_ns;
  std::map<uint32_t, std::vector<PowerSampleRecord>> by_device;
  for (const PowerSampleRecord& s : store.power_samples) by_device[s.device_id].push_back(s);
  if (by_device.empty()) return r;
  r.measured = true;

  std::map<uint32_t, std::vector<Activity>> activities;
  for (std::size_t i = 0; i < store.kernels.size(); ++i) {
    const KernelRecord& k = store.kernels[i];
    if (k.end_ns <= k.start_ns || by_device.count(k.device_id) == 0) continue;
    const uint32_t op = i < op_of_kernel.size() ? op_of_kernel[i] : kNone32;
    activities[k.device_id].push_back(
        {k.start_ns, k.end_ns, op == kNone32 ? kUnattributedBucket : op, paths.path_of(k.region_index)});
  }
  for (const MemcpyRecord& m : store.memcpys) {
    if (m.end_ns > m.start_ns && by_device.count(m.device_id) != 0)
      activities[m.device_id].push_back({m.start_ns, m.end_ns, kCopyBucket, kNone32});
  }
  for (const MemsetRecord& m : store.memsets) {
    if (m.end_ns > m.start_ns && by_device.count(m.device_id) != 0)
      activities[m.device_id].push_back({m.start_ns, m.end_ns, kCopyBucket, kNone32});
  }

  std::map<uint32_t, OpEnergy> ops;
  std::map<std::pair<uint32_t, uint32_t>, PathOpEnergy> path_op;  // (innermost path, op)
  std::vector<DeviceCurve> curves;
  std::vector<uint32_t> ids;
  for (auto& [id, samples] : by_device) {
    curves.emplace_back(std::move(samples));
    ids.push_back(id);
    const DeviceCurve& d = curves.back();
    const auto& acts = activities[id];
    std::vector<std::pair<uint64_t, uint64_t>> spans;
    spans.reserve(acts.size());
    for (const Activity& a : acts) spans.emplace_back(a.start_ns, a.end_ns);
    const IntervalSet busy = IntervalSet::from(std::move(spans));

    DeviceEnergy de;
    de.device_id = id;
    de.samples = d.samples().size();
    de.first_ns = d.first_ns();
    de.last_ns = d.last_ns();
    de.has_counter = d.has_counter();
    de.flat_counter = d.flat_counter();
    de.backwards_intervals = d.backwards();
    de.joules = d.at(de.last_ns) - d.at(de.first_ns);
    if (de.last_ns > de.first_ns) de.mean_w = de.joules / (static_cast<double>(de.last_ns - de.first_ns) / 1e9);
    // Peak: the highest reading in force over the whole record, by the windows' rule (unknown
    // once the sampler stopped reading power: the readings before could sit under the mean).
    const auto& s = d.samples();
    de.peak_w = d.peak_w(s.front().time_ns, s.back().time_ns + 1);
    // Idle power: time-weighted median of the readings in force while nothing runs, over the
    // intervals that start at a reading with power (the others: no_power_ns).
    std::vector<std::pair<double, uint64_t>> idle;  // watts, idle ns
    for (std::size_t m = 0; m + 1 < s.size(); ++m) {
      const uint64_t a = s[m].time_ns, b = s[m + 1].time_ns;
      if (s[m].power_mw == kNoPower) {
        de.no_power_ns += b - a;
        continue;
      }
      const uint64_t free_ns = (b - a) - busy.overlap_ns(a, b);
      if (free_ns > 0) idle.emplace_back(d.watts(m), free_ns);
    }
    uint64_t idle_total = 0;
    for (const auto& [w, ns] : idle) idle_total += ns;
    de.idle_ns = idle_total;
    if (idle_total > 0) {
      std::sort(idle.begin(), idle.end());
      uint64_t acc = 0;
      for (const auto& [w, ns] : idle) {
        acc += ns;
        if (2 * acc >= idle_total) {
          de.idle_w = w;
          break;
        }
      }
    }
    r.devices.push_back(de);
    r.total_joules += de.joules;

    // Attribution over the knot segments of C(t).
    const std::size_t n = d.knots();
    if (n < 2) continue;
    std::vector<uint64_t> activity_ns(n - 1, 0);  // summed activity time per segment
    auto for_segments = [&](const Activity& a, auto&& f) {
      std::size_t i = static_cast<std::size_t>(std::upper_bound(d.knot_ns_begin(), d.knot_ns_end(), a.start_ns) -
                                               d.knot_ns_begin());
      i = i == 0 ? 0 : i - 1;
      for (; i + 1 < n && d.knot_ns(i) < a.end_ns; ++i) {
        const uint64_t lo = std::max(a.start_ns, d.knot_ns(i));
        const uint64_t hi = std::min(a.end_ns, d.knot_ns(i + 1));
        if (hi > lo) f(i, hi - lo);
      }
    };
    for (const Activity& a : acts) for_segments(a, [&](std::size_t i, uint64_t ns) { activity_ns[i] += ns; });
    std::vector<double> busy_share(n - 1, 0.0);  // the busy part of each segment's energy, J
    for (std::size_t i = 0; i + 1 < n; ++i) {
      const uint64_t len = d.knot_ns(i + 1) - d.knot_ns(i);
      const double e = d.knot_j(i + 1) - d.knot_j(i);
      const uint64_t busy_ns = std::min(len, busy.overlap_ns(d.knot_ns(i), d.knot_ns(i + 1)));
      busy_share[i] = activity_ns[i] > 0 ? e * static_cast<double>(busy_ns) / static_cast<double>(len) : 0.0;
      r.idle_joules += e - busy_share[i];
    }
    for (const Activity& a : acts) {
      for_segments(a, [&](std::size_t i, uint64_t ns) {
        const double j = busy_share[i] * static_cast<double>(ns) / static_cast<double>(activity_ns[i]);
        if (a.path != kNone32 && a.bucket != kCopyBucket) {
          const uint32_t op = a.bucket == kUnattributedBucket ? kNone32 : a.bucket;
          PathOpEnergy& pe = path_op[{a.path, op}];
          pe.path = a.path;
          pe.op = op;
          pe.joules += j;
          pe.busy_ns += ns;
        }
        if (a.bucket == kCopyBucket) {
          r.copies_joules += j;
        } else if (a.bucket == kUnattributedBucket) {
          r.unattributed_joules += j;
        } else {
          OpEnergy& o = ops[a.bucket];
          o.op = a.bucket;
          o.joules += j;
          o.busy_ns += ns;
        }
      });
    }
  }

  for (auto& [op, e] : ops) r.ops.push_back(e);
  r.path_op_kernels.reserve(path_op.size());
  for (const auto& [key, e] : path_op) r.path_op_kernels.push_back(e);
  std::stable_sort(r.ops.begin(), r.ops.end(),
                   [](const OpEnergy& a, const OpEnergy& b) { return a.joules > b.joules; });

  // Regions: every device with samples over each region's [start, end).
  r.regions.reserve(store.regions.size() * curves.size());
  std::vector<std::vector<EnergyWindow>> per_path(paths.size(), std::vector<EnergyWindow>(curves.size()));
  std::vector<std::vector<bool>> path_seen(paths.size(), std::vector<bool>(curves.size(), false));
  for (uint32_t ri = 0; ri < store.regions.size(); ++ri) {
    const RegionRecord& reg = store.regions[ri];
    const uint32_t p = paths.path_of(ri);
    for (std::size_t k = 0; k < curves.size(); ++k) {
      const EnergyWindow w = window(curves[k], ids[k], reg.start_ns, reg.end_ns);
      r.regions.emplace_back(ri, w);
      if (p == kNone32 || p >= paths.size()) continue;
      EnergyWindow& agg = per_path[p][k];
      if (!path_seen[p][k]) {
        agg = EnergyWindow{};
        agg.device_id = ids[k];
        agg.from_counter = w.from_counter;
        path_seen[p][k] = true;
      }
      agg.joules += w.joules;
      agg.duration_ns += w.duration_ns;
      agg.coverage_ns += w.coverage_ns;
      agg.peak_w = std::max(agg.peak_w, w.peak_w);
      agg.from_counter = agg.from_counter && w.from_counter;
    }
  }
  for (uint32_t p = 0; p < paths.size(); ++p) {
    for (std::size_t k = 0; k < curves.size(); ++k) {
      if (!path_seen[p][k]) continue;
      EnergyWindow w = per_path[p][k];
      w.mean_w = w.coverage_ns > 0 ? w.joules / (static_cast<double>(w.coverage_ns) / 1e9) : 0.0;
      r.region_paths.emplace_back(p, w);
    }
  }
  return r;
}

}  // namespace fpgaprof::analysis

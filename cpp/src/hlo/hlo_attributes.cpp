#include "hlo/hlo_attributes.hpp"

#include <algorithm>
#include <charconv>

namespace fpgaprof::hlo::attr {
namespace {

constexpr int64_t kLimit = int64_t{1} << 40;  // beyond any real size: keeps products finite

bool parse_int(std::string_view v, int64_t& out) {
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  if (v.empty()) return false;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  return ec == std::errc() && p == v.data() + v.size();
}

std::vector<std::string_view> split(std::string_view t, char sep) {
  std::vector<std::string_view> parts;
  while (true) {
    const std::size_t b = t.find(sep);
    parts.push_back(t.substr(0, b));
    if (b == std::string_view::npos) break;
    t.remove_prefix(b + 1);
  }
  return parts;
}

// Lenient integer: an optional '-' then digits; anything else ends it.
int64_t to_int(std::string_view t) {
  int64_t r = 0;
  bool neg = false;
  std::size_t i = 0;
  while (i < t.size() && (t[i] == ' ' || t[i] == '+')) ++i;
  if (i < t.size() && t[i] == '-') {
    neg = true;
    ++i;
  }
  for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i) {
    r = r * 10 + (t[i] - '0');
    if (r > kLimit) break;
  }
  return neg ? -r : r;
}

// `key=value` inside a window's text: the value up to the next blank or '}'.
std::string_view field(std::string_view s, std::string_view key) {
  std::size_t p = 0;
  while ((p = s.find(key, p)) != std::string_view::npos) {
    const bool starts = p == 0 || s[p - 1] == ' ' || s[p - 1] == '{';
    if (starts && p + key.size() < s.size() && s[p + key.size()] == '=') break;
    p += key.size();
  }
  if (p == std::string_view::npos) return {};
  p += key.size() + 1;
  const std::size_t e = s.find_first_of(" }", p);
  return s.substr(p, e == std::string_view::npos ? std::string_view::npos : e - p);
}

}  // namespace

const std::string* find(const Instruction& ins, std::string_view key) {
  auto it = ins.attributes().find(std::string(key));
  return it == ins.attributes().end() ? nullptr : &it->second;
}

std::vector<int64_t> int_list(std::string_view v) {
  std::vector<int64_t> out;
  int64_t cur = 0;
  bool in = false;
  bool neg = false;
  for (char c : v) {
    if (c >= '0' && c <= '9') {
      if (cur < kLimit) cur = cur * 10 + (c - '0');
      in = true;
    } else if (c == '-' && !in) {
      neg = true;
    } else {
      if (in) out.push_back(neg ? -cur : cur);
      cur = 0;
      in = false;
      neg = false;
    }
  }
  if (in) out.push_back(neg ? -cur : cur);
  return out;
}

std::vector<int64_t> ints(const Instruction& ins, std::string_view key) {
  const std::string* v = find(ins, key);
  return v == nullptr ? std::vector<int64_t>{} : int_list(*v);
}

bool integer(const Instruction& ins, std::string_view key, int64_t& out) {
  const std::string* v = find(ins, key);
  return v != nullptr && parse_int(*v, out);
}

bool boolean(const Instruction& ins, std::string_view key, bool fallback) {
  const std::string* v = find(ins, key);
  if (v == nullptr) return fallback;
  return *v == "true";
}

std::vector<WindowDim> window(const Instruction& ins) {
  std::vector<WindowDim> w;
  const std::string* v = find(ins, "window");
  if (v == nullptr) return w;
  const std::string_view s = *v;
  const std::string_view size = field(s, "size");
  if (size.empty()) return w;
  for (std::string_view p : split(size, 'x')) {
    WindowDim d;
    d.size = to_int(p);
    w.push_back(d);
    if (w.size() > 64) break;
  }
  auto apply = [&](std::string_view key, auto setter) {
    const std::string_view f = field(s, key);
    if (f.empty()) return;
    const auto parts = split(f, 'x');
    for (std::size_t k = 0; k < parts.size() && k < w.size(); ++k) setter(w[k], parts[k]);
  };
  apply("stride", [](WindowDim& d, std::string_view t) { d.stride = to_int(t); });
  apply("lhs_dilate", [](WindowDim& d, std::string_view t) { d.base_dilation = to_int(t); });
  apply("rhs_dilate", [](WindowDim& d, std::string_view t) { d.window_dilation = to_int(t); });
  apply("pad", [](WindowDim& d, std::string_view t) {
    const auto lh = split(t, '_');
    d.pad_lo = to_int(lh[0]);
    d.pad_hi = lh.size() > 1 ? to_int(lh[1]) : 0;
  });
  return w;
}

ConvDims conv_dims(const Instruction& ins) {
  ConvDims d;
  const std::string* labels = find(ins, "dim_labels");
  if (labels == nullptr) return d;
  const std::string_view l = *labels;
  const std::size_t u = l.find('_'), a = l.find("->");
  if (u == std::string_view::npos || a == std::string_view::npos || a < u) return d;
  const std::string_view in = l.substr(0, u), k = l.substr(u + 1, a - u - 1), out = l.substr(a + 2);
  if (in.size() != k.size() || in.size() != out.size() || in.size() < 2 || in.size() > 16) return d;
  d.rank = in.size();
  const auto unlabelled = static_cast<std::size_t>(std::count(in.begin(), in.end(), '?'));
  if (in.size() < 2 + unlabelled) return d;
  const std::size_t spatial = in.size() - 2 - unlabelled;
  d.input_spatial.assign(spatial, -1);
  d.kernel_spatial.assign(spatial, -1);
  d.output_spatial.assign(spatial, -1);
  auto read = [&](std::string_view s, char a_label, char b_label, int64_t& a_pos, int64_t& b_pos,
                  std::vector<int64_t>& sp) {
    for (std::size_t i = 0; i < s.size(); ++i) {
      const char c = s[i];
      if (c == a_label) {
        a_pos = static_cast<int64_t>(i);
      } else if (c == b_label) {
        b_pos = static_cast<int64_t>(i);
      } else if (c >= '0' && c <= '9' && static_cast<std::size_t>(c - '0') < spatial) {
        sp[static_cast<std::size_t>(c - '0')] = static_cast<int64_t>(i);
      } else if (c == '?') {
        // a dimension without a role (the vector of an int8x4 / int8x32 cuDNN layout)
      } else {
        return false;
      }
    }
    return true;
  };
  if (!read(in, 'b', 'f', d.input_batch, d.input_feature, d.input_spatial) ||
      !read(k, 'i', 'o', d.kernel_input_feature, d.kernel_output_feature, d.kernel_spatial) ||
      !read(out, 'b', 'f', d.output_batch, d.output_feature, d.output_spatial)) {
    return d;
  }
  for (std::size_t s = 0; s < spatial; ++s) {
    if (d.input_spatial[s] < 0 || d.kernel_spatial[s] < 0 || d.output_spatial[s] < 0) return d;
  }
  d.ok = d.input_batch >= 0 && d.input_feature >= 0 && d.kernel_input_feature >= 0 && d.kernel_output_feature >= 0 &&
         d.output_batch >= 0 && d.output_feature >= 0;
  return d;
}

DotDims dot_dims(const Instruction& ins) {
  DotDims d;
  d.lhs_batch = ints(ins, "lhs_batch_dims");
  d.lhs_contracting = ints(ins, "lhs_contracting_dims");
  d.rhs_batch = ints(ins, "rhs_batch_dims");
  d.rhs_contracting = ints(ins, "rhs_contracting_dims");
  return d;
}

bool padding(const Instruction& ins, std::vector<PadDim>& out) {
  out.clear();
  const std::string* v = find(ins, "padding");
  if (v == nullptr) return false;
  std::string_view s = *v;
  if (s.empty()) return true;  // rank 0
  for (std::string_view part : split(s, 'x')) {
    const auto nums = split(part, '_');
    if (nums.size() < 2 || nums.size() > 3) return false;
    PadDim p;
    int64_t* fields[3] = {&p.lo, &p.hi, &p.interior};
    for (std::size_t k = 0; k < nums.size(); ++k) {
      if (!parse_int(nums[k], *fields[k]) || *fields[k] > kLimit || *fields[k] < -kLimit) return false;
    }
    out.push_back(p);
    if (out.size() > 64) return false;
  }
  return true;
}

}  // namespace fpgaprof::hlo::attr

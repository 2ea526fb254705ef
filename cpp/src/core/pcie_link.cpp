#include "fpgaprof/pcie_link.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace fpgaprof {
namespace {

namespace fs = std::filesystem;

std::string_view trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (lower(s[i]) != lower(prefix[i])) return false;
  return true;
}

// Hexadecimal field of 1..max_digits digits; false for anything else.
bool parse_hex(std::string_view s, std::size_t max_digits, uint32_t& out) {
  if (s.empty() || s.size() > max_digits) return false;
  uint32_t v = 0;
  for (const char c : s) {
    const char l = lower(c);
    uint32_t d = 0;
    if (is_digit(l))
      d = static_cast<uint32_t>(l - '0');
    else if (l >= 'a' && l <= 'f')
      d = static_cast<uint32_t>(l - 'a' + 10);
    else
      return false;
    v = v * 16 + d;
  }
  out = v;
  return true;
}

// The first 256 bytes of a sysfs attribute; false when it cannot be opened or read.
bool read_text(const fs::path& path, std::string& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  char buf[256];
  f.read(buf, sizeof buf);
  if (f.bad()) return false;
  out.assign(buf, static_cast<std::size_t>(f.gcount()));
  return true;
}

// One line of an attribute for a message: at most 40 printable characters.
std::string shown(std::string_view text) {
  std::string out;
  for (const char c : trim(text)) {
    if (out.size() == 40) return out + "...";
    out += (c >= ' ' && c <= '~') ? c : '?';
  }
  return out;
}

const char* hypervisor_of_vendor(std::string_view vendor) {
  const std::string_view v = trim(vendor);
  if (v == "0x1b36") return "QEMU";
  if (v == "0x15ad") return "VMware";
  if (v == "0x1414") return "Hyper-V";
  if (v == "0x5853") return "Xen";
  return nullptr;
}

std::string link_text(uint32_t generation, uint32_t width) {
  return "gen" + (generation ? std::to_string(generation) : std::string("?")) + " x" +
         (width ? std::to_string(width) : std::string("?"));
}

// What one directory's max_link_speed / max_link_width say; `problem` is set when either is
// missing or unparsable.
struct PortLink {
  uint32_t generation = 0;
  uint32_t width = 0;
  std::string problem;
};

PortLink read_port(const fs::path& dir) {
  PortLink p;
  std::string speed, width;
  const bool has_speed = read_text(dir / "max_link_speed", speed);
  const bool has_width = read_text(dir / "max_link_width", width);
  if (!has_speed && !has_width) {
    p.problem = "has no max_link_speed/max_link_width";
    return p;
  }
  if (has_speed) p.generation = pcie_generation_from_speed(speed);
  if (has_width) p.width = pcie_width_from_text(width);
  if (!has_speed)
    p.problem = "has no max_link_speed";
  else if (p.generation == 0)
    p.problem = "max_link_speed reads '" + shown(speed) + "'";
  if (!has_width)
    p.problem += std::string(p.problem.empty() ? "" : ", ") + "has no max_link_width";
  else if (p.width == 0)
    p.problem += std::string(p.problem.empty() ? "" : ", ") + "max_link_width reads '" + shown(width) + "'";
  return p;
}

}  // namespace

uint32_t pcie_generation_from_speed(std::string_view text) {
  std::string_view s = trim(text);
  // The rate in tenths of GT/s: "2.5" -> 25, "16.0" -> 160, "8" -> 80.
  uint64_t tenths = 0;
  std::size_t i = 0;
  while (i < s.size() && is_digit(s[i]) && tenths < 100000) tenths = tenths * 10 + static_cast<uint64_t>(s[i++] - '0');
  if (i == 0) return 0;
  tenths *= 10;
  if (i < s.size() && s[i] == '.') {
    ++i;
    std::size_t digits = 0;
    while (i < s.size() && is_digit(s[i])) {
      // Only one decimal place carries meaning; "2.50" is 2.5, "2.55" is no PCIe rate.
      if (digits == 0)
        tenths += static_cast<uint64_t>(s[i] - '0');
      else if (s[i] != '0')
        return 0;
      ++digits;
      ++i;
    }
    if (digits == 0) return 0;
  }
  s.remove_prefix(i);
  s = trim(s);
  if (!starts_with_nocase(s, "GT/s")) return 0;
  switch (tenths) {
    case 25: return 1;
    case 50: return 2;
    case 80: return 3;
    case 160: return 4;
    case 320: return 5;
    case 640: return 6;
    case 1280: return 7;
    default: return 0;
  }
}

uint32_t pcie_width_from_text(std::string_view text) {
  std::string_view s = trim(text);
  if (!s.empty() && (s.front() == 'x' || s.front() == 'X')) s.remove_prefix(1);
  if (s.empty() || s.size() > 3) return 0;
  uint32_t lanes = 0;
  for (const char c : s) {
    if (!is_digit(c)) return 0;
    lanes = lanes * 10 + static_cast<uint32_t>(c - '0');
  }
  switch (lanes) {
    case 1:
    case 2:
    case 4:
    case 8:
    case 12:
    case 16:
    case 32: return lanes;
    default: return 0;
  }
}

std::string sysfs_pci_name(std::string_view bus_id) {
  const std::string_view s = trim(bus_id);
  const std::size_t c2 = s.rfind(':');
  if (c2 == std::string_view::npos) return "";
  const std::size_t c1 = s.rfind(':', c2 == 0 ? 0 : c2 - 1);
  const std::size_t dot = s.find('.', c2);
  if (dot == std::string_view::npos) return "";
  uint32_t domain = 0, bus = 0, device = 0, function = 0;
  // "65:00.0" (no domain) is domain 0, as lspci prints it.
  const std::string_view domain_text =
      c1 == std::string_view::npos || c1 == c2 ? std::string_view("0") : s.substr(0, c1);
  const std::string_view bus_text =
      c1 == std::string_view::npos || c1 == c2 ? s.substr(0, c2) : s.substr(c1 + 1, c2 - c1 - 1);
  if (!parse_hex(domain_text, 8, domain) || !parse_hex(bus_text, 2, bus) ||
      !parse_hex(s.substr(c2 + 1, dot - c2 - 1), 2, device) || !parse_hex(s.substr(dot + 1), 1, function) ||
      device > 0x1f || function > 7)
    return "";
  char out[32];
  std::snprintf(out, sizeof out, "%04x:%02x:%02x.%x", domain, bus, device, function);
  return out;
}

std::string sysfs_root() {
  const char* root = std::getenv("FPGAPROF_SYSFS_ROOT");
  return root != nullptr && root[0] != '\0' ? std::string(root) : std::string("/sys");
}

double pcie_bytes_per_s(uint32_t gen, uint32_t lanes) {
  // Per lane, one direction, after line encoding.
  static const double kPerLane[] = {
      0.0,
      2.5e9 * 8.0 / 10.0 / 8.0,       // gen1: 2.5 GT/s, 8b/10b  -> 250 MB/s
      5.0e9 * 8.0 / 10.0 / 8.0,       // gen2: 5 GT/s            -> 500 MB/s
      8.0e9 * 128.0 / 130.0 / 8.0,    // gen3: 8 GT/s, 128b/130b -> 984.6 MB/s
      16.0e9 * 128.0 / 130.0 / 8.0,   // gen4                    -> 1969 MB/s
      32.0e9 * 128.0 / 130.0 / 8.0,   // gen5                    -> 3938 MB/s
      64.0e9 * 242.0 / 256.0 / 8.0,   // gen6: PAM4, FLIT        -> 7563 MB/s
      128.0e9 * 242.0 / 256.0 / 8.0,  // gen7                    -> 15125 MB/s
  };
  if (gen == 0 || gen > 7 || lanes == 0) return 0.0;
  return kPerLane[gen] * static_cast<double>(lanes);
}

PcieLink read_pcie_link(const std::string& sysfs_root_dir, std::string_view bus_id) {
  PcieLink link;
  const std::string name = sysfs_pci_name(bus_id);
  if (name.empty()) {
    link.unknown_reason = "the driver's PCI bus id '" + shown(bus_id) +
                          "' is not domain:bus:device.function; measure the link with `fpgaprof calibrate`";
    return link;
  }
  const fs::path entry = fs::path(sysfs_root_dir) / "bus" / "pci" / "devices" / name;
  std::error_code ec;
  const fs::path dev = fs::canonical(entry, ec);
  if (ec) {
    link.unknown_reason = entry.string() + " not found (" + ec.message() +
                          "): sysfs not mounted here (a container?) or FPGAPROF_SYSFS_ROOT is wrong; "
                          "measure the link with `fpgaprof calibrate`";
    return link;
  }
  link.device_path = dev.string();
  const PortLink own = read_port(dev);
  if (!own.problem.empty()) {
    link.unknown_reason = "device " + name + " " + own.problem +
                          " in sysfs (no PCIe link capability exposed, usual in a virtual machine); "
                          "measure the link with `fpgaprof calibrate`";
    return link;
  }
  link.generation = own.generation;
  link.width = own.width;
  // A copy runs at the slowest single link on the path (one link's generation with that
  // link's width: gen4 x16 and gen5 x8 are both ~31.5 GB/s, not gen4 x8).
  std::string slow_port;  // the upstream port of the slowest link, when slower than the device's
  for (fs::path p = dev.parent_path(); p.has_filename() && p != p.parent_path(); p = p.parent_path()) {
    const std::string port = p.filename().string();
    if (sysfs_pci_name(port) != port) break;  // "pci0000:00": the host bridge, end of the path
    std::string vendor;
    const char* hypervisor = read_text(p / "vendor", vendor) ? hypervisor_of_vendor(vendor) : nullptr;
    if (hypervisor != nullptr) {
      link.skipped += (link.skipped.empty() ? "" : "; ") + port + " (emulated by " + hypervisor + ")";
      continue;
    }
    const PortLink up = read_port(p);
    if (!up.problem.empty()) {
      link.skipped += (link.skipped.empty() ? "" : "; ") + port + " (" + up.problem + ")";
      continue;
    }
    if (pcie_bytes_per_s(up.generation, up.width) < pcie_bytes_per_s(link.generation, link.width)) {
      link.generation = up.generation;
      link.width = up.width;
      slow_port = port + " (" + link_text(up.generation, up.width) + ")";
    }
  }
  if (!slow_port.empty())
    link.limited_by = "device " + name + " supports PCIe " + link_text(own.generation, own.width) +
                      " but upstream port " + slow_port + " limits the path to " +
                      link_text(link.generation, link.width);
  return link;
}

std::vector<std::string> pcie_link_warnings(const std::vector<std::pair<uint32_t, PcieLink>>& links) {
  std::vector<std::string> out;
  // "device 0" or "3 devices (0, 1, 2)" for the devices `pick` selects; "" for none.
  const auto grouped = [&](auto pick, std::string& first_text) {
    std::string ids;
    std::size_t n = 0;
    for (const auto& [id, link] : links) {
      const std::string* text = pick(link);
      if (text == nullptr) continue;
      if (n == 0) first_text = *text;
      ids += (n == 0 ? "" : ", ") + std::to_string(id);
      ++n;
    }
    if (n == 0) return std::string();
    return n == 1 ? "device " + ids : std::to_string(n) + " devices (" + ids + ")";
  };
  std::string reason;
  const std::string unknown =
      grouped([](const PcieLink& l) { return l.known() ? nullptr : &l.unknown_reason; }, reason);
  if (!unknown.empty())
    out.push_back("PCIe link unknown for " + unknown + ": " + reason + " (host-link % is n/a unless calibrated)");
  for (const auto& [id, link] : links) {
    if (link.known() && !link.limited_by.empty())
      out.push_back("device " + std::to_string(id) + ": " + link.limited_by +
                    ": the host-link peak uses the lower link");
  }
  std::string skipped;
  const std::string with_skipped =
      grouped([](const PcieLink& l) { return l.known() && !l.skipped.empty() ? &l.skipped : nullptr; }, skipped);
  if (!with_skipped.empty())
    out.push_back("PCIe link of " + with_skipped +
                  " taken from the GPU and the upstream ports sysfs "
                  "describes; skipped: " +
                  skipped +
                  ": the physical path may be slower, measure it "
                  "with `fpgaprof calibrate`");
  return out;
}

}  // namespace fpgaprof

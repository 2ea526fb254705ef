// PcieLink: a GPU's PCIe generation and width as Linux sysfs describes them, for the host-link
// peak of transfer reports (DeviceInfo::pcie_generation / pcie_link_width). CUPTI-free and
// driver-free: the capture (cpp/src/cupti/) asks the driver for the PCI bus id and calls
// read_pcie_link; tests build a fake sysfs tree in a temporary directory.
//
// Only max_link_speed / max_link_width are read, never current_link_*: GPUs drop their link to
// gen1 when idle, so the current speed says nothing about what a copy gets.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fpgaprof {

struct PcieLink {
  uint32_t generation = 0;  // 1..7; 0 unknown
  uint32_t width = 0;       // lanes (1, 2, 4, 8, 12, 16, 32); 0 unknown
  std::string device_path;  // sysfs directory of the GPU after resolving links; "" not found
  // Set when an upstream port's link is lower than the GPU's own (a gen5 GPU in a gen4 slot):
  // "device 0000:65:00.0 supports PCIe gen5 x16, upstream port 0000:00:01.0 only gen4 x16".
  std::string limited_by;
  // Why generation or width is 0 (cause + fix, one line); "" when both are known.
  std::string unknown_reason;
  // Upstream ports skipped: emulated bridges of a hypervisor (their link is made up) and ports
  // whose link files are absent or unreadable. "" none.
  std::string skipped;

  bool known() const { return generation != 0 && width != 0; }
};

// Generation from a max_link_speed text: "2.5 GT/s" -> 1, "5.0" -> 2, "8.0" -> 3, "16.0" -> 4,
// "32.0" -> 5, "64.0" -> 6, "128.0" -> 7, with or without a trailing "PCIe" (kernels >= 5.x) or
// ".0" (older kernels print "8 GT/s"); surrounding white space is ignored. 0 for anything else
// ("Unknown", "Unknown speed", "", "33 MHz PCI", a rate between generations). Pure.
uint32_t pcie_generation_from_speed(std::string_view text);

// Host-link bandwidth of PCIe generation `gen` (1..7) with `lanes` lanes, one direction, after
// line encoding (8b/10b for gen1-2, 128b/130b for gen3-5, FLIT 242/256 for gen6-7), in bytes/s.
// 0 when gen or lanes is unknown (0) or gen is out of range.
double pcie_bytes_per_s(uint32_t gen, uint32_t lanes);

// Lanes from a max_link_width text ("16", "16\n"). 0 unless it is one of the widths PCIe
// defines (1, 2, 4, 8, 12, 16, 32). Pure.
uint32_t pcie_width_from_text(std::string_view text);

// The text "0000:65:00.0" that sysfs names the device by, from a bus id as the CUDA driver
// (cuDeviceGetPCIBusId) or nvidia-smi prints it: "0000:65:00.0", "00000000:65:00.0",
// upper or lower case. "" when `bus_id` is not domain:bus:device.function in hexadecimal.
std::string sysfs_pci_name(std::string_view bus_id);

// The root of the sysfs tree: $FPGAPROF_SYSFS_ROOT when set and not empty (for tests: a fake
// tree), else "/sys". Reads the environment on each call.
std::string sysfs_root();

// Reads <sysfs_root>/bus/pci/devices/<name>/max_link_speed and max_link_width, resolves that
// directory (it is a link into /sys/devices/pci<domain>:<bus>/...) and walks up through every
// ancestor named like a PCI device (the upstream ports: switch ports, the root port), taking
// the slowest single link seen (its generation and its width, compared by bandwidth), since
// a copy crosses every link on the path and runs at the slowest one.
// Ancestors made by a hypervisor (vendor 0x1b36 QEMU, 0x15ad VMware, 0x1414 Microsoft,
// 0x5853 Xen), whose link speed does not describe the physical link, are skipped, as are
// ancestors without readable link files; both are named in `skipped`. An unknown GPU link
// (files absent, as in many virtual machines, or unparsable) gives generation = width = 0 and
// the reason: never throws. `bus_id` in any form sysfs_pci_name accepts. Reads files only;
// thread-safe.
PcieLink read_pcie_link(const std::string& sysfs_root_dir, std::string_view bus_id);

// The capture's warnings about its devices' links, each one line (cause + what it means), in
// this order: one for every device whose link is unknown ("PCIe link unknown for device 0: ...",
// or "for 3 devices (0, 1, 2): <the first one's reason>"), one per device limited by an upstream
// port, one for every device with skipped upstream ports (same grouping as unknown). Empty when
// every link is known, unlimited and nothing was skipped. `links`: (device id, link). Pure.
std::vector<std::string> pcie_link_warnings(const std::vector<std::pair<uint32_t, PcieLink>>& links);

}  // namespace fpgaprof

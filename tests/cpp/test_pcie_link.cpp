// PcieLink (pcie_link.hpp): PCIe generation and width from sysfs text, and from fake sysfs
// trees built here in a temporary directory, shaped like Linux's: /sys/bus/pci/devices/<id> is a
// relative link to /sys/devices/pci<domain>:<bus>/<root port>/.../<id>. Expected values follow
// the kernel's pci_speed_string texts ("16.0 GT/s PCIe", "Unknown") and the PCIe rates
// (gen1 2.5, gen2 5, gen3 8, gen4 16, gen5 32, gen6 64 GT/s).
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "fpgaprof/pcie_link.hpp"

using fpgaprof::pcie_generation_from_speed;
using fpgaprof::pcie_link_warnings;
using fpgaprof::pcie_width_from_text;
using fpgaprof::PcieLink;
using fpgaprof::read_pcie_link;
using fpgaprof::sysfs_pci_name;

namespace fs = std::filesystem;

namespace {

// A fake /sys in a fresh temporary directory, removed by the destructor.
class FakeSysfs {
 public:
  FakeSysfs() {
    std::string tmpl = (fs::temp_directory_path() / "fpgaprof_sysfs_XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    root_ = tmpl;
    fs::create_directories(root_ / "bus" / "pci" / "devices");
  }
  ~FakeSysfs() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  FakeSysfs(const FakeSysfs&) = delete;
  FakeSysfs& operator=(const FakeSysfs&) = delete;

  std::string root() const { return root_.string(); }

  // A PCI function at devices/<chain joined by '/'>, e.g. {"pci0000:00", "0000:00:01.0"};
  // speed/width "" leaves the file out. The last element gets a bus/pci/devices link.
  fs::path add(const std::vector<std::string>& chain, const std::string& speed, const std::string& width,
               const std::string& vendor = "0x10de") {
    fs::path rel = "devices";
    for (const auto& c : chain) rel /= c;
    const fs::path dir = root_ / rel;
    fs::create_directories(dir);
    write(dir / "vendor", vendor + "\n");
    if (!speed.empty()) write(dir / "max_link_speed", speed);
    if (!width.empty()) write(dir / "max_link_width", width);
    // Idle GPUs run at gen1: a reader of current_link_* would get this instead of the max.
    write(dir / "current_link_speed", "2.5 GT/s PCIe\n");
    write(dir / "current_link_width", "16\n");
    const fs::path link = root_ / "bus" / "pci" / "devices" / chain.back();
    std::error_code ec;
    fs::remove(link, ec);
    fs::create_directory_symlink(fs::path("../../..") / rel, link);
    return dir;
  }

 private:
  static void write(const fs::path& p, const std::string& text) {
    std::ofstream f(p, std::ios::binary);
    f << text;
  }
  fs::path root_;
};

}  // namespace

TEST_CASE("max_link_speed text to PCIe generation", "[pcie]") {
  CHECK(pcie_generation_from_speed("2.5 GT/s PCIe\n") == 1);
  CHECK(pcie_generation_from_speed("5.0 GT/s PCIe") == 2);
  CHECK(pcie_generation_from_speed("8.0 GT/s PCIe") == 3);
  CHECK(pcie_generation_from_speed("16.0 GT/s PCIe\n") == 4);
  CHECK(pcie_generation_from_speed("32.0 GT/s PCIe") == 5);
  CHECK(pcie_generation_from_speed("64.0 GT/s PCIe") == 6);
  // Kernels before 4.19 printed no ".0" and no "PCIe".
  CHECK(pcie_generation_from_speed("8 GT/s") == 3);
  CHECK(pcie_generation_from_speed("5 GT/s\n") == 2);
  CHECK(pcie_generation_from_speed("  16.0 gt/s  ") == 4);
  CHECK(pcie_generation_from_speed("2.50 GT/s") == 1);
  // Weird texts: unknown, never a guess.
  CHECK(pcie_generation_from_speed("Unknown") == 0);
  CHECK(pcie_generation_from_speed("Unknown speed\n") == 0);
  CHECK(pcie_generation_from_speed("") == 0);
  CHECK(pcie_generation_from_speed("\n") == 0);
  CHECK(pcie_generation_from_speed("16.0") == 0);            // no unit
  CHECK(pcie_generation_from_speed("33 MHz PCI") == 0);      // conventional PCI
  CHECK(pcie_generation_from_speed("12.0 GT/s PCIe") == 0);  // between gen3 and gen4
  CHECK(pcie_generation_from_speed("2.55 GT/s") == 0);
  CHECK(pcie_generation_from_speed(".5 GT/s") == 0);
  CHECK(pcie_generation_from_speed("16. GT/s") == 0);
  CHECK(pcie_generation_from_speed("160000000000000000000 GT/s") == 0);
  CHECK(pcie_generation_from_speed("-16.0 GT/s") == 0);
}

TEST_CASE("max_link_width text to lanes", "[pcie]") {
  CHECK(pcie_width_from_text("16\n") == 16);
  CHECK(pcie_width_from_text("8") == 8);
  CHECK(pcie_width_from_text("x4") == 4);
  CHECK(pcie_width_from_text("1") == 1);
  CHECK(pcie_width_from_text("32") == 32);
  CHECK(pcie_width_from_text("0") == 0);
  CHECK(pcie_width_from_text("3") == 0);
  CHECK(pcie_width_from_text("255") == 0);
  CHECK(pcie_width_from_text("16 lanes") == 0);
  CHECK(pcie_width_from_text("") == 0);
  CHECK(pcie_width_from_text("-16") == 0);
}

TEST_CASE("PCI bus ids as the driver prints them to sysfs names", "[pcie]") {
  CHECK(sysfs_pci_name("0000:65:00.0") == "0000:65:00.0");
  CHECK(sysfs_pci_name("00000000:65:00.0") == "0000:65:00.0");  // nvidia-smi's 8-digit domain
  CHECK(sysfs_pci_name("0000:B3:00.0") == "0000:b3:00.0");
  CHECK(sysfs_pci_name("65:00.0") == "0000:65:00.0");
  CHECK(sysfs_pci_name("10000:01:00.0") == "10000:01:00.0");  // Intel VMD domains
  CHECK(sysfs_pci_name("0000:65:00.0\n") == "0000:65:00.0");
  CHECK(sysfs_pci_name("0000:65:00") == "");
  CHECK(sysfs_pci_name("0000:65:20.0") == "");  // device numbers stop at 0x1f
  CHECK(sysfs_pci_name("0000:65:00.8") == "");  // functions stop at 7
  CHECK(sysfs_pci_name("0000:165:00.0") == "");
  CHECK(sysfs_pci_name("GPU-12345678") == "");
  CHECK(sysfs_pci_name("") == "");
  CHECK(sysfs_pci_name(":00.0") == "");
  CHECK(sysfs_pci_name("pci0000:00") == "");
}

TEST_CASE("sysfs root from FPGAPROF_SYSFS_ROOT", "[pcie]") {
  ::setenv("FPGAPROF_SYSFS_ROOT", "/tmp/fake", 1);
  CHECK(fpgaprof::sysfs_root() == "/tmp/fake");
  ::setenv("FPGAPROF_SYSFS_ROOT", "", 1);
  CHECK(fpgaprof::sysfs_root() == "/sys");
  ::unsetenv("FPGAPROF_SYSFS_ROOT");
  CHECK(fpgaprof::sysfs_root() == "/sys");
}

TEST_CASE("PCIe link from a fake sysfs tree", "[pcie]") {
  FakeSysfs sys;
  const std::vector<std::string> root_port = {"pci0000:00", "0000:00:01.0"};
  auto below = [&](std::vector<std::string> chain, const std::string& leaf) {
    chain.push_back(leaf);
    return chain;
  };

  SECTION("gen4 x16 GPU under a gen5 x16 root port: gen4 x16, nothing limits it") {
    sys.add(root_port, "32.0 GT/s PCIe\n", "16\n", "0x8086");
    const fs::path gpu = sys.add(below(root_port, "0000:01:00.0"), "16.0 GT/s PCIe\n", "16\n");
    const PcieLink l = read_pcie_link(sys.root(), "00000000:01:00.0");
    CHECK(l.generation == 4);
    CHECK(l.width == 16);
    CHECK(l.known());
    CHECK(l.limited_by.empty());
    CHECK(l.skipped.empty());
    CHECK(l.unknown_reason.empty());
    CHECK(l.device_path == fs::canonical(gpu).string());
  }

  SECTION("gen5 x16 GPU in a gen4 x8 slot: gen4 x8, the root port named") {
    sys.add(root_port, "16.0 GT/s PCIe\n", "8\n", "0x8086");
    sys.add(below(root_port, "0000:01:00.0"), "32.0 GT/s PCIe\n", "16\n");
    const PcieLink l = read_pcie_link(sys.root(), "0000:01:00.0");
    CHECK(l.generation == 4);
    CHECK(l.width == 8);
    CHECK(l.limited_by ==
          "device 0000:01:00.0 supports PCIe gen5 x16 but upstream port 0000:00:01.0 (gen4 x8) "
          "limits the path to gen4 x8");
  }

  SECTION("behind a switch: the lowest link on the whole path counts") {
    // root port gen5 x16 -> switch upstream port gen4 x16 -> downstream port gen5 x16 -> GPU gen5 x16
    sys.add(root_port, "32.0 GT/s PCIe", "16", "0x1022");
    const auto up = below(root_port, "0000:01:00.0");
    sys.add(up, "16.0 GT/s PCIe", "16", "0x1000");
    const auto down = below(up, "0000:02:08.0");
    sys.add(down, "32.0 GT/s PCIe", "16", "0x1000");
    sys.add(below(down, "0000:03:00.0"), "32.0 GT/s PCIe", "16");
    const PcieLink l = read_pcie_link(sys.root(), "0000:03:00.0");
    CHECK(l.generation == 4);
    CHECK(l.width == 16);
    CHECK(l.limited_by.find("upstream port 0000:01:00.0 (gen4 x16)") != std::string::npos);
  }

  SECTION("gen and width lower on different ports: the path runs at its slowest single link") {
    // Switch port gen4 x16 (31.5 GB/s) and root port gen5 x8 (31.5 GB/s): the path moves
    // ~31.5 GB/s, not gen4 x8 (15.8). The first port met that is slower than the GPU's own
    // link keeps it; the root port is not slower than that.
    sys.add(root_port, "32.0 GT/s PCIe", "8", "0x1022");
    const auto up = below(root_port, "0000:01:00.0");
    sys.add(up, "16.0 GT/s PCIe", "16", "0x1000");
    sys.add(below(up, "0000:02:00.0"), "32.0 GT/s PCIe", "16");
    const PcieLink l = read_pcie_link(sys.root(), "0000:02:00.0");
    CHECK(l.generation == 4);
    CHECK(l.width == 16);
    CHECK(l.limited_by ==
          "device 0000:02:00.0 supports PCIe gen5 x16 but upstream port 0000:01:00.0 (gen4 x16) limits the path "
          "to gen4 x16");
  }

  SECTION("a narrower root port below a faster switch port sets the path") {
    // Switch gen5 x16 (63 GB/s), root port gen4 x8 (15.8 GB/s): gen4 x8 from the root port.
    sys.add(root_port, "16.0 GT/s PCIe", "8", "0x1022");
    const auto up = below(root_port, "0000:01:00.0");
    sys.add(up, "32.0 GT/s PCIe", "16", "0x1000");
    sys.add(below(up, "0000:02:00.0"), "32.0 GT/s PCIe", "16");
    const PcieLink l = read_pcie_link(sys.root(), "0000:02:00.0");
    CHECK(l.generation == 4);
    CHECK(l.width == 8);
    CHECK(l.limited_by ==
          "device 0000:02:00.0 supports PCIe gen5 x16 but upstream port 0000:00:01.0 (gen4 x8) limits the path "
          "to gen4 x8");
  }

  SECTION("GPU straight on the host bridge (no upstream port, as on a VM's i440fx bus)") {
    sys.add({"pci0000:00", "0000:00:05.0"}, "16.0 GT/s PCIe", "16");
    const PcieLink l = read_pcie_link(sys.root(), "0000:00:05.0");
    CHECK(l.generation == 4);
    CHECK(l.width == 16);
    CHECK(l.limited_by.empty());
    CHECK(l.skipped.empty());
  }

  SECTION("emulated root port of a hypervisor (QEMU says gen1 x1): skipped, GPU's own link kept") {
    sys.add(root_port, "2.5 GT/s PCIe", "1", "0x1b36");
    sys.add(below(root_port, "0000:01:00.0"), "16.0 GT/s PCIe", "16");
    const PcieLink l = read_pcie_link(sys.root(), "0000:01:00.0");
    CHECK(l.generation == 4);
    CHECK(l.width == 16);
    CHECK(l.limited_by.empty());
    CHECK(l.skipped == "0000:00:01.0 (emulated by QEMU)");
  }

  SECTION("upstream port without link files or with 'Unknown': skipped, named") {
    sys.add(root_port, "", "");
    const auto up = below(root_port, "0000:01:00.0");
    sys.add(up, "Unknown\n", "16\n");
    sys.add(below(up, "0000:02:00.0"), "16.0 GT/s PCIe", "16");
    const PcieLink l = read_pcie_link(sys.root(), "0000:02:00.0");
    CHECK(l.generation == 4);
    CHECK(l.width == 16);
    CHECK(l.skipped ==
          "0000:01:00.0 (max_link_speed reads 'Unknown'); "
          "0000:00:01.0 (has no max_link_speed/max_link_width)");
  }

  SECTION("GPU without link files (virtual machine): unknown with the reason") {
    sys.add(root_port, "16.0 GT/s PCIe", "16");
    sys.add(below(root_port, "0000:01:00.0"), "", "");
    const PcieLink l = read_pcie_link(sys.root(), "0000:01:00.0");
    CHECK(l.generation == 0);
    CHECK(l.width == 0);
    CHECK_FALSE(l.known());
    CHECK(l.unknown_reason.find("device 0000:01:00.0 has no max_link_speed/max_link_width") == 0);
    CHECK(l.unknown_reason.find("fpgaprof calibrate") != std::string::npos);
  }

  SECTION("GPU with weird link texts: unknown, the text quoted") {
    sys.add(below(root_port, "0000:01:00.0"), "Unknown speed\n", "63\n");
    const PcieLink l = read_pcie_link(sys.root(), "0000:01:00.0");
    CHECK(l.generation == 0);
    CHECK(l.width == 0);
    CHECK(l.unknown_reason.find("max_link_speed reads 'Unknown speed', max_link_width reads '63'") !=
          std::string::npos);
  }

  SECTION("GPU with only a width: unknown (no peak without the generation)") {
    sys.add(below(root_port, "0000:01:00.0"), "", "16");
    const PcieLink l = read_pcie_link(sys.root(), "0000:01:00.0");
    CHECK_FALSE(l.known());
    CHECK(l.unknown_reason.find("has no max_link_speed in sysfs") != std::string::npos);
  }

  SECTION("device missing from sysfs, bad bus id: unknown, never a throw") {
    const PcieLink missing = read_pcie_link(sys.root(), "0000:65:00.0");
    CHECK_FALSE(missing.known());
    CHECK(missing.device_path.empty());
    CHECK(missing.unknown_reason.find("/bus/pci/devices/0000:65:00.0 not found") != std::string::npos);
    const PcieLink bad = read_pcie_link(sys.root(), "not-a-bus-id");
    CHECK_FALSE(bad.known());
    CHECK(bad.unknown_reason.find("'not-a-bus-id' is not domain:bus:device.function") != std::string::npos);
    const PcieLink no_root = read_pcie_link(sys.root() + "/absent", "0000:01:00.0");
    CHECK_FALSE(no_root.known());
  }
}

TEST_CASE("PCIe link warnings for the capture", "[pcie]") {
  PcieLink ok;
  ok.generation = 4;
  ok.width = 16;
  PcieLink unknown_a, unknown_b;
  unknown_a.unknown_reason = "reason a";
  unknown_b.unknown_reason = "reason b";
  PcieLink limited = ok;
  limited.limited_by = "device X supports PCIe gen5 x16 but ...";
  PcieLink skipped = ok;
  skipped.skipped = "0000:00:01.0 (emulated by QEMU)";

  CHECK(pcie_link_warnings({}).empty());
  CHECK(pcie_link_warnings({{0, ok}, {1, ok}}).empty());

  const auto one = pcie_link_warnings({{0, ok}, {3, unknown_a}});
  REQUIRE(one.size() == 1);
  CHECK(one[0] == "PCIe link unknown for device 3: reason a (host-link % is n/a unless calibrated)");

  const auto all = pcie_link_warnings({{0, unknown_a}, {1, limited}, {2, unknown_b}, {5, skipped}, {6, skipped}});
  REQUIRE(all.size() == 3);
  CHECK(all[0] == "PCIe link unknown for 2 devices (0, 2): reason a (host-link % is n/a unless calibrated)");
  CHECK(all[1] == "device 1: device X supports PCIe gen5 x16 but ...: the host-link peak uses the lower link");
  CHECK(all[2].find("PCIe link of 2 devices (5, 6) taken from the GPU") == 0);
  CHECK(all[2].find("skipped: 0000:00:01.0 (emulated by QEMU)") != std::string::npos);
}

// The host-link description that transfer reports carry (TransferOptions::link_description):
// a caller's description (the ceilings' "PCIe gen5 x16" or calibrate's "measured by ...") is
// shown as given; without one, the source name; without options, the device's PCIe link.
#include <catch2/catch.hpp>

#include <vector>

#include "fpgaprof/analysis/ceilings.hpp"
#include "fpgaprof/analysis/transfer_analysis.hpp"

using namespace fpgaprof;
using namespace fpgaprof::analysis;

namespace {

// One pinned 1 MB HtoD copy of 100 us on a gen4 x16 device.
TraceStore one_copy_store() {
  TraceStore s;
  MemcpyRecord c;
  c.copy_kind = CopyKind::kHtoD;
  c.bytes = 1000000;
  c.start_ns = 1000;
  c.end_ns = 101000;
  c.src_kind = MemoryKind::kPinned;
  c.dst_kind = MemoryKind::kDevice;
  c.is_async = true;
  s.memcpys = {c};
  DeviceInfo d;
  d.pcie_generation = 4;
  d.pcie_link_width = 16;
  s.devices = {d};
  return s;
}

}  // namespace

TEST_CASE("Transfer reports carry the link description they were given", "[analysis][transfers]") {
  const TraceStore s = one_copy_store();

  SECTION("no options: the device's link, from its generation and width") {
    const TransferReport r = analyze_transfers(s);
    CHECK(r.link_source == "table");
    CHECK(r.link_description == "PCIe gen4 x16");
    // 16 GT/s x 128/130 / 8 x 16 lanes = 31.508 GB/s
    CHECK(r.link_bytes_per_s == Approx(31.508e9).epsilon(1e-4));
  }

  SECTION("the table ceilings' link passed on with its description, as the bindings do") {
    const Ceilings c = table_ceilings(s.devices.front());
    TransferOptions o;
    o.link_bytes_per_s = c.link_bytes_per_s;
    o.link_source = ceiling_source_name(c.link_source);
    o.link_description = c.link_description;
    const TransferReport r = analyze_transfers(s, o);
    CHECK(r.link_source == "table");
    CHECK(r.link_description == "PCIe gen4 x16");
  }

  SECTION("a measured link keeps calibrate's description") {
    TransferOptions o;
    o.link_bytes_per_s = 25e9;
    o.link_source = "measured";
    o.link_description = "measured by fpgaprof calibrate on 2026-11-22 (PCIe gen4 x16)";
    const TransferReport r = analyze_transfers(s, o);
    CHECK(r.link_bytes_per_s == 25e9);
    CHECK(r.link_source == "measured");
    CHECK(r.link_description == "measured by fpgaprof calibrate on 2026-11-22 (PCIe gen4 x16)");
  }

  SECTION("a peak without a description: the source names it") {
    TransferOptions o;
    o.link_bytes_per_s = 20e9;
    const TransferReport r = analyze_transfers(s, o);
    CHECK(r.link_source == "user");
    CHECK(r.link_description == "user");
  }
}

TEST_CASE("A copy without duration adds no bytes to link %", "[analysis][transfers]") {
  // 1e6 B over 100 us on a gen4 x16 link (31.508 GB/s): 10 GB/s = 31.74 %. A second copy of
  // 1e6 B whose end equals its start (a record without duration) adds no link capacity, so
  // it must not add bytes either: still 31.74 %, not 63.5 %.
  TraceStore s = one_copy_store();
  MemcpyRecord z = s.memcpys.front();
  z.start_ns = z.end_ns = 50000;
  s.memcpys.push_back(z);
  const TransferReport r = analyze_transfers(s);
  const TransferGroup& g = r.groups.front();
  CHECK(r.link_percent(g, Direction::kHtoD) == Approx(100.0 * 1e6 / (100e-6 * 31.508e9)).epsilon(1e-3));
  CHECK(g.by_direction[static_cast<std::size_t>(Direction::kHtoD)].count == 2);  // still counted
}

TEST_CASE("Copies faster than the link peak flag the peak as wrong", "[analysis][transfers]") {
  // 1e6 B in 100 us = 10 GB/s on a device whose sysfs link reads gen1 x1 (250 MB/s, as an
  // emulated root port can): 4000 % of the peak. One flag for HtoD names the figure and the
  // fix; DtoH has no copies, so no flag.
  TraceStore s = one_copy_store();
  s.devices.front().pcie_generation = 1;
  s.devices.front().pcie_link_width = 1;
  const TransferReport r = analyze_transfers(s);
  std::vector<const TransferFlag*> exceeded;
  for (const TransferFlag& f : r.flags)
    if (f.kind == "link_exceeded") exceeded.push_back(&f);
  REQUIRE(exceeded.size() == 1);
  CHECK(exceeded[0]->message.rfind("HtoD copies in the trace ran at 4000 % of the host link's peak (PCIe gen1 x1)",
                                   0) == 0);
  CHECK(exceeded[0]->message.find("fpgaprof calibrate") != std::string::npos);
  CHECK(exceeded[0]->bytes == 1000000);
  // At 31.7 % of a gen4 x16 link nothing is flagged.
  const TransferReport ok = analyze_transfers(one_copy_store());
  for (const TransferFlag& f : ok.flags) CHECK(f.kind != "link_exceeded");
}

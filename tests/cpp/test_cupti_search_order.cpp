// The libcupti search order (cupti_search_order.hpp) as a pure function: which files
// CuptiApi::get tries, in which order, with which "how", with and without a driver. The
// expected lists are written out by hand from the order documented in docs/capture.md.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cupti/cupti_search_order.hpp"

using fpgaprof::cupti::cupti_search_order;
using fpgaprof::cupti::CuptiCandidate;
using fpgaprof::cupti::CuptiSearchInputs;

namespace {

using Kind = CuptiCandidate::Kind;
using Row = std::pair<std::string, std::string>;  // name, how

std::vector<Row> rows(const std::vector<CuptiCandidate>& candidates) {
  std::vector<Row> out;
  for (const auto& c : candidates) out.emplace_back(c.name, c.how);
  return out;
}

std::vector<Row> toolkit_rows(const std::string& how, bool with_cuda_home) {
  std::vector<Row> out;
  std::vector<std::string> dirs;
  if (with_cuda_home) dirs = {"/opt/cuda-13.0/lib64", "/opt/cuda-13.0/extras/CUPTI/lib64"};
  dirs.emplace_back("/usr/local/cuda/lib64");
  dirs.emplace_back("/usr/local/cuda/extras/CUPTI/lib64");
  for (const auto& d : dirs) {
    out.emplace_back(d + "/libcupti.so.13", how);
    out.emplace_back(d + "/libcupti.so.12", how);
    out.emplace_back(d + "/libcupti.so", how);
  }
  return out;
}

const std::vector<Row> kWheelRows = {
    {"/venv/site-packages/nvidia/cu13/lib/libcupti.so.13", "pip wheel"},
    {"/venv/site-packages/nvidia/cu13/lib/libcupti.so.12", "pip wheel"},
    {"/other/nvidia/cuda_cupti/lib/libcupti.so.13", "pip wheel"},
    {"/other/nvidia/cuda_cupti/lib/libcupti.so.12", "pip wheel"},
};
const std::vector<Row> kSystemRows = {
    {"libcupti.so.13", "system library path"},
    {"libcupti.so.12", "system library path"},  // CUDA 12 installs (jax[cuda12]'s image)
    {"libcupti.so", "system library path"},
};

std::vector<Row> concat(std::initializer_list<std::vector<Row>> parts) {
  std::vector<Row> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

CuptiSearchInputs inputs(bool driver) {
  CuptiSearchInputs in;
  in.driver_present = driver;
  // An empty entry (a stray colon) is skipped.
  in.wheel_lib_dirs = "/venv/site-packages/nvidia/cu13/lib::/other/nvidia/cuda_cupti/lib";
  in.cuda_home = "/opt/cuda-13.0";
  return in;
}

// Sets or unsets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("with a driver: wheel, then toolkit, then the system path", "[cupti][loader]") {
  const auto order = cupti_search_order(inputs(true));
  CHECK(rows(order) == concat({kWheelRows, toolkit_rows("CUDA toolkit", true), kSystemRows}));
  REQUIRE(order.size() == 4 + 12 + 3);
  for (std::size_t i = 0; i < 16; ++i) CHECK(order[i].kind == Kind::kFile);
  CHECK(order[16].kind == Kind::kSoname);
  CHECK(order[17].kind == Kind::kSoname);
}

TEST_CASE("without a driver the toolkit comes before the wheel and says why", "[cupti][loader]") {
  const std::string why = "CUDA toolkit (no driver: the wheel's libcupti needs one for the Profiler Host API)";
  const auto order = cupti_search_order(inputs(false));
  CHECK(rows(order) == concat({toolkit_rows(why, true), kWheelRows, kSystemRows}));
}

TEST_CASE("without a driver and without a wheel the toolkit needs no reason", "[cupti][loader]") {
  CuptiSearchInputs in = inputs(false);
  in.wheel_lib_dirs = ":";  // only empty entries: no wheel folder
  in.cuda_home.clear();
  CHECK(rows(cupti_search_order(in)) == concat({toolkit_rows("CUDA toolkit", false), kSystemRows}));
  in.driver_present = true;  // same list with a driver
  CHECK(rows(cupti_search_order(in)) == concat({toolkit_rows("CUDA toolkit", false), kSystemRows}));
}

TEST_CASE("FPGAPROF_CUPTI_LIBRARY is the only candidate, driver or not", "[cupti][loader]") {
  // The test double (FPGAPROF_FAKE_CUPTI in the Python tests) is loaded this way.
  for (const bool driver : {true, false}) {
    CuptiSearchInputs in = inputs(driver);
    in.exact_library = "/build/tests/libfake_cupti.so";
    const auto order = cupti_search_order(in);
    REQUIRE(order.size() == 1);
    CHECK(order[0].kind == Kind::kExactPath);
    CHECK(order[0].name == "/build/tests/libfake_cupti.so");
    CHECK(order[0].how == "FPGAPROF_CUPTI_LIBRARY");
  }
}

TEST_CASE("the search inputs come from the process environment", "[cupti][loader]") {
  ScopedEnv wheel("FPGAPROF_WHEEL_LIB_DIRS", "/w1:/w2");
  ScopedEnv home("CUDA_HOME", "/opt/cuda");
  {
    ScopedEnv exact("FPGAPROF_CUPTI_LIBRARY", "/x/libcupti.so.13");
    const CuptiSearchInputs in = CuptiSearchInputs::from_process();
    CHECK(in.exact_library == "/x/libcupti.so.13");
    CHECK(in.wheel_lib_dirs == "/w1:/w2");
    CHECK(in.cuda_home == "/opt/cuda");
    CHECK(in.driver_present);  // not asked: it cannot change the order
  }
  ScopedEnv exact("FPGAPROF_CUPTI_LIBRARY", nullptr);
  const CuptiSearchInputs in = CuptiSearchInputs::from_process();
  CHECK(in.exact_library.empty());
  void* cuda = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  CHECK(in.driver_present == (cuda != nullptr));  // false on the CPU-only CI machine
  if (cuda != nullptr) ::dlclose(cuda);
}

TEST_CASE("of several libcupti already loaded, the user's file, then JAX's major, is taken", "[cupti][loader]") {
  using fpgaprof::cupti::loaded_cupti_probe_order;
  using V = std::vector<std::string>;
  // nothing said: the newest major first, as before
  CHECK(loaded_cupti_probe_order("", "") == V{"libcupti.so.13", "libcupti.so.12", "libcupti.so"});
  // JAX's CUDA 12 plugin (it also maps the 13 wheel's libcupti when that wheel is installed)
  CHECK(loaded_cupti_probe_order("", "12") == V{"libcupti.so.12", "libcupti.so.13", "libcupti.so"});
  CHECK(loaded_cupti_probe_order("", "13") == V{"libcupti.so.13", "libcupti.so.12", "libcupti.so"});
  // an unknown major is ignored
  CHECK(loaded_cupti_probe_order("", "11") == V{"libcupti.so.13", "libcupti.so.12", "libcupti.so"});
  // FPGAPROF_CUPTI_LIBRARY, when that file is loaded, before all
  CHECK(loaded_cupti_probe_order("/x/libcupti.so.12", "13") ==
        V{"/x/libcupti.so.12", "libcupti.so.13", "libcupti.so.12", "libcupti.so"});
  CHECK(loaded_cupti_probe_order("libcupti.so.12", "12") == V{"libcupti.so.12", "libcupti.so.13", "libcupti.so"});
}

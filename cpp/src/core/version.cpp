#include "fpgaprof/version.hpp"
namespace fpgaprof {
const char* version() { return FPGAPROF_VERSION; }
}  // namespace fpgaprof

#pragma once
namespace fpgaprof {
// The one place that holds the version; CMake passes PROJECT_VERSION.
const char* version();
}  // namespace fpgaprof

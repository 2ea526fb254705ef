# Locates the build dependencies without downloading anything: CUPTI and NVTX3 headers
# (CUDA toolkit or the nvidia-cuda-cupti / nvidia-nvtx wheels), nlohmann/json (Debian package
# or the nlohmann-json wheel), pybind11 (the wheel or the Debian package).

find_package(Python COMPONENTS Interpreter Development.Module QUIET)

set(_fp_wheel_include "")
if(Python_EXECUTABLE)
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c
      "import os\ntry:\n import nvidia\n ps=list(nvidia.__path__)\nexcept Exception:\n ps=[]\nprint(';'.join(os.path.join(p,d,'include') for p in ps for d in ('cu13','cuda_cupti','nvtx')))"
    OUTPUT_VARIABLE _fp_wheel_include OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()

set(_fp_cuda_hints "")
if(DEFINED ENV{CUDA_HOME})
  list(APPEND _fp_cuda_hints "$ENV{CUDA_HOME}/include" "$ENV{CUDA_HOME}/extras/CUPTI/include")
endif()
list(APPEND _fp_cuda_hints /usr/local/cuda/include /usr/local/cuda/extras/CUPTI/include)

find_path(FPGAPROF_CUPTI_INCLUDE_DIR cupti_activity.h
  HINTS ${_fp_cuda_hints} ${_fp_wheel_include}
  DOC "Directory holding cupti.h (CUDA toolkit or the nvidia-cuda-cupti wheel)")
if(NOT FPGAPROF_CUPTI_INCLUDE_DIR)
  message(FATAL_ERROR "CUPTI headers not found: install the CUDA toolkit or `pip install nvidia-cuda-cupti`, "
                      "or pass -DFPGAPROF_CUPTI_INCLUDE_DIR=<dir with cupti.h>")
endif()
find_path(FPGAPROF_CUDA_INCLUDE_DIR cuda.h
  HINTS ${_fp_cuda_hints} ${_fp_wheel_include} "${FPGAPROF_CUPTI_INCLUDE_DIR}"
  DOC "Directory holding cuda.h (CUPTI's headers include it)")
if(NOT FPGAPROF_CUDA_INCLUDE_DIR)
  # The nvidia-cuda-cupti wheel has CUPTI's headers but no cuda.h: use fpgaprof's own minimal
  # stand-in (a normal variable shadowing the NOTFOUND cache entry, so a later configure
  # still looks for the real header first).
  set(FPGAPROF_CUDA_INCLUDE_DIR "${PROJECT_SOURCE_DIR}/cpp/src/cupti/compat")
  message(STATUS "fpgaprof: no cuda.h found; using the compat header in ${FPGAPROF_CUDA_INCLUDE_DIR}")
endif()
find_path(FPGAPROF_NVTX_INCLUDE_DIR nvtx3/nvToolsExt.h
  HINTS ${_fp_cuda_hints} ${_fp_wheel_include} "${FPGAPROF_CUPTI_INCLUDE_DIR}"
  DOC "Directory holding nvtx3/ (CUDA toolkit or the nvidia-nvtx wheel)")
if(NOT FPGAPROF_NVTX_INCLUDE_DIR)
  message(FATAL_ERROR "NVTX3 headers not found: install the CUDA toolkit or `pip install nvidia-nvtx`, "
                      "or pass -DFPGAPROF_NVTX_INCLUDE_DIR=<dir with nvtx3/>")
endif()
message(STATUS "fpgaprof: CUPTI headers in ${FPGAPROF_CUPTI_INCLUDE_DIR}, NVTX3 in ${FPGAPROF_NVTX_INCLUDE_DIR}")

find_package(nlohmann_json 3.2 QUIET)
if(NOT nlohmann_json_FOUND)
  set(_fp_json_hint "")
  if(Python_EXECUTABLE)
    execute_process(COMMAND "${Python_EXECUTABLE}" -c
      "import nlohmann_json,os;print(os.path.dirname(nlohmann_json.__file__))"
      OUTPUT_VARIABLE _fp_json_hint OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  find_path(FPGAPROF_JSON_INCLUDE_DIR nlohmann/json.hpp
    HINTS "${_fp_json_hint}" "${_fp_json_hint}/include" /usr/include)
  if(NOT FPGAPROF_JSON_INCLUDE_DIR)
    message(FATAL_ERROR "nlohmann/json not found: `apt-get install nlohmann-json3-dev` or `pip install nlohmann-json`")
  endif()
  add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
  set_target_properties(nlohmann_json::nlohmann_json PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${FPGAPROF_JSON_INCLUDE_DIR}")
endif()

find_package(ZLIB REQUIRED)
find_package(Threads REQUIRED)

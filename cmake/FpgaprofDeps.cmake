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

# CUPTI headers: CUDA 12.8 or newer, 12 or 13 (docs/install.md, "CUDA 12 and 13"). Any of them
# builds a core that runs with libcupti 12.8+ and 13.x; where the Python that builds fpgaprof has
# JAX's CUDA plugin, headers of that plugin's CUDA major come first, else the order of the
# hints (toolkit, then wheels). -DFPGAPROF_CUDA_MAJOR=12|13 chooses by hand, and
# -DFPGAPROF_CUPTI_INCLUDE_DIR=<dir> names the folder outright.
set(FPGAPROF_MIN_CUPTI_API_VERSION 26)  # CUDA 12.8: cpp/src/cupti/cupti_headers.hpp
set(FPGAPROF_CUDA_MAJOR "" CACHE STRING "CUDA major (12 or 13) whose CUPTI headers to prefer; empty: JAX's CUDA plugin's")

function(_fp_cupti_api_version dir out)
  set(_v "")
  if(EXISTS "${dir}/cupti_version.h")
    file(STRINGS "${dir}/cupti_version.h" _l REGEX "^#define[ \t]+CUPTI_API_VERSION[ \t]+[0-9]+")
    if(_l MATCHES "CUPTI_API_VERSION[ \t]+([0-9]+)")
      set(_v "${CMAKE_MATCH_1}")
    endif()
  endif()
  set(${out} "${_v}" PARENT_SCOPE)
endfunction()

function(_fp_cuda_of_api version out)  # 26 -> 12, 130001 -> 13
  if(version GREATER_EQUAL 130000)
    math(EXPR _m "${version} / 10000")
  else()
    set(_m 12)
  endif()
  set(${out} "${_m}" PARENT_SCOPE)
endfunction()

set(_fp_want_major "${FPGAPROF_CUDA_MAJOR}")
if(_fp_want_major STREQUAL "" AND Python_EXECUTABLE)
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c
      "import importlib.util as u\nm=[v for v in ('13','12') if u.find_spec('jax_cuda'+v+'_plugin')]\nprint(m[0] if len(m)==1 else '')"
    OUTPUT_VARIABLE _fp_want_major OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_fp_want_major)
    set(_fp_why "JAX's CUDA ${_fp_want_major} plugin is installed for ${Python_EXECUTABLE}")
  endif()
elseif(_fp_want_major)
  set(_fp_why "FPGAPROF_CUDA_MAJOR=${_fp_want_major}")
endif()

if(NOT FPGAPROF_CUPTI_INCLUDE_DIR)
  set(_fp_first "")
  set(_fp_match "")
  foreach(_d IN LISTS _fp_cuda_hints _fp_wheel_include)
    if(NOT EXISTS "${_d}/cupti_activity.h")
      continue()
    endif()
    _fp_cupti_api_version("${_d}" _v)
    if(NOT _fp_first)
      set(_fp_first "${_d}")
    endif()
    if(_v AND _fp_want_major AND NOT _fp_match)
      _fp_cuda_of_api("${_v}" _maj)
      if(_maj STREQUAL _fp_want_major)
        set(_fp_match "${_d}")
      endif()
    endif()
  endforeach()
  if(_fp_match)
    set(_fp_pick "${_fp_match}")
  else()
    set(_fp_pick "${_fp_first}")
    if(_fp_want_major AND _fp_first)
      message(STATUS "fpgaprof: ${_fp_why}, but no CUDA ${_fp_want_major} CUPTI headers were found; "
                     "using ${_fp_first} (the core runs with either libcupti)")
    endif()
  endif()
  if(_fp_pick)
    set(FPGAPROF_CUPTI_INCLUDE_DIR "${_fp_pick}" CACHE PATH "Directory holding cupti.h (CUDA toolkit or the nvidia-cuda-cupti wheel)")
  endif()
endif()
if(NOT FPGAPROF_CUPTI_INCLUDE_DIR)
  message(FATAL_ERROR "CUPTI headers not found: install the CUDA toolkit or `pip install nvidia-cuda-cupti`, "
                      "or pass -DFPGAPROF_CUPTI_INCLUDE_DIR=<dir with cupti.h>")
endif()
_fp_cupti_api_version("${FPGAPROF_CUPTI_INCLUDE_DIR}" FPGAPROF_CUPTI_API_VERSION)
if(NOT FPGAPROF_CUPTI_API_VERSION)
  message(FATAL_ERROR "${FPGAPROF_CUPTI_INCLUDE_DIR}/cupti_version.h defines no CUPTI_API_VERSION: not a CUPTI "
                      "header folder; pass -DFPGAPROF_CUPTI_INCLUDE_DIR=<dir with cupti.h> of CUDA 12.8 or newer")
endif()
if(FPGAPROF_CUPTI_API_VERSION LESS FPGAPROF_MIN_CUPTI_API_VERSION)
  message(FATAL_ERROR "the CUPTI headers in ${FPGAPROF_CUPTI_INCLUDE_DIR} are API version ${FPGAPROF_CUPTI_API_VERSION} "
                      "(cupti_version.h), older than CUDA 12.8's (${FPGAPROF_MIN_CUPTI_API_VERSION}) that fpgaprof "
                      "needs: `pip install 'nvidia-cuda-cupti-cu12>=12.8'` (or a CUDA 12.8+ toolkit) and pass "
                      "-DFPGAPROF_CUPTI_INCLUDE_DIR=<its include folder>, or -DFPGAPROF_CUDA_MAJOR=13")
endif()
_fp_cuda_of_api("${FPGAPROF_CUPTI_API_VERSION}" _fp_major)
if(_fp_why)
  message(STATUS "fpgaprof: CUPTI headers of CUDA ${_fp_major} (API version ${FPGAPROF_CUPTI_API_VERSION}); ${_fp_why}")
else()
  message(STATUS "fpgaprof: CUPTI headers of CUDA ${_fp_major} (API version ${FPGAPROF_CUPTI_API_VERSION})")
endif()
# cuda.h from the same CUDA as the CUPTI headers (a toolkit keeps CUPTI in include/ or
# extras/CUPTI/include): CUPTI 12.8's headers with CUDA 13's cuda.h do not mix.
find_path(FPGAPROF_CUDA_INCLUDE_DIR cuda.h
  HINTS "${FPGAPROF_CUPTI_INCLUDE_DIR}" "${FPGAPROF_CUPTI_INCLUDE_DIR}/../../../include"
  NO_DEFAULT_PATH
  DOC "Directory holding cuda.h (CUPTI's headers include it)")
if(NOT FPGAPROF_CUDA_INCLUDE_DIR)
  # The nvidia-cuda-cupti wheel has CUPTI's headers but no cuda.h: use fpgaprof's own minimal
  # stand-in (a normal variable shadowing the NOTFOUND cache entry, so a later configure
  # still looks for the real header first).
  set(FPGAPROF_CUDA_INCLUDE_DIR "${PROJECT_SOURCE_DIR}/cpp/src/cupti/compat")
  message(STATUS "fpgaprof: no cuda.h beside the CUPTI headers; using the compat header in ${FPGAPROF_CUDA_INCLUDE_DIR}")
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

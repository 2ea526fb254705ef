# The layers include one way (docs/architecture.md): core <- hlo <- analysis, and the capture
# layer (cpp/src/cupti, cpp/include/fpgaprof/cupti) <- core. Core, hlo and analysis code must
# include no header of a layer above it, nothing of the capture layer and no CUPTI, NVTX or CUDA
# header. The layers' CMake targets enforce the vendor headers (only fpgaprof_cupti has their
# include directories); this check covers our own headers, which share one include root.
# Usage: cmake -DROOT=<repository> -P cmake/CheckLayers.cmake   (ctest: layer_includes)
cmake_minimum_required(VERSION 3.20)
if(NOT ROOT)
  message(FATAL_ERROR "CheckLayers: give -DROOT=<repository>")
endif()

set(_vendor "(^|/)cupti" "^nv" "^cuda" "^generated_" "^builtin_types")
set(_layers core hlo analysis)
set(_core_dirs "cpp/src/core" "cpp/include/fpgaprof")
set(_core_forbidden "^fpgaprof/hlo/" "^fpgaprof/analysis/" ${_vendor})
set(_hlo_dirs "cpp/src/hlo" "cpp/include/fpgaprof/hlo")
set(_hlo_forbidden "^fpgaprof/analysis/" ${_vendor})
set(_analysis_dirs "cpp/src/analysis" "cpp/include/fpgaprof/analysis")
set(_analysis_forbidden ${_vendor})

set(_bad "")
set(_files_checked 0)
foreach(layer IN LISTS _layers)
  foreach(dir IN LISTS _${layer}_dirs)
    # Not recursive: cpp/include/fpgaprof holds the core's headers, its folders the other layers'.
    file(GLOB _files "${ROOT}/${dir}/*.cpp" "${ROOT}/${dir}/*.hpp")
    foreach(f IN LISTS _files)
      math(EXPR _files_checked "${_files_checked} + 1")
      file(STRINGS "${f}" _includes REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
      foreach(line IN LISTS _includes)
        string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]*)[>\"].*$" "\\1" _header "${line}")
        foreach(pattern IN LISTS _${layer}_forbidden)
          if(_header MATCHES "${pattern}")
            file(RELATIVE_PATH _rel "${ROOT}" "${f}")
            list(APPEND _bad "${_rel} (${layer} layer) includes ${_header}")
            break()
          endif()
        endforeach()
      endforeach()
    endforeach()
  endforeach()
endforeach()

if(_files_checked EQUAL 0)
  message(FATAL_ERROR "CheckLayers: no source files under ${ROOT}/cpp: wrong ROOT?")
endif()
if(_bad)
  list(JOIN _bad "\n  " _text)
  message(FATAL_ERROR "layering broken (docs/architecture.md: core <- hlo <- analysis, capture <- core; "
                      "move the code to the layer it needs, or the header to the layer below):\n  ${_text}")
endif()
message(STATUS "layers: ${_files_checked} files of core, hlo and analysis include only the layers below them")

// The fixed module the card fuzzers estimate on each card they accept: a dot, a gather and a
// loop of elementwise ops (each of the card model's paths: compute, random access, a loop).
#pragma once

#include "fpgaprof/hlo/cost_model.hpp"

namespace card_fuzz {

inline const char* const kModule = R"(HloModule card_fuzz

cond {
  p = (s32[], f32[1024]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[1024]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[1024]{0} get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  w = f32[1024]{0} multiply(v, v)
  ROOT t = (s32[], f32[1024]{0}) tuple(j, w)
}

ENTRY e {
  a = f32[256,256]{1,0} parameter(0)
  b = f32[256,256]{1,0} parameter(1)
  d = f32[256,256]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  idx = s32[64,1]{1,0} parameter(2)
  g = f32[64,256]{1,0} gather(d, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,256}
  x = f32[1024]{0} parameter(3)
  z = s32[] constant(0)
  t = (s32[], f32[1024]{0}) tuple(z, x)
  ROOT w = (s32[], f32[1024]{0}) while(t), condition=cond, body=body, backend_config={"known_trip_count":{"n":"4"}}
}
)";

inline const fpgaprof::hlo::Module& module() {
  static const fpgaprof::hlo::Module m = fpgaprof::hlo::analyze_hlo(kModule);
  return m;
}

}  // namespace card_fuzz

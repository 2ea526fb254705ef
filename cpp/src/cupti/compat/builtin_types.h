/* fpgaprof's stand-in for the CUDA runtime header <builtin_types.h>, which CUPTI's
 * cupti_callbacks.h includes but the nvidia-cuda-cupti wheel does not ship. The CUPTI
 * declarations fpgaprof compiles need nothing from it (see cuda.h beside this file). */
#ifndef FPGAPROF_COMPAT_BUILTIN_TYPES_H
#define FPGAPROF_COMPAT_BUILTIN_TYPES_H
#endif

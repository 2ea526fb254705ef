/* fpgaprof's own minimal stand-in for the CUDA driver header <cuda.h>.
 *
 * Why: the nvidia-cuda-cupti wheel ships CUPTI's headers, which #include <cuda.h>, but not
 * cuda.h itself. The build uses this file only when no real cuda.h is found
 * (FPGAPROF_CUDA_INCLUDE_DIR NOTFOUND, see cmake/FpgaprofDeps.cmake). It declares only the
 * handle types, enums and macros that CUPTI's activity/callback/result/version headers name;
 * fpgaprof never calls the driver through these declarations (libcuda is dlopen'ed and
 * called through its own function table in cuda_driver.cpp). Handle types are opaque
 * pointers with the same names and the same ABI (a pointer, an int) as the real header.
 */
#ifndef FPGAPROF_COMPAT_CUDA_H
#define FPGAPROF_COMPAT_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifndef CUDA_VERSION
#define CUDA_VERSION 13000
#endif

#ifndef CUDAAPI
#define CUDAAPI
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef int CUresult; /* CUDA_SUCCESS == 0; other values as in the driver API */
#define CUDA_SUCCESS 0

typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUlib_st* CUlibrary;
typedef struct CUkern_st* CUkernel;
typedef struct CUstream_st* CUstream;
typedef struct CUevent_st* CUevent;
typedef struct CUgraph_st* CUgraph;
typedef struct CUgraphNode_st* CUgraphNode;
typedef struct CUgraphExec_st* CUgraphExec;
typedef struct CUmemPoolHandle_st* CUmemoryPool;
typedef struct CUgreenCtx_st* CUgreenCtx;

typedef struct CUuuid_st {
  char bytes[16];
} CUuuid;

/* CUPTI's device-attribute record stores the attribute as this enum; any int value fits. */
typedef enum CUdevice_attribute_enum {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX = 0x7fffffff
} CUdevice_attribute;

typedef enum CUaccessProperty_enum {
  CU_ACCESS_PROPERTY_NORMAL = 0,
  CU_ACCESS_PROPERTY_STREAMING = 1,
  CU_ACCESS_PROPERTY_PERSISTING = 2
} CUaccessProperty;

/* Used by value in CUPTI's graph-node callback data; values as in the driver API. */
typedef enum CUgraphNodeType_enum {
  CU_GRAPH_NODE_TYPE_KERNEL = 0,
  CU_GRAPH_NODE_TYPE_MAX = 0x7fffffff
} CUgraphNodeType;

/* Stream-attribute callback data: the id by value, the value only through a pointer. */
typedef enum CUlaunchAttributeID_enum {
  CU_LAUNCH_ATTRIBUTE_IGNORE = 0,
  CU_LAUNCH_ATTRIBUTE_MAX = 0x7fffffff
} CUlaunchAttributeID;
typedef CUlaunchAttributeID CUstreamAttrID;
typedef union CUlaunchAttributeValue_union CUstreamAttrValue;

/* Same layout as the driver's: CUPTI kernel records point at one of these. */
typedef struct CUaccessPolicyWindow_st {
  void* base_ptr;
  size_t num_bytes;
  float hitRatio;
  CUaccessProperty hitProp;
  CUaccessProperty missProp;
} CUaccessPolicyWindow;

#ifdef __cplusplus
}
#endif

#endif /* FPGAPROF_COMPAT_CUDA_H */

// A project header that turns on a CUDA-only library where the build is not
// for HIP: files that include it test the feature, not the platform.
#pragma once
#if !defined(DEMO_BUILD_HIP) && CUDART_VERSION >= 11070
#define DEMO_HAVE_CUB
#endif
#define DEMO_HAVE_FAST_SUM

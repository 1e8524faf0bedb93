// A project's platform header: it names the toolchain once, for every file.
#ifndef DEMO_PLATFORM_HPP
#define DEMO_PLATFORM_HPP
#if defined(__HIP_PLATFORM_AMD__)
#define DEMO_DEVICE_HIP
#else
#define DEMO_DEVICE_CUDA
#endif
#endif

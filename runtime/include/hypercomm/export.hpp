// What a shared libhypercomm exports: the declarations of the installed headers, each of which
// wraps them in HYPERCOMM_PUBLIC_BEGIN / HYPERCOMM_PUBLIC_END, and nothing else. The library is
// compiled with hidden visibility (CMake: CXX_VISIBILITY_PRESET hidden), so the runtime's and the
// collectives' own classes and functions stay inside it. HYPERCOMM_INTERNAL marks the few
// internal ones that hypercomm::mpi, a library of its own, builds on.
#pragma once

#if defined(__GNUC__)
#define HYPERCOMM_PUBLIC_BEGIN _Pragma("GCC visibility push(default)")
#define HYPERCOMM_PUBLIC_END _Pragma("GCC visibility pop")
#define HYPERCOMM_INTERNAL __attribute__((visibility("default")))
#else
#define HYPERCOMM_PUBLIC_BEGIN
#define HYPERCOMM_PUBLIC_END
#define HYPERCOMM_INTERNAL
#endif

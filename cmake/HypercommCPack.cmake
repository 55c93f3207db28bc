# CPack settings: `cd build/release && cpack -G DEB` packages what `cmake --install` installs
# (the library, its headers, the CMake package and pkg-config files, the hypercomm command; not
# the demo, the tests or the benchmarks, which install nothing) into hypercomm_<version>_<arch>.deb.
set(CPACK_PACKAGE_NAME hypercomm)
set(CPACK_PACKAGE_VENDOR "hypercomm developers")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Message-passing VPs as threads with the collectives of Grama et al., ch. 4")
set(CPACK_PACKAGE_DESCRIPTION
    "hypercomm runs one thread per virtual processor on a ring, linear array, 2-D mesh or \
hypercube, and the collective algorithms of Grama, Gupta, Karypis and Kumar, Introduction to \
Parallel Computing, chapter 4, on it; every run reports its wall time beside its textbook model \
time. The package holds the C++20 library, its headers, CMake and pkg-config files and the \
hypercomm command (run, list, calibrate, sweep).")
set(CPACK_PACKAGE_CONTACT "hypercomm developers")
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_PACKAGE_MAINTAINER "hypercomm developers")
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # hypercomm_0.1.0_amd64.deb
# The library and the command need only the C++ runtime they were built with (GCC 12's
# libstdc++ for a GCC 12 build); Boost.Lockfree is header-only and compiled in.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  string(REGEX MATCH "^[0-9]+" HYPERCOMM_GCC_MAJOR "${CMAKE_CXX_COMPILER_VERSION}")
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libstdc++6 (>= ${HYPERCOMM_GCC_MAJOR})")
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libstdc++6")
endif()
# With BUILD_SHARED_LIBS the package installs a shared library: run ldconfig after (un)install.
if(BUILD_SHARED_LIBS)
  set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
endif()

include(CPack)

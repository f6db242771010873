# ctest `layering_includes`: the include check of the layering rules (TccdLayering.cmake) over
# the source tree as it is now, so that a stray #include fails the tests even when nothing was
# reconfigured.
#   cmake -DSOURCE_DIR=<repo> -DMANIFEST=<build>/tccd_layering.cmake [-DTCCD_INJECT="f|line"]
#         -P cmake/check_layering.cmake
cmake_minimum_required(VERSION 3.22)  # IN_LIST and the other policies of the project
include(${MANIFEST})
include(${CMAKE_CURRENT_LIST_DIR}/TccdLayering.cmake)
tccd_check_includes(${SOURCE_DIR} errors)
if(errors)
  message(FATAL_ERROR "layering rules broken (declared in the top-level CMakeLists.txt):\n${errors}"
                      "${TCCD_LAYERING_HINT}")
endif()
message(STATUS "layering: every #include stays within its layer")

# tccd_cc_library / tccd_cc_test / tccd_cc_binary: the declarative helpers every
# directory's CMakeLists.txt uses (after Abseil's CMake/AbseilHelpers.cmake).
#
#   tccd_cc_library(NAME foo SRCS a.cc b.cc DEPS bar absl::status)
#   tccd_cc_test(NAME foo_test SRCS foo_test.cc DEPS foo)
#
# Targets are named tccd_<NAME>; tests are Catch2 v2 binaries registered with CTest.

function(tccd_cc_library)
  cmake_parse_arguments(T "" "NAME" "SRCS;DEPS;PUBLIC_DEPS" ${ARGN})
  add_library(tccd_${T_NAME} STATIC ${T_SRCS})
  target_include_directories(tccd_${T_NAME} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  target_link_libraries(tccd_${T_NAME} PUBLIC ${T_DEPS} ${T_PUBLIC_DEPS})
  set_target_properties(tccd_${T_NAME} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()

function(tccd_cc_binary)
  cmake_parse_arguments(T "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${T_NAME} ${T_SRCS})
  target_link_libraries(${T_NAME} PRIVATE ${T_DEPS})
  set_target_properties(${T_NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
endfunction()

function(tccd_cc_test)
  cmake_parse_arguments(T "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${T_NAME} ${T_SRCS} ${PROJECT_SOURCE_DIR}/tests/catch_main.cc)
  target_link_libraries(${T_NAME} PRIVATE ${T_DEPS} Catch2::Catch2)
  set_target_properties(${T_NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  add_test(NAME ${T_NAME} COMMAND ${T_NAME} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endfunction()

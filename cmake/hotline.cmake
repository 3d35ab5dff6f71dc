# Helpers shared by every module's CMakeLists.txt.

# hotline_test(NAME SOURCES... [LIBS libs...] [LABELS labels...])
# One gtest executable; each TEST becomes a CTest test. Tests run from the build folder and get
# HOTLINE_SOURCE_DIR and HOTLINE_SHARED_DATA_DIR as compile definitions.
function(hotline_test name)
  if(NOT HOTLINE_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES} ${T_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    HOTLINE_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
    HOTLINE_SHARED_DATA_DIR="${HOTLINE_SHARED_DATA_DIR}"
    HOTLINE_BINARY_DIR="${CMAKE_BINARY_DIR}")
  set(labels unit)
  if(T_LABELS)
    set(labels ${T_LABELS})
  endif()
  gtest_discover_tests(${name}
    WORKING_DIRECTORY "${CMAKE_BINARY_DIR}"
    DISCOVERY_TIMEOUT 60
    PROPERTIES LABELS "${labels}" TIMEOUT 300)
endfunction()

# hotline_bench(NAME SOURCES... LIBS libs...)
function(hotline_bench name)
  if(NOT HOTLINE_BUILD_BENCH)
    return()
  endif()
  cmake_parse_arguments(B "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${B_SOURCES} ${B_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE ${B_LIBS} benchmark::benchmark)
  target_compile_definitions(${name} PRIVATE
    HOTLINE_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
    HOTLINE_SHARED_DATA_DIR="${HOTLINE_SHARED_DATA_DIR}")
endfunction()

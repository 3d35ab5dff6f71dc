# Helpers shared by every module's CMakeLists.txt.

# hotline_test(NAME SOURCES... [LIBS libs...] [LABELS label] [SLOW gtest-filter])
# One gtest executable; each TEST becomes a CTest test. Tests run from the build folder; the
# build's paths (HOTLINE_SOURCE_DIR, ...) come from common/build_paths.h.
# SLOW names the tests (a --gtest_filter: "Suite.Name:Other.*", or "*" for all) labelled `slow`
# instead: whole lines run through the built `hotline` that take minutes in the sanitizer build.
# `scripts/test --sanitize` leaves them out (the normal suite runs them; `--all` keeps them).
function(hotline_test name)
  if(NOT HOTLINE_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(T "" "SLOW;LABELS" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES} ${T_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE ${T_LIBS} hotline_build_paths GTest::gtest GTest::gmock
                        GTest::gtest_main)
  set(labels unit)
  if(T_LABELS)
    set(labels ${T_LABELS})
  endif()
  # One label per test: gtest_discover_tests (CMake 3.25) flattens a list of labels into the
  # property list it writes, so with "a;b" `b` would become a property name.
  if(T_SLOW STREQUAL "*")
    set(labels slow)
    set(T_SLOW "")
  endif()
  if(T_SLOW)
    # Two discoveries of one executable: the slow tests, then every other.
    gtest_discover_tests(${name}
      WORKING_DIRECTORY "${CMAKE_BINARY_DIR}"
      DISCOVERY_TIMEOUT 60
      TEST_FILTER "${T_SLOW}"
      PROPERTIES LABELS slow TIMEOUT 300)
    gtest_discover_tests(${name}
      WORKING_DIRECTORY "${CMAKE_BINARY_DIR}"
      DISCOVERY_TIMEOUT 60
      TEST_FILTER "-${T_SLOW}"
      PROPERTIES LABELS "${labels}" TIMEOUT 300)
  else()
    gtest_discover_tests(${name}
      WORKING_DIRECTORY "${CMAKE_BINARY_DIR}"
      DISCOVERY_TIMEOUT 60
      PROPERTIES LABELS "${labels}" TIMEOUT 300)
  endif()
endfunction()

# hotline_bench(NAME SOURCES... LIBS libs...)
function(hotline_bench name)
  if(NOT HOTLINE_BUILD_BENCH)
    return()
  endif()
  cmake_parse_arguments(B "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${B_SOURCES} ${B_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE ${B_LIBS} hotline_build_paths benchmark::benchmark)
endfunction()

# hotline_globbed_module(NAME [SUBFOLDERS] [PUBLIC_LIBS libs...] [PRIVATE_LIBS libs...]
#                        [SLOW_TESTS <file>_test gtest-filter ...])
# One static library hotline_NAME from every non-test .cc of the calling folder (several engineers
# add files at once, so sources are globbed), then the folder's optional deps.cmake, then one test
# program NAME_<file> per *_test.cc. With SUBFOLDERS, the folder's sub-folders (one level down)
# belong to the same library, and their tests are named NAME_<file> too (file names must then be
# unique across the sub-folders). SLOW_TESTS pairs a test file's name (without .cc) with the
# filter of its slow tests (hotline_test's SLOW). Does nothing when the folder has no sources yet.
function(hotline_globbed_module name)
  cmake_parse_arguments(M "SUBFOLDERS" "" "PUBLIC_LIBS;PRIVATE_LIBS;SLOW_TESTS" ${ARGN})
  set(patterns "${CMAKE_CURRENT_SOURCE_DIR}/*.cc")
  if(M_SUBFOLDERS)
    list(APPEND patterns "${CMAKE_CURRENT_SOURCE_DIR}/*/*.cc")
  endif()
  file(GLOB files CONFIGURE_DEPENDS ${patterns})
  set(sources ${files})
  list(FILTER sources EXCLUDE REGEX "_test\\.cc$")
  if(NOT sources)
    return()
  endif()
  add_library(hotline_${name} STATIC ${sources})
  target_include_directories(hotline_${name} PUBLIC ${CMAKE_SOURCE_DIR}/src)
  target_link_libraries(hotline_${name} PUBLIC hotline_common ${M_PUBLIC_LIBS} PRIVATE ${M_PRIVATE_LIBS})
  # Extra dependencies (system libraries, other modules) of this folder.
  include(${CMAKE_CURRENT_SOURCE_DIR}/deps.cmake OPTIONAL)
  set(tests ${files})
  list(FILTER tests INCLUDE REGEX "_test\\.cc$")
  foreach(t ${tests})
    get_filename_component(tname "${t}" NAME_WE)
    set(slow "")
    list(FIND M_SLOW_TESTS "${tname}" at)
    if(at GREATER_EQUAL 0)
      math(EXPR at "${at} + 1")
      list(GET M_SLOW_TESTS ${at} slow)
    endif()
    hotline_test(${name}_${tname} "${t}" LIBS hotline_${name} SLOW "${slow}")
  endforeach()
endfunction()

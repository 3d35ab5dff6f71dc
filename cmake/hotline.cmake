# Helpers shared by every module's CMakeLists.txt.

# hotline_test(NAME SOURCES... [LIBS libs...] [LABELS labels...])
# One gtest executable; each TEST becomes a CTest test. Tests run from the build folder; the
# build's paths (HOTLINE_SOURCE_DIR, ...) come from common/build_paths.h.
function(hotline_test name)
  if(NOT HOTLINE_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES} ${T_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE ${T_LIBS} hotline_build_paths GTest::gtest GTest::gmock
                        GTest::gtest_main)
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
  target_link_libraries(${name} PRIVATE ${B_LIBS} hotline_build_paths benchmark::benchmark)
endfunction()

# hotline_globbed_module(NAME [SUBFOLDERS] [PUBLIC_LIBS libs...] [PRIVATE_LIBS libs...])
# One static library hotline_NAME from every non-test .cc of the calling folder (several engineers
# add files at once, so sources are globbed), then the folder's optional deps.cmake, then one test
# program NAME_<file> per *_test.cc. With SUBFOLDERS, the folder's sub-folders (one level down)
# belong to the same library, and their tests are named NAME_<file> too (file names must then be
# unique across the sub-folders). Does nothing when the folder has no sources yet.
function(hotline_globbed_module name)
  cmake_parse_arguments(M "SUBFOLDERS" "" "PUBLIC_LIBS;PRIVATE_LIBS" ${ARGN})
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
    hotline_test(${name}_${tname} "${t}" LIBS hotline_${name})
  endforeach()
endfunction()

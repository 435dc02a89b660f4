# placement_test(NAME SOURCES ... LIBS ...): one GoogleTest binary, its tests discovered into CTest.
# Tests find the shared benchmark inputs through PLACEMENT_SHARED_DIR and skip when it is absent.
if(PLACEMENT_BUILD_TESTS)
  include(GoogleTest)
  enable_testing()
endif()

set(PLACEMENT_SHARED_DIR "${CMAKE_SOURCE_DIR}/../shared" CACHE PATH "Folder with bench/ inputs from published work")

function(placement_test name)
  if(NOT PLACEMENT_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    PLACEMENT_SHARED_DIR="${PLACEMENT_SHARED_DIR}"
    PLACEMENT_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300)
endfunction()

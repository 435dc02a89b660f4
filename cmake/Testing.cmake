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
  # TIMED: gtest filter patterns of the tests that measure time (a placer stopping at its deadline): they run
  # alone (RUN_SERIAL, label time_sensitive), so that their generous bounds hold on a loaded machine too.
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;TIMED" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} placement_test_support GTest::gtest GTest::gmock GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    PLACEMENT_SHARED_DIR="${PLACEMENT_SHARED_DIR}"
    PLACEMENT_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  if(ARG_TIMED)
    string(JOIN ":" timed ${ARG_TIMED})
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 TEST_FILTER "-${timed}" PROPERTIES TIMEOUT 300)
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 TEST_FILTER "${timed}"
                         PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE LABELS time_sensitive)
  else()
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300)
  endif()
endfunction()

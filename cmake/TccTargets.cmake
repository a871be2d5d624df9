# tcc_add_module(NAME <target> [SOURCES ...] [DEPENDS ...])
# One library per top-level folder: public headers under <folder>/include,
# sources under <folder>/src.
function(tcc_add_module target)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS" ${ARGN})
  if(ARG_SOURCES)
    add_library(${target} ${ARG_SOURCES})
    target_include_directories(${target} PUBLIC
      $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
      $<INSTALL_INTERFACE:include>)
    target_link_libraries(${target} PUBLIC ${ARG_DEPENDS})
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  else()
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE
      $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
      $<INSTALL_INTERFACE:include>)
    target_link_libraries(${target} INTERFACE ${ARG_DEPENDS})
  endif()
  add_library(tcc::${target} ALIAS ${target})
endfunction()

# tcc_add_test_suite(<name> SOURCES ... DEPENDS ... [LABELS ...])
# A GoogleTest executable whose tests are registered with ctest one by one.
function(tcc_add_test_suite name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPENDS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    TCC_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    TCC_SHARED_DATA_DIR="${TCC_SHARED_DATA_DIR}")
  include(GoogleTest)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${ARG_LABELS}")
endfunction()

# Real matrices shared by tests and benchmarks live beside the checkout.
set(TCC_SHARED_DATA_DIR "${PROJECT_SOURCE_DIR}/../shared/data" CACHE PATH
    "Folder with SuiteSparse matrices and malformed Matrix Market files")
# With tests: test registration runs the test programs, several of which read these
# matrices: without them the build would stop inside test discovery.
if(TCC_BUILD_TESTS AND NOT EXISTS "${TCC_SHARED_DATA_DIR}/matrices")
  message(FATAL_ERROR "tcc: the shared data folder was not found at ${TCC_SHARED_DATA_DIR} (it needs matrices/); "
                      "check out tcc beside shared/, or pass -DTCC_SHARED_DATA_DIR=<folder>")
endif()

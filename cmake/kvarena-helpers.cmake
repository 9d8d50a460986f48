# Small helpers shared by the folders' CMakeLists: test registration with labels.

# kvarena_add_test(NAME SOURCES... [LIBS libs...] [LABELS labels...])
# One GoogleTest executable per area; every test in it is registered with CTest with the labels.
function(kvarena_add_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    KVARENA_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    KVARENA_BINARY_DIR="${PROJECT_BINARY_DIR}")
  gtest_discover_tests(${name} NO_PRETTY_VALUES
    PROPERTIES LABELS "${T_LABELS}"
    DISCOVERY_TIMEOUT 60)
endfunction()

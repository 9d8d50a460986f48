// test-util.h: helpers shared by the test executables: where the shared reference models
// live, temporary files, fixture paths.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <unistd.h>

namespace kvarena::test {

// ../shared/models beside the project root, or $KVARENA_SHARED_MODELS; "" when absent.
inline std::string shared_models_dir() {
  if (const char* env = std::getenv("KVARENA_SHARED_MODELS"); env && *env) return env;
  std::filesystem::path p = std::filesystem::path(KVARENA_SOURCE_DIR) / ".." / "shared" / "models";
  return std::filesystem::exists(p) ? std::filesystem::canonical(p).string() : "";
}

inline std::string fixture_path(const std::string& name) {
  return std::string(KVARENA_SOURCE_DIR) + "/tests/fixtures/" + name;
}

// A fresh directory under the build tree for one test's files. It sits below a folder named
// after the running test (suite.name/param), so tests that ctest runs in parallel processes
// never share one even when they pass the same `name`.
inline std::filesystem::path temp_dir(const std::string& name) {
  // Outside a test (SetUpTestSuite runs in every ctest process of the suite) the process
  // id tells the processes apart.
  const auto* ut = ::testing::UnitTest::GetInstance();
  std::string owner;
  if (const auto* info = ut->current_test_info()) {
    owner = std::string(info->test_suite_name()) + "." + info->name();
  } else {
    owner = std::string(ut->current_test_suite() ? ut->current_test_suite()->name() : "no-suite") +
            ".pid" + std::to_string(::getpid());
  }
  for (char& c : owner)
    if (c == '/' || c == '\\' || c == ' ') c = '_';
  // $KVARENA_TEST_TMPDIR instead of the build tree: binaries carried to another machine
  // (scripts/gpu-check.sh) where the build tree's path does not exist.
  const char* tmp = std::getenv("KVARENA_TEST_TMPDIR");
  auto p = (tmp && *tmp ? std::filesystem::path(tmp) : std::filesystem::path(KVARENA_BINARY_DIR) / "test-tmp") /
           owner / name;
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

}  // namespace kvarena::test

// Skip (with the reason) when ../shared/models is not beside the project.
#define KVARENA_REQUIRE_SHARED_MODELS()                                                     \
  do {                                                                                      \
    if (kvarena::test::shared_models_dir().empty())                                         \
      GTEST_SKIP() << "../shared/models not found (set KVARENA_SHARED_MODELS to its path)"; \
  } while (0)

// env-server-test-util.h: what the env server tests share (test-env-server.cpp,
// test-env-server-errors.cpp): HTTP helpers and the EnvServerTest fixture (sites and an env
// server in process on loopback). Opens namespaces kvarena and an anonymous one; the
// including file closes them.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/env-client.h"
#include "server/env-api.h"
#include "server/env-server.h"
#include "server/env-session.h"
#include "sites/site-server.h"

namespace kvarena {
namespace {

using namespace std::chrono_literals;

// A classifieds task in VWA format; `eval` is the "eval" object's JSON.
inline std::string classifieds_task(const std::string& eval, bool require_login = false,
                             const std::string& start_url = "__CLASSIFIEDS__", int64_t id = 1) {
  nlohmann::json t = {{"task_id", id},
                      {"sites", {"classifieds"}},
                      {"require_login", require_login},
                      {"storage_state", nullptr},
                      {"start_url", start_url},
                      {"intent", "What colour is the sky?"},
                      {"require_reset", false},
                      {"eval", nlohmann::json::parse(eval)}};
  return t.dump();
}

[[maybe_unused]] const std::string k_string_eval =
    R"({"eval_types": ["string_match"], "reference_answers": {"exact_match": "blue"},
        "reference_url": "", "program_html": []})";
[[maybe_unused]] const std::string k_url_eval =
    R"({"eval_types": ["url_match"], "reference_answers": null,
        "reference_url": "__CLASSIFIEDS__/category/cars", "program_html": []})";

// The [id] of the first line "[id] <role> '<name>'" of an observation; -1 when absent.
inline int64_t find_id(const std::string& obs, const std::string& role, const std::string& name) {
  std::istringstream in(obs);
  std::string line;
  const std::string want = "] " + role + " '" + name + "'";
  while (std::getline(in, line)) {
    size_t at = line.find(want);
    size_t open = line.find('[');
    if (at == std::string::npos || open == std::string::npos || open > at) continue;
    return std::stoll(line.substr(open + 1, at - open - 1));
  }
  return -1;
}

inline nlohmann::json parse_json(const std::string& s) { return nlohmann::json::parse(s); }

class EnvServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    env_server_options opt;
    opt.body_limit_bytes = 64 << 10;  // small, so the 413 tests send little
    server_ = new env_server(opt);
    server_->start();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  env_client client_{server_->base_url(), env_client_options{2000, 30000, 2, 50, ""}};
  std::string classifieds_base(const std::string& tenant) const {
    return server_->sites_server()->site_base_url(tenant, "classifieds");
  }
  sites::site_store& store() { return server_->sites_server()->store(); }

  static inline env_server* server_ = nullptr;
};


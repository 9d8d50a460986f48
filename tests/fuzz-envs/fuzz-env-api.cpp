// fuzz-env-api.cpp: libFuzzer target for the env API's request bodies (env-api.h): create
// session, step, evaluate, through env_server::handle (the whole server without a socket:
// body parsing and range checks, the task loader, placeholders, the session's text browser
// on the in-process sites, the action grammar, the evaluators).
//
// An input is bodies separated by the line "====": the first is POST /v1/sessions; when the
// session was created, the next ones but the last are POST /v1/sessions/{id}/step (at most
// 8), and the last one (of two or more) is POST /v1/sessions/{id}/evaluate; then the
// session is deleted, so no input leaves anything behind. The server: in-process sites,
// the text browser only (the Chromium executable is missing on purpose), no judge, short
// fetch timeouts, and every host but loopback behind a proxy that refuses (no network).
// Checks, beyond "no crash, no sanitizer report": every answer has a status the API
// documents for its route and a JSON body; never a 500 (an internal error is a bug).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/env-server.h"

using namespace kvarena;

namespace {

env_server* server = nullptr;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz-env-api: %s\n", what.c_str());
  std::abort();
}

sites::http_response call(const char* method, const std::string& path, const std::string& body,
                          const std::set<int>& allowed) {
  sites::http_request req;
  req.method = method;
  req.target = req.path = path;
  req.body = body;
  req.headers["content-type"] = "application/json";
  sites::http_response r = server->handle(req);
  const std::string where = std::string(method) + " " + path + " -> " + std::to_string(r.status) + ": " +
                            r.body.substr(0, 2000);
  if (!allowed.count(r.status)) fail("a status the API does not document for this route: " + where);
  nlohmann::json j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) fail("the body is not one JSON object: " + where);
  if (r.status >= 400) {
    if (!j.contains("error") || !j["error"].is_object() || !j["error"].contains("message") ||
        !j["error"]["message"].is_string())
      fail("an error without {\"error\": {\"message\"}}: " + where);
  }
  return r;
}

std::vector<std::string> split_bodies(const std::string& input) {
  std::vector<std::string> out;
  const std::string sep = "\n====\n";
  size_t start = 0;
  while (out.size() < 10) {
    size_t at = input.find(sep, start);
    if (at == std::string::npos) break;
    out.push_back(input.substr(start, at - start));
    start = at + sep.size();
  }
  out.push_back(input.substr(start));
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // libcurl reads these: anything but loopback goes to a proxy that refuses at once.
  setenv("http_proxy", "http://127.0.0.1:9", 1);
  setenv("https_proxy", "http://127.0.0.1:9", 1);
  setenv("HTTPS_PROXY", "http://127.0.0.1:9", 1);
  setenv("ALL_PROXY", "http://127.0.0.1:9", 1);
  setenv("no_proxy", "127.0.0.1,localhost", 1);
  env_server_options opt;
  opt.http.threads = 1;  // handle() is called directly; the socket is unused
  opt.sites.threads = 2;
  opt.browser.http.connect_timeout_ms = 500;
  opt.browser.http.total_timeout_ms = 2000;
  opt.chromium.executable = "/nonexistent/chromium";  // "browser": "chromium" is a 400, never a process
  opt.session_lock_timeout = std::chrono::milliseconds(1000);
  opt.max_sessions = 4;
  server = new env_server(opt);
  server->start();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<std::string> bodies = split_bodies(std::string(reinterpret_cast<const char*>(data), size));
  sites::http_response created = call("POST", "/v1/sessions", bodies[0], {201, 400, 413, 422, 502, 503});
  if (created.status != 201) return 0;
  nlohmann::json c = nlohmann::json::parse(created.body);
  if (!c.contains("session_id") || !c["session_id"].is_string()) fail("201 without a session_id: " + created.body);
  const std::string id = c["session_id"].get<std::string>();
  const std::string base = "/v1/sessions/" + id;
  const size_t steps = bodies.size() >= 2 ? std::min<size_t>(bodies.size() - 2, 8) : 0;
  for (size_t i = 1; i <= steps; ++i) call("POST", base + "/step", bodies[i], {200, 400, 409, 413, 422});
  if (bodies.size() >= 2) call("POST", base + "/evaluate", bodies.back(), {200, 400, 413, 422});
  call("GET", base, "", {200});
  call("DELETE", base, "", {200});
  if (server->session_count() != 0) fail("a session outlived its input");
  return 0;
}

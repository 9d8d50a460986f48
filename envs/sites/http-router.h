// http-router.h: method + path-pattern routing. A pattern is a path whose segments are
// literals or {name} captures of exactly one segment: "/item/{id}/edit". A trailing '/'
// is not significant ("/my/listings/" matches "/my/listings"); "/" matches the root only.
// Lookup distinguishes "no such path" (404) from "path exists, other method" (405 with the
// allowed methods), so callers answer each with the right status.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http-message.h"

namespace kvarena::sites {

// A compiled pattern; the matching logic is shared by every router instance.
class path_pattern {
 public:
  explicit path_pattern(std::string_view pattern);
  bool match(std::string_view path, path_params& captures) const;
  const std::string& text() const { return text_; }

 private:
  struct segment {
    std::string text;
    bool capture = false;
  };
  std::string text_;
  std::vector<segment> segments_;
};

template <class Handler>
class router {
 public:
  struct match_result {
    enum kind_t { found, not_found, method_not_allowed } kind = not_found;
    const Handler* handler = nullptr;
    path_params params;
    std::string allow;  // "GET, POST" when kind == method_not_allowed
  };

  void add(std::string_view method, std::string_view pattern, Handler handler) {
    routes_.push_back({std::string(method), path_pattern(pattern), std::move(handler)});
  }

  match_result find(std::string_view method, std::string_view path) const {
    match_result r;
    for (const auto& route : routes_) {
      path_params captures;
      if (!route.pattern.match(path, captures)) continue;
      if (route.method == method) {
        r.kind = match_result::found;
        r.handler = &route.handler;
        r.params = std::move(captures);
        return r;
      }
      r.kind = match_result::method_not_allowed;
      if (r.allow.find(route.method) == std::string::npos) r.allow += (r.allow.empty() ? "" : ", ") + route.method;
    }
    return r;
  }

 private:
  struct route {
    std::string method;
    path_pattern pattern;
    Handler handler;
  };
  std::vector<route> routes_;
};

}  // namespace kvarena::sites

// env-sites.h: where an env session's sites live, and the site map its task's placeholders
// are filled from. Two modes:
//   in-process (default): the env server owns a sites_server on 127.0.0.1, port 0; every
//     session gets its own tenant (a private copy of every site, created in well under a
//     millisecond) and the tenant is dropped with the session. Sessions never interfere.
//   external (--sites-url): the sites run elsewhere and no tenant API is used, so every
//     session shares the sites' state and nothing is reset between tasks: run
//     state-changing tasks one at a time, or restart the sites between them. The URL is
//     either a kvarena sites server ("http://host:8080": its sites under /main/<site>) or
//     an explicit map "classifieds=http://h:9980,shopping=http://h:7770" (VWA-style sites,
//     one base URL each).
// In both modes --site NAME=URL (site_urls) and a create request's "sites" override
// single entries of the map.
//
// Placeholders: __<SITE>__ for every site served (the forum is named "reddit", as in VWA,
// so __REDDIT__ works as is); __HOMEPAGE__ maps to the index page that lists the sites
// (in-process: the tenant's index, /<tenant>/).
//
// Login (task.require_login): the agent is logged in, through the site's own login form,
// as the site's documented default agent user (kFixedUsername of site-<name>.h, user 1 of
// every seed): classifieds "blake.sullivan", shopping "emma.lopez", reddit (the forum)
// "MarvelsGrantMan136"; a site not in that table -> its user with id 1 (in-process only).
// The password is the seeded one (site-auth.h: "password").
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sites/site-server.h"

namespace kvarena {

struct env_sites_options {
  std::string external_url;  // "" = in-process
  uint64_t seed = 1;         // in-process: site content seed
  int threads = 4;           // in-process: sites server threads
  // --site NAME=URL: sites served elsewhere (a real gitlab, wikipedia, ...), added to or
  // replacing entries of every session's map in either mode. Sessions share their state.
  std::map<std::string, std::string> site_urls;
};

class env_sites {
 public:
  explicit env_sites(env_sites_options opt);
  ~env_sites();
  env_sites(const env_sites&) = delete;
  env_sites& operator=(const env_sites&) = delete;

  // In-process: starts the sites server (throws std::runtime_error when it cannot bind).
  void start();
  void stop();

  // One session's sites: its tenant ("" when external) and its placeholder map
  // ({"classifieds": "http://127.0.0.1:P/t-1a2b3c4d/classifieds", "homepage": ...}).
  struct lease {
    std::string tenant;
    std::map<std::string, std::string> urls;
  };
  lease acquire();
  void release(const lease& l);  // drops the tenant; never throws

  bool in_process() const { return server_ != nullptr; }
  const char* mode() const { return in_process() ? "in-process" : "external"; }
  std::vector<std::string> site_names() const;

  // The username the agent is logged in as on `site`; throws env_api_error(422) when
  // there is none known.
  std::string default_user(const std::string& site, const std::string& tenant) const;

  sites::sites_server* server() { return server_.get(); }  // null when external

 private:
  env_sites_options opt_;
  std::unique_ptr<sites::sites_server> server_;
  std::map<std::string, std::string> external_urls_;  // external mode: site -> base URL
  std::string external_home_;                          // external mode: __HOMEPAGE__
};

}  // namespace kvarena

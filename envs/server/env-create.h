// env-create.h: the stages of POST /v1/sessions (env-server.cpp runs them in this order):
// read the request's task, put the sites given by URL into the tenant's map, fill the task's
// site placeholders, check its start tabs, plan the logins, derive the session's options and
// viewport. Each stage throws env_api_error 422 saying what is wrong with the request.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "server/env-api.h"
#include "server/env-server.h"
#include "server/env-session.h"
#include "server/env-sites.h"
#include "task/task.h"

namespace kvarena {

// The request's browser name checked and its one task parsed.
task parse_create_task(const env_create_request& cr);

// The sites given by URL (the server's --site, then the request's "sites", which must be
// http(s) URLs) written into `urls`; returns their names: they log in through their own forms.
std::set<std::string> apply_site_urls(const std::map<std::string, std::string>& server_site_urls,
                                      const std::map<std::string, std::string>& request_sites,
                                      std::map<std::string, std::string>& urls);

// The task's __SITE__ placeholders filled from `urls`; one with no URL is refused, naming the
// sites this server serves.
void fill_site_placeholders(task& t, const std::map<std::string, std::string>& urls, const env_sites& sites);

// At most k_max_tabs start tabs, each a URL the sessions may open.
void check_start_urls(const task& t, bool allow_file_urls);

// The logins of a task that requires them, one per site of the task: through the site's own
// form with VWA's account for a site given by URL, else kvarena's form and the tenant's user.
std::vector<env_login> plan_logins(const task& t, const env_sites::lease& lease, const std::set<std::string>& elsewhere,
                                   const env_sites& sites);

// The session's options from the server's and the request's.
env_session_options session_options_for(const env_create_request& cr, const env_server_options& opt);

// The task's viewport height in pixels (its viewport_size, checked), or 0: the browser's own.
int viewport_height_of(const task& t);

}  // namespace kvarena

// site-login.h: logging the agent in on sites served elsewhere (--site NAME=URL: the real
// VisualWebArena / WebArena sites), as VWA's browser_env/auto_login.py does, through each
// site's own login form: open the login page, fill the form that has a password field (its
// first text or email field gets the username, hidden fields such as Magento's form_key,
// Postmill's _csrf_token or GitLab's authenticity_token are sent back as given), submit it
// with the browser's cookie jar, so the session cookie lands where the episode uses it
// (text backend: its HTTP client; chromium backend: the form in the page).
// The accounts are VWA's (env_config.py ACCOUNTS):
//   shopping        /customer/account/login/        emma.lopez@gmail.com / Password.123
//   reddit          /login                          MarvelsGrantMan136 / test1234
//   classifieds     /index.php?page=login           blake.sullivan@gmail.com / Password.123
//   shopping_admin  / (the admin sign-in)           admin / admin1234
//   gitlab          /users/sign_in                  byteblaze / hello1234
// wikipedia, map and homepage need no login. kvarena's own sites keep their form
// (env-session.cpp).
#pragma once
#include <optional>
#include <string>

#include "browser/chromium/chromium-browser.h"
#include "browser/text/http-fetch.h"

namespace kvarena {

struct site_account {
  std::string login_path;  // relative to the site's base URL
  std::string username;
  std::string password;
};

// VWA's account for `site`; nullopt for sites without a login.
std::optional<site_account> vwa_account(const std::string& site);

// Logs in through the form at base_url + account.login_path. False with *err saying what
// failed (no page, no form with a password field, the site kept showing the login form).
bool form_login(http_client& http, const std::string& base_url, const site_account& account, std::string* err);

// The same in a chromium session, in the page as a user would: opens the login page, fills
// the form that has a password field (its first text or email field: the username; its
// other fields as the page set them, so CSRF tokens and the page's own scripts stay in
// play), submits it (requestSubmit: the submit event and validation run) and waits for the
// answer; the session cookie lands in the session's browser context. Same errors.
bool form_login_in_page(chromium_browser& browser, const std::string& base_url, const site_account& account,
                        std::string* err);

}  // namespace kvarena

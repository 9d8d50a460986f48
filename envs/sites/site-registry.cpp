// site-registry.cpp: the sites this build serves. Adding a site is one line here (plus its
// own files; see site.h). The order is the order of index pages and site_urls().
#include "site-classifieds.h"
#include "site-forum.h"
#include "site-shopping.h"
#include "site.h"

namespace kvarena::sites {

std::vector<std::shared_ptr<const site>> builtin_sites() {
  std::vector<std::shared_ptr<const site>> sites;
  sites.push_back(std::make_shared<site_classifieds>());
  sites.push_back(std::make_shared<site_shopping>());
  sites.push_back(std::make_shared<site_forum>());
  return sites;
}

}  // namespace kvarena::sites

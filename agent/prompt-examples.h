// prompt-examples.h: the worked examples of the prompt (VWA's "2s" style: an observation
// and the reply a good agent gives to it), written from pages of the local sites as the
// text browser prints them, shortened. Their products, listings and posts are invented,
// not in the seeded data, so no example answers a task of the suites.
#pragma once
#include <string>
#include <vector>

namespace kvarena {

struct worked_example {
  std::string site;             // "shopping", "classifieds" or "reddit"
  std::string observation;      // accessibility tree as the env returns it
  std::string url;
  std::string objective;
  std::string previous_action;  // as the step message shows it
  std::string reply;            // reasoning ending in "In summary, ... ```action```"
};

// Shopping (answer with stop), classifieds (type into the search box), forum (click a
// link), in that order.
const std::vector<worked_example>& worked_examples();

}  // namespace kvarena

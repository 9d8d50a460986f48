// gen-multisite.cpp: multisite task templates.
#include "generator/gen-templates.h"

namespace kvarena::tasks::gen {

void multisite_templates(const site_data& data, std::vector<draft>& out) {
  (void)data;
  (void)out;
}

}  // namespace kvarena::tasks::gen

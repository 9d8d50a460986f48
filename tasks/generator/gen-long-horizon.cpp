// gen-long-horizon.cpp: long-horizon task templates.
#include "generator/gen-templates.h"

namespace kvarena::tasks::gen {

void long_horizon_templates(const site_data& data, std::vector<draft>& out) {
  (void)data;
  (void)out;
}

}  // namespace kvarena::tasks::gen

// gen-templates.h: the template families of the generator, one function per file
// (gen-<family>.cpp). Each appends its drafts in a fixed order; generate.cpp numbers them.
#pragma once
#include <vector>

#include "generator/gen-builder.h"

namespace kvarena::tasks::gen {

void classifieds_templates(const site_data& data, std::vector<draft>& out);  // gen-classifieds.cpp
void shopping_templates(const site_data& data, std::vector<draft>& out);     // gen-shopping.cpp
void reddit_templates(const site_data& data, std::vector<draft>& out);       // gen-reddit.cpp
void multisite_templates(const site_data& data, std::vector<draft>& out);    // gen-multisite.cpp
void long_horizon_templates(const site_data& data, std::vector<draft>& out); // gen-long-horizon.cpp

}  // namespace kvarena::tasks::gen

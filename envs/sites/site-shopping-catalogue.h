// site-shopping-catalogue.h: the fixed word lists the shopping seed draws from (category
// tree, brands, product kinds, features, review texts, streets). Data only; the seed
// (site-shopping-seed.cpp) decides what is drawn.
#pragma once
#include <vector>

namespace kvarena::sites::shopping {

struct product_kind {
  const char* noun;  // "Wireless Noise Cancelling Headphones"
  int lo_dollars, hi_dollars;
};

struct leaf_def {
  const char* slug;
  const char* name;
  const char* review_noun;  // how a reviewer calls it: "headphones"
  std::vector<const char*> brands;
  std::vector<product_kind> kinds;
  std::vector<const char*> variants;  // appended after a comma: "Black", "2 Pack"
  std::vector<const char*> features;  // description sentences, without the final period
};

struct top_def {
  const char* slug;
  const char* name;
  std::vector<leaf_def> leaves;
};

const std::vector<top_def>& catalogue();

struct review_text {
  const char* title;
  const char* body;  // "%s" stands for the leaf's review noun
};
// Texts for a rating of 1..5.
const std::vector<review_text>& review_texts(int rating);

const std::vector<const char*>& street_names();  // "Maple Avenue"

}  // namespace kvarena::sites::shopping

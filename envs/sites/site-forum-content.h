// site-forum-content.h: the fixed word lists the forum seed draws from: the forums with
// their topics and title/body/comment templates, generic comments and replies, and the
// parts of usernames. Data only; site-forum-seed.cpp decides what is drawn.
#pragma once
#include <vector>

namespace kvarena::sites::forum {

// Templates hold "{t}" where a topic of the forum goes.
struct forum_def {
  const char* name;         // "books": the URL segment
  const char* title;        // "Books"
  const char* description;
  int weight;               // relative number of posts
  std::vector<const char*> topics;
  std::vector<const char*> titles;
  std::vector<const char*> bodies;
  std::vector<const char*> comments;
};
const std::vector<forum_def>& forum_defs();

const std::vector<const char*>& generic_comments();  // may hold "{t}"
const std::vector<const char*>& reply_texts();
const std::vector<const char*>& link_domains();      // "arstechnica.com"
const std::vector<const char*>& username_words();    // "Quiet", "Otter", ...

}  // namespace kvarena::sites::forum

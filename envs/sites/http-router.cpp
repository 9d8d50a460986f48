// http-router.cpp: path pattern compilation and matching (see http-router.h).
#include "http-router.h"

#include <stdexcept>

namespace kvarena::sites {

path_pattern::path_pattern(std::string_view pattern) : text_(pattern) {
  if (pattern.empty() || pattern.front() != '/')
    throw std::invalid_argument("route pattern must start with '/': '" + std::string(pattern) + "'");
  for (std::string_view seg : split_path(pattern)) {
    if (seg.size() >= 2 && seg.front() == '{' && seg.back() == '}')
      segments_.push_back({std::string(seg.substr(1, seg.size() - 2)), true});
    else
      segments_.push_back({std::string(seg), false});
  }
}

bool path_pattern::match(std::string_view path, path_params& captures) const {
  auto segs = split_path(path);
  if (segs.size() != segments_.size()) return false;
  for (size_t i = 0; i < segs.size(); ++i) {
    if (segments_[i].capture)
      captures[segments_[i].text] = std::string(segs[i]);
    else if (segments_[i].text != segs[i])
      return false;
  }
  return true;
}

}  // namespace kvarena::sites

// url-view.h: the URLs the model sees. The env server serves each session's sites under a
// prefix of its own (http://127.0.0.1:<port>/t-<tenant>/); shown as they are, every run and
// every shard would feed the model different tokens, so greedy runs would not repeat. The
// agent shows that prefix as one fixed origin (http://localhost/) in observations and URLs,
// and maps it back in the actions it sends (goto [url]).
#pragma once
#include <string>
#include <string_view>

namespace kvarena {

class url_view {
 public:
  // Learns the prefix from a URL of the session: scheme://authority/ plus a first path
  // segment "t-<hex>/" when there is one. A URL without a scheme gives no mapping.
  explicit url_view(std::string_view session_url);
  std::string show(std::string_view text) const;  // the real prefix -> the shown origin
  std::string real(std::string_view text) const;  // the shown origin -> the real prefix
  const std::string& prefix() const { return prefix_; }
  static constexpr std::string_view shown_origin = "http://localhost/";

 private:
  std::string prefix_;  // "" when nothing is mapped
};

}  // namespace kvarena

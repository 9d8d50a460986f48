// http-bearer.cpp: see http-bearer.h.
#include "http-bearer.h"

#include <cstdio>

namespace kvarena::sites {

bool is_loopback_host(const std::string& host) {
  if (host == "localhost" || host == "::1" || host == "[::1]") return true;
  unsigned a = 0, b = 0, c = 0, d = 0;
  char tail = 0;
  return std::sscanf(host.c_str(), "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) == 4 && a == 127 && b < 256 && c < 256 &&
         d < 256;
}

bool bearer_token_matches(const std::string& authorization, const std::string& token) {
  const std::string prefix = "Bearer ";
  if (authorization.size() != prefix.size() + token.size() || authorization.compare(0, prefix.size(), prefix) != 0)
    return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < token.size(); ++i) diff |= static_cast<unsigned char>(authorization[prefix.size() + i] ^ token[i]);
  return diff == 0;
}

}  // namespace kvarena::sites

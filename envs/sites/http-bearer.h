// http-bearer.h: what a server that may be reached by others checks: whether the address it
// binds is this machine's only (loopback), and whether a request's "Authorization: Bearer"
// header carries its token. Shared by the env server and `kvarena serve`.
#pragma once
#include <string>

namespace kvarena::sites {

// Whether `host` (an address to bind) is reachable from this machine only: 127.0.0.0/8,
// ::1, localhost.
bool is_loopback_host(const std::string& host);

// Whether `authorization` is exactly "Bearer <token>"; compared in time independent of
// where the first difference is.
bool bearer_token_matches(const std::string& authorization, const std::string& token);

}  // namespace kvarena::sites

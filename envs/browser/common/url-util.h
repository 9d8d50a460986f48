// url-util.h: URLs for the text browser, without network: resolving a reference (an href, a
// form action, a typed address) against a base URL the way a browser does, and the
// application/x-www-form-urlencoded encoding of form fields.
//
// Resolution is RFC 3986 section 5 (strict: "http:g" stays "http:g") plus the WHATWG
// leniencies that real pages rely on: surrounding whitespace and embedded tabs/newlines are
// dropped, '\' counts as '/' in http(s) paths, spaces, quotes, '<', '>' and non-ASCII bytes
// are percent-encoded, scheme and host are lowercased, and an empty http(s) path becomes "/".
// No IDNA, no port normalisation.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kvarena {

// The five RFC 3986 components. has_* tell "absent" from "present but empty" ("?" vs "").
struct url_parts {
  std::string scheme;     // lowercase, without ':'; empty for a relative reference
  std::string authority;  // host[:port], userinfo kept as written (host part lowercased)
  std::string path;
  std::string query;      // without '?'
  std::string fragment;   // without '#'
  bool has_authority = false;
  bool has_query = false;
  bool has_fragment = false;
};

// Splits a URL or relative reference into its components (never fails: anything is a path).
url_parts parse_url(std::string_view url);
std::string format_url(const url_parts& u);

// `ref` resolved against `base` (which must be absolute when `ref` is relative); nullopt
// when the result cannot be absolute. "about:blank", "mailto:x" and the like come back as
// they are: the caller decides which schemes it follows.
std::optional<std::string> resolve_url(std::string_view base, std::string_view ref);

// The origin of an http(s) URL as "scheme://host[:port]" (lowercase, no userinfo, the
// scheme's default port left out: "http://127.0.0.1:9980"); "" for any other URL (about:,
// data:, file: have no origin a task's site could share).
std::string url_origin(std::string_view url);

// The lowercase scheme of an absolute URL ("http"), "" for a relative reference.
std::string url_scheme(std::string_view url);
std::string url_without_fragment(std::string_view url);
// The fragment without '#', "" when there is none.
std::string url_fragment(std::string_view url);

// A goto target as a user types it: "example.com/x" gets "http://"; absolute URLs and
// "about:blank" pass unchanged.
std::string url_from_user_input(std::string_view text);

// application/x-www-form-urlencoded (HTML form submission): space -> '+', ASCII alnum and
// "*-._" kept, every other byte -> %XX. Newlines are normalised to CRLF first, as browsers do.
std::string form_urlencode(const std::vector<std::pair<std::string, std::string>>& fields);
std::string form_urlencode_component(std::string_view s);
// The inverse ('+' -> space, %XX decoded; malformed escapes kept as written).
std::vector<std::pair<std::string, std::string>> form_urldecode(std::string_view body);
std::string percent_decode(std::string_view s, bool plus_is_space);

}  // namespace kvarena

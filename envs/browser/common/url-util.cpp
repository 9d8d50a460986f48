// url-util.cpp: RFC 3986 reference resolution with browser leniencies, and form encoding.
// See url-util.h for what is and is not normalised.
#include "url-util.h"

#include <cctype>

#include "str-util.h"

namespace kvarena {
namespace {

bool is_scheme_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
}

bool is_special_scheme(std::string_view scheme) {
  return scheme == "http" || scheme == "https" || scheme == "file" || scheme == "ws" ||
         scheme == "wss" || scheme == "ftp";
}

// Drops leading/trailing C0 controls and spaces, and every tab/CR/LF inside (WHATWG).
std::string clean_input(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && static_cast<unsigned char>(s[b]) <= 0x20) ++b;
  while (e > b && static_cast<unsigned char>(s[e - 1]) <= 0x20) --e;
  std::string out;
  out.reserve(e - b);
  for (size_t i = b; i < e; ++i)
    if (s[i] != '\t' && s[i] != '\n' && s[i] != '\r') out += s[i];
  return out;
}

// Percent-encodes the bytes a browser would not send raw; existing escapes are kept.
std::string encode_unsafe(std::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c >= 0x7F || c == '"' || c == '<' || c == '>' || c == '`') {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += ch;
    }
  }
  return out;
}

// Lowercases the host (and port) of "user:pass@Host:Port", keeping the userinfo as written.
std::string normalise_authority(std::string_view a) {
  size_t at = a.rfind('@');
  if (at == std::string_view::npos) return ascii_lower(a);
  return std::string(a.substr(0, at + 1)) + ascii_lower(a.substr(at + 1));
}

// RFC 3986 5.2.4.
std::string remove_dot_segments(std::string_view path) {
  std::string in(path), out;
  while (!in.empty()) {
    if (in.rfind("../", 0) == 0) {
      in.erase(0, 3);
    } else if (in.rfind("./", 0) == 0) {
      in.erase(0, 2);
    } else if (in.rfind("/./", 0) == 0) {
      in.erase(0, 2);
    } else if (in == "/.") {
      in = "/";
    } else if (in.rfind("/../", 0) == 0 || in == "/..") {
      in = in.size() == 3 ? "/" : in.substr(3);
      size_t slash = out.rfind('/');
      out.erase(slash == std::string::npos ? 0 : slash);
    } else if (in == "." || in == "..") {
      in.clear();
    } else {
      size_t next = in.find('/', in[0] == '/' ? 1 : 0);
      if (next == std::string::npos) next = in.size();
      out += in.substr(0, next);
      in.erase(0, next);
    }
  }
  return out;
}

// RFC 3986 5.2.3.
std::string merge_paths(const url_parts& base, const std::string& ref_path) {
  if (base.has_authority && base.path.empty()) return "/" + ref_path;
  size_t slash = base.path.rfind('/');
  if (slash == std::string::npos) return ref_path;
  return base.path.substr(0, slash + 1) + ref_path;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

url_parts parse_url(std::string_view s) {
  url_parts u;
  size_t i = 0;
  if (!s.empty() && std::isalpha(static_cast<unsigned char>(s[0]))) {
    size_t j = 1;
    while (j < s.size() && is_scheme_char(s[j])) ++j;
    if (j < s.size() && s[j] == ':') {
      u.scheme = ascii_lower(s.substr(0, j));
      i = j + 1;
    }
  }
  if (s.compare(i, 2, "//") == 0) {
    size_t end = s.find_first_of("/?#", i + 2);
    if (end == std::string_view::npos) end = s.size();
    u.authority = std::string(s.substr(i + 2, end - i - 2));
    u.has_authority = true;
    i = end;
  }
  size_t end = s.find_first_of("?#", i);
  if (end == std::string_view::npos) end = s.size();
  u.path = std::string(s.substr(i, end - i));
  i = end;
  if (i < s.size() && s[i] == '?') {
    end = s.find('#', i);
    if (end == std::string_view::npos) end = s.size();
    u.query = std::string(s.substr(i + 1, end - i - 1));
    u.has_query = true;
    i = end;
  }
  if (i < s.size() && s[i] == '#') {
    u.fragment = std::string(s.substr(i + 1));
    u.has_fragment = true;
  }
  return u;
}

std::string format_url(const url_parts& u) {
  std::string out;
  if (!u.scheme.empty()) out += u.scheme + ":";
  if (u.has_authority) out += "//" + u.authority;
  out += u.path;
  if (u.has_query) out += "?" + u.query;
  if (u.has_fragment) out += "#" + u.fragment;
  return out;
}

std::optional<std::string> resolve_url(std::string_view base_in, std::string_view ref_in) {
  std::string ref_text = clean_input(ref_in);
  url_parts base = parse_url(clean_input(base_in));
  url_parts ref = parse_url(ref_text);
  std::string scheme = ref.scheme.empty() ? base.scheme : ref.scheme;
  if (is_special_scheme(scheme)) {  // '\' is '/' before the query, in special URLs only
    size_t stop = ref_text.find_first_of("?#");
    for (size_t i = 0; i < ref_text.size() && i < stop; ++i)
      if (ref_text[i] == '\\') ref_text[i] = '/';
    ref = parse_url(ref_text);
  }

  url_parts t;
  if (!ref.scheme.empty()) {
    t = ref;
    t.path = remove_dot_segments(ref.path);
  } else {
    if (base.scheme.empty()) return std::nullopt;
    bool hierarchical = base.has_authority || (!base.path.empty() && base.path[0] == '/');
    bool fragment_only = !ref.has_authority && ref.path.empty() && !ref.has_query;
    if (!hierarchical && !fragment_only) return std::nullopt;  // "about:blank" + "x"
    t.scheme = base.scheme;
    if (ref.has_authority) {
      t.authority = ref.authority;
      t.has_authority = true;
      t.path = remove_dot_segments(ref.path);
      t.query = ref.query;
      t.has_query = ref.has_query;
    } else {
      t.authority = base.authority;
      t.has_authority = base.has_authority;
      if (ref.path.empty()) {
        t.path = base.path;
        t.query = ref.has_query ? ref.query : base.query;
        t.has_query = ref.has_query || base.has_query;
      } else {
        t.path = remove_dot_segments(ref.path[0] == '/' ? ref.path : merge_paths(base, ref.path));
        t.query = ref.query;
        t.has_query = ref.has_query;
      }
    }
    t.fragment = ref.fragment;
    t.has_fragment = ref.has_fragment;
  }
  if (t.has_authority) t.authority = normalise_authority(t.authority);
  if (is_special_scheme(t.scheme) && t.has_authority && t.path.empty()) t.path.push_back('/');
  t.path = encode_unsafe(t.path);
  t.query = encode_unsafe(t.query);
  t.fragment = encode_unsafe(t.fragment);
  return format_url(t);
}

std::string url_scheme(std::string_view url) { return parse_url(clean_input(url)).scheme; }

std::string url_origin(std::string_view url) {
  url_parts u = parse_url(clean_input(url));
  if ((u.scheme != "http" && u.scheme != "https") || !u.has_authority) return "";
  std::string host = u.authority.substr(u.authority.rfind('@') == std::string::npos ? 0 : u.authority.rfind('@') + 1);
  for (char& c : host) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const size_t colon = host.rfind(':');
  if (colon != std::string::npos && host.find(']', colon) == std::string::npos) {  // a port, not IPv6's ':'
    const std::string port = host.substr(colon + 1);
    if (port.empty() || (u.scheme == "http" && port == "80") || (u.scheme == "https" && port == "443"))
      host.resize(colon);
  }
  if (host.empty()) return "";
  return u.scheme + "://" + host;
}

std::string url_without_fragment(std::string_view url) {
  size_t hash = url.find('#');
  return std::string(url.substr(0, hash));
}

std::string url_fragment(std::string_view url) {
  size_t hash = url.find('#');
  return hash == std::string_view::npos ? "" : std::string(url.substr(hash + 1));
}

std::string url_from_user_input(std::string_view text) {
  std::string s = clean_input(text);
  if (s.empty()) return s;
  url_parts u = parse_url(s);
  bool absolute = !u.scheme.empty() &&
                  (u.has_authority || u.scheme == "about" || u.scheme == "mailto" ||
                   u.scheme == "javascript" || u.scheme == "data");
  if (!absolute) s = "http://" + s;
  return resolve_url("", s).value_or(s);
}

std::string form_urlencode_component(std::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size() * 3 / 2);
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    // Newline normalisation: a lone CR or LF becomes CRLF.
    if (c == '\r' || c == '\n') {
      out += "%0D%0A";
      if (c == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
    } else if (std::isalnum(c) || c == '*' || c == '-' || c == '.' || c == '_') {
      out += static_cast<char>(c);
    } else if (c == ' ') {
      out += '+';
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string form_urlencode(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out;
  for (const auto& [name, value] : fields) {
    if (!out.empty()) out += '&';
    out += form_urlencode_component(name) + "=" + form_urlencode_component(value);
  }
  return out;
}

std::string percent_decode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+' && plus_is_space) {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 &&
               hex_value(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> form_urldecode(std::string_view body) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t i = 0;
  while (i <= body.size()) {
    size_t amp = body.find('&', i);
    if (amp == std::string_view::npos) amp = body.size();
    std::string_view pair = body.substr(i, amp - i);
    if (!pair.empty()) {
      size_t eq = pair.find('=');
      std::string_view name = pair.substr(0, eq);
      std::string_view value = eq == std::string_view::npos ? "" : pair.substr(eq + 1);
      out.emplace_back(percent_decode(name, true), percent_decode(value, true));
    }
    i = amp + 1;
  }
  return out;
}

}  // namespace kvarena

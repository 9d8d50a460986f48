// http-message.cpp: request/response helpers and URL parsing (see http-message.h).
#include "http-message.h"

#include <nlohmann/json.hpp>

#include "html.h"

namespace kvarena::sites {

bool param_list::has(std::string_view name) const {
  for (const auto& [k, v] : items_)
    if (k == name) return true;
  return false;
}

std::string param_list::get(std::string_view name, std::string_view fallback) const {
  for (const auto& [k, v] : items_)
    if (k == name) return v;
  return std::string(fallback);
}

std::vector<std::string> param_list::get_all(std::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : items_)
    if (k == name) out.push_back(v);
  return out;
}

std::string http_request::header(std::string_view lowercase_name) const {
  auto it = headers.find(lowercase_name);
  return it == headers.end() ? std::string() : it->second;
}

namespace {
http_response with_body(int status, const char* content_type, std::string body) {
  http_response r;
  r.status = status;
  r.content_type = content_type;
  r.body = std::move(body);
  return r;
}
}  // namespace

http_response http_response::html(std::string body, int status) {
  return with_body(status, "text/html; charset=utf-8", std::move(body));
}

http_response http_response::json(std::string body, int status) {
  return with_body(status, "application/json", std::move(body));
}

http_response http_response::text(std::string body, int status) {
  return with_body(status, "text/plain; charset=utf-8", std::move(body));
}

http_response http_response::redirect(std::string location, int status) {
  http_response r;
  r.status = status;
  r.add_header("Location", std::move(location));
  r.body = "<!DOCTYPE html><title>Redirect</title><p>Moved to <a href=\"" +
           escape_html(r.headers.back().second) + "\">" + escape_html(r.headers.back().second) + "</a></p>";
  return r;
}

http_response http_response::error(int status, std::string_view message) {
  std::string title = std::to_string(status) + " " + std::string(status_reason(status));
  return html("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + title +
                  "</title></head>\n<body><main><h1>" + title + "</h1><p>" + escape_html(message) +
                  "</p></main></body></html>\n",
              status);
}

http_response http_response::json_error(int status, std::string_view message) {
  nlohmann::json j = {{"error", {{"code", status}, {"message", std::string(message)}}}};
  return json(j.dump(), status);
}

void http_response::set_cookie(std::string_view name, std::string_view value, std::string_view path, int max_age_s) {
  std::string c = std::string(name) + "=" + std::string(value) + "; Path=" + std::string(path) + "; HttpOnly; SameSite=Lax";
  if (max_age_s >= 0) c += "; Max-Age=" + std::to_string(max_age_s);
  add_header("Set-Cookie", std::move(c));
}

std::string_view status_reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 303: return "See Other";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Content";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return "Unknown";
  }
}

namespace {
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::optional<std::string> percent_decode(std::string_view s, bool plus_as_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%') {
      if (i + 2 >= s.size()) return std::nullopt;  // truncated "%4"
      int hi = hex_value(s[i + 1]), lo = hex_value(s[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(char(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_as_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string url_encode(std::string_view s, bool space_as_plus) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size() * 3 / 2);
  for (unsigned char c : s) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out.push_back(char(c));
    } else if (c == ' ' && space_as_plus) {
      out.push_back('+');
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

bool parse_urlencoded(std::string_view s, param_list& out) {
  while (!s.empty()) {
    size_t amp = s.find('&');
    std::string_view pair = s.substr(0, amp);
    s = amp == std::string_view::npos ? std::string_view() : s.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    auto name = percent_decode(pair.substr(0, eq), true);
    auto value = percent_decode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1), true);
    if (!name || !value) return false;
    out.add(std::move(*name), std::move(*value));
  }
  return true;
}

namespace {
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}
}  // namespace

void parse_cookie_header(std::string_view s, param_list& out) {
  while (!s.empty()) {
    size_t semi = s.find(';');
    std::string_view pair = trim(s.substr(0, semi));
    s = semi == std::string_view::npos ? std::string_view() : s.substr(semi + 1);
    size_t eq = pair.find('=');
    if (pair.empty() || eq == std::string_view::npos || eq == 0) continue;
    std::string_view value = trim(pair.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    out.add(std::string(trim(pair.substr(0, eq))), std::string(value));
  }
}

std::optional<std::string> parse_target(std::string_view target, parsed_target& out) {
  if (target.empty() || target.front() != '/')
    return "the request target must be a path starting with '/' (origin form)";
  size_t qpos = target.find('?');
  std::string_view raw_path = target.substr(0, qpos);
  std::string_view raw_query = qpos == std::string_view::npos ? std::string_view() : target.substr(qpos + 1);
  if (size_t hash = raw_query.find('#'); hash != std::string_view::npos) raw_query = raw_query.substr(0, hash);
  if (size_t hash = raw_path.find('#'); hash != std::string_view::npos) raw_path = raw_path.substr(0, hash);

  std::string path;
  for (std::string_view raw_seg : split_path(raw_path)) {
    auto seg = percent_decode(raw_seg, false);
    if (!seg) return "malformed percent-escape in the path";
    if (*seg == "." || *seg == "..") return "'.' and '..' path segments are not allowed";
    for (unsigned char c : *seg)
      if (c == '/' || c == '\\' || c < 0x20 || c == 0x7f)
        return "encoded '/', '\\' or control characters are not allowed in the path";
    path += '/';
    path += *seg;
  }
  if (path.empty() || (raw_path.size() > 1 && raw_path.back() == '/')) path += '/';
  out.path = std::move(path);
  if (!parse_urlencoded(raw_query, out.query)) return "malformed percent-escape in the query string";
  return std::nullopt;
}

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> segs;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) segs.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return segs;
}

}  // namespace kvarena::sites

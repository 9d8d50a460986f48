// ax-print.cpp: VWA-format lines, the line layout used as a viewport, StaticText dedup.
#include "ax-print.h"

#include <cstdio>
#include <deque>

namespace kvarena {
namespace {

const char* const kIgnoredProperties[] = {"focusable", "editable", "readonly", "level",
                                          "settable", "multiline", "invalid"};

bool ignored_property(const std::string& name) {
  for (const char* p : kIgnoredProperties)
    if (name == p) return true;
  return false;
}

// Decodes one UTF-8 code point at s[i]; invalid bytes come back as themselves (>= 0x80
// and flagged with *bad so the caller escapes them).
unsigned next_code_point(std::string_view s, size_t* i, bool* bad) {
  unsigned char c = static_cast<unsigned char>(s[*i]);
  *bad = false;
  int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (len == 0 || *i + len > s.size()) {
    *bad = true;
    ++*i;
    return c;
  }
  unsigned cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
  for (int k = 1; k < len; ++k) {
    unsigned char cc = static_cast<unsigned char>(s[*i + k]);
    if ((cc & 0xC0) != 0x80) {
      *bad = true;
      ++*i;
      return c;
    }
    cp = (cp << 6) | (cc & 0x3F);
  }
  *i += len;
  return cp;
}

// Code points Python's str.isprintable() rejects that pages actually contain.
bool python_unprintable(unsigned cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0xA0) || cp == 0xAD || (cp >= 0x200B && cp <= 0x200F) ||
         cp == 0x2028 || cp == 0x2029 || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2060 && cp <= 0x2064) || cp == 0xFEFF || (cp >= 0xD800 && cp <= 0xDFFF);
}

const std::vector<std::string>& dropped_when_nameless() {
  static const std::vector<std::string> roles = {"generic", "img", "list", "strong", "paragraph",
                                                 "banner", "navigation", "Section", "LabelText",
                                                 "Legend", "listitem"};
  return roles;
}

void layout(const ax_node& n, int depth, int* next_line, std::vector<ax_line>* out) {
  bool printed = ax_node_is_printed(n);
  size_t slot = out->size();
  if (printed) out->push_back({&n, depth, (*next_line)++, 0});
  for (const ax_node& c : n.children) layout(c, printed ? depth + 1 : depth, next_line, out);
  if (printed) (*out)[slot].last_line = *next_line - 1;
}

}  // namespace

std::string py_repr(std::string_view s) {
  bool has_single = s.find('\'') != std::string_view::npos;
  bool has_double = s.find('"') != std::string_view::npos;
  char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (size_t i = 0; i < s.size();) {
    size_t start = i;
    bool bad = false;
    unsigned cp = next_code_point(s, &i, &bad);
    char buf[16];
    if (bad) {
      std::snprintf(buf, sizeof buf, "\\x%02x", cp);  // Python would show U+FFFD; keep bytes visible
      out += buf;
    } else if (cp == '\\') {
      out += "\\\\";
    } else if (cp == static_cast<unsigned>(quote)) {
      out += '\\';
      out += quote;
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (python_unprintable(cp)) {
      if (cp <= 0xFF) std::snprintf(buf, sizeof buf, "\\x%02x", cp);
      else std::snprintf(buf, sizeof buf, "\\u%04x", cp);
      out += buf;
    } else {
      out.append(s.substr(start, i - start));
    }
  }
  out += quote;
  return out;
}

bool ax_node_is_printed(const ax_node& n) {
  if (n.name.find_first_not_of(' ') != std::string::npos) return true;
  bool has_props = false;
  for (const ax_property& p : n.props)
    if (!ignored_property(p.name)) has_props = true;
  if (n.role == "listitem") return false;
  if (has_props) return true;
  for (const std::string& r : dropped_when_nameless())
    if (n.role == r) return false;
  return true;
}

std::string ax_node_line(const ax_node& n) {
  std::string line(1, '[');  // appends only: GCC 12 warns falsely on "[" + std::string
  line.append(std::to_string(n.id)).append("] ").append(n.role).append(" ").append(py_repr(n.name));
  for (const ax_property& p : n.props)
    if (!ignored_property(p.name)) line.append(" ").append(p.name).append(": ").append(p.value);
  return line;
}

std::vector<ax_line> ax_layout(const ax_node& root) {
  std::vector<ax_line> out;
  int next_line = 0;
  layout(root, 0, &next_line, &out);
  return out;
}

ax_rendering render_ax_lines(const ax_node& root, const std::function<bool(const ax_line&)>& in_view) {
  ax_rendering r;
  std::deque<std::string> recent;  // the last 3 kept lines
  for (const ax_line& l : ax_layout(root)) {
    if (!in_view(l)) continue;
    r.ids_in_view.push_back(l.node->id);
    std::string text = std::string(l.depth, '\t') + ax_node_line(*l.node);
    if (l.node->role == "StaticText") {
      std::string body = py_repr(l.node->name);
      body = body.substr(1, body.size() - 2);
      bool repeat = false;
      for (const std::string& prev : recent)
        if (prev.find(body) != std::string::npos) repeat = true;
      if (repeat) continue;
    }
    if (!r.text.empty()) r.text += '\n';
    r.text += text;
    recent.push_back(std::move(text));
    if (recent.size() > 3) recent.pop_front();
  }
  return r;
}

ax_rendering render_ax_tree(const ax_node& root, int top_line, int height_lines) {
  const int bottom = top_line + height_lines;  // exclusive
  int total = 0;
  ax_rendering r = render_ax_lines(root, [&](const ax_line& l) {
    ++total;
    return l.last_line >= top_line && l.line < bottom;
  });
  r.total_lines = total;
  r.top_line = top_line;
  return r;
}

}  // namespace kvarena

// jinja-lexer.cpp: see jinja-lexer.h. Mirrors jinja2/lexer.py's rules (root state: text up
// to the next tag; tag states: whitespace, float, integer, name, string, operator; the end of
// a tag counts only when brackets are balanced).
#include "jinja-lexer.h"

#include <cctype>

#include "jinja-value.h"

namespace kvarena::jinja {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string normalize_newlines(std::string_view src) {
  std::string out;
  out.reserve(src.size());
  for (size_t p = 0; p < src.size(); ++p) {
    if (src[p] == '\r') {
      out += '\n';
      if (p + 1 < src.size() && src[p + 1] == '\n') ++p;
    } else {
      out += src[p];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();  // keep_trailing_newline=False
  return out;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) out += static_cast<char>(cp);
  else if (cp < 0x800) { out += static_cast<char>(0xC0 | (cp >> 6)); out += static_cast<char>(0x80 | (cp & 0x3F)); }
  else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12)); out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18)); out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)); out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class lexer {
 public:
  lexer(std::string src, const lex_options& o) : src_(std::move(src)), o_(o) {}

  std::vector<token> run() {
    size_t pos = 0;
    bool line_starting = true;
    while (pos < src_.size()) {
      size_t tag = find_tag(pos);
      if (tag == std::string::npos) {
        emit_text(src_.substr(pos));
        break;
      }
      std::string text = src_.substr(pos, tag - pos);
      const char kind = src_[tag + 1];  // '{', '%' or '#'
      const char sign = tag + 2 < src_.size() ? src_[tag + 2] : '\0';
      if (sign == '-') {
        size_t e = text.size();
        while (e > 0 && is_space(text[e - 1])) --e;
        text.resize(e);
      } else if (sign != '+' && o_.lstrip_blocks && kind != '{') {
        const size_t nl = text.rfind('\n');
        const size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
        if ((l_pos > 0 || line_starting) && l_pos < text.size()) {
          bool ws = true;
          for (size_t p = l_pos; p < text.size(); ++p) ws = ws && is_space(text[p]);
          if (ws) text.resize(l_pos);
        }
      }
      line_ += count_newlines(src_.substr(pos, tag - pos));
      emit_text(text);
      pos = tag + 2 + ((sign == '-' || sign == '+') ? 1 : 0);
      if (kind == '#') pos = skip_comment(pos);
      else pos = lex_tag(pos, kind == '%');
      line_starting = pos > 0 && src_[pos - 1] == '\n';
    }
    out_.push_back({tok::eof, "", 0, 0, line_});
    return std::move(out_);
  }

 private:
  static int count_newlines(const std::string& s) {
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
  }

  size_t find_tag(size_t pos) const {
    for (size_t p = src_.find('{', pos); p != std::string::npos; p = src_.find('{', p + 1)) {
      if (p + 1 < src_.size() && (src_[p + 1] == '{' || src_[p + 1] == '%' || src_[p + 1] == '#')) return p;
    }
    return std::string::npos;
  }

  void emit_text(const std::string& t) {
    if (!t.empty()) out_.push_back({tok::text, t, 0, 0, line_});
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw error("chat template line " + std::to_string(line_) + ": " + what);
  }

  // After "#}": "-#}" strips following whitespace, trim_blocks one newline.
  size_t skip_comment(size_t pos) {
    const size_t end = src_.find("#}", pos);
    if (end == std::string::npos) fail("unterminated comment");
    line_ += count_newlines(src_.substr(pos, end - pos));
    const char before = end > pos ? src_[end - 1] : '\0';
    return after_end(end + 2, before == '-', before == '+', true);
  }

  size_t after_end(size_t pos, bool strip, bool keep, bool block) {
    if (strip) {
      while (pos < src_.size() && is_space(src_[pos])) { line_ += src_[pos] == '\n'; ++pos; }
    } else if (block && !keep && o_.trim_blocks && pos < src_.size() && src_[pos] == '\n') {
      ++line_;
      ++pos;
    }
    return pos;
  }

  size_t lex_tag(size_t pos, bool block) {
    out_.push_back({block ? tok::block_begin : tok::var_begin, "", 0, 0, line_});
    int depth = 0;
    const char close = block ? '%' : '}';
    while (true) {
      if (pos >= src_.size()) fail(block ? "unterminated {% tag" : "unterminated {{ tag");
      const char c = src_[pos];
      if (depth == 0) {
        if (c == close && pos + 1 < src_.size() && src_[pos + 1] == '}') {
          out_.push_back({block ? tok::block_end : tok::var_end, "", 0, 0, line_});
          return after_end(pos + 2, false, false, block);
        }
        if ((c == '-' || (c == '+' && block)) && pos + 2 < src_.size() && src_[pos + 1] == close &&
            src_[pos + 2] == '}') {
          out_.push_back({block ? tok::block_end : tok::var_end, "", 0, 0, line_});
          return after_end(pos + 3, c == '-', c == '+', block);
        }
      }
      if (is_space(c)) { line_ += c == '\n'; ++pos; continue; }
      if (std::isdigit(static_cast<unsigned char>(c))) { pos = lex_number(pos); continue; }
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t e = pos;
        while (e < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[e])) || src_[e] == '_')) ++e;
        out_.push_back({tok::name, src_.substr(pos, e - pos), 0, 0, line_});
        pos = e;
        continue;
      }
      if (c == '\'' || c == '"') { pos = lex_string(pos); continue; }
      static const char* ops[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "/", "*", "%", "~", "<", ">", "=",
                                  ".", ",", ":", "|", "(", ")", "[", "]", "{", "}"};
      bool found = false;
      for (const char* op : ops) {
        const std::string_view sv(op);
        if (src_.compare(pos, sv.size(), sv) == 0) {
          if (sv == "(" || sv == "[" || sv == "{") ++depth;
          if ((sv == ")" || sv == "]" || sv == "}") && depth > 0) --depth;
          out_.push_back({tok::op, std::string(sv), 0, 0, line_});
          pos += sv.size();
          found = true;
          break;
        }
      }
      if (!found) fail(std::string("unexpected character '") + c + "'");
    }
  }

  size_t lex_number(size_t pos) {
    size_t e = pos;
    auto digits = [&] {
      while (e < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[e])) || src_[e] == '_')) ++e;
    };
    digits();
    bool is_float = false;
    if (e + 1 < src_.size() && src_[e] == '.' && std::isdigit(static_cast<unsigned char>(src_[e + 1]))) {
      is_float = true;
      ++e;
      digits();
    }
    if (e < src_.size() && (src_[e] == 'e' || src_[e] == 'E')) {
      size_t x = e + 1;
      if (x < src_.size() && (src_[x] == '+' || src_[x] == '-')) ++x;
      if (x < src_.size() && std::isdigit(static_cast<unsigned char>(src_[x]))) {
        is_float = true;
        e = x;
        digits();
      }
    }
    std::string text;
    for (size_t p = pos; p < e; ++p)
      if (src_[p] != '_') text += src_[p];
    token t{is_float ? tok::floating : tok::integer, text, 0, 0, line_};
    if (is_float) t.f = std::stod(text);
    else t.i = std::stoll(text);
    out_.push_back(t);
    return e;
  }

  // Python's unicode-escape decoding of the literal's body.
  size_t lex_string(size_t pos) {
    const char q = src_[pos];
    std::string v;
    size_t p = pos + 1;
    while (true) {
      if (p >= src_.size()) fail("unterminated string");
      const char c = src_[p];
      if (c == q) break;
      if (c == '\n') ++line_;
      if (c != '\\') { v += c; ++p; continue; }
      if (p + 1 >= src_.size()) fail("unterminated string");
      const char n = src_[p + 1];
      p += 2;
      switch (n) {
        case 'n': v += '\n'; break;
        case 't': v += '\t'; break;
        case 'r': v += '\r'; break;
        case '\\': v += '\\'; break;
        case '\'': v += '\''; break;
        case '"': v += '"'; break;
        case 'a': v += '\a'; break;
        case 'b': v += '\b'; break;
        case 'f': v += '\f'; break;
        case 'v': v += '\v'; break;
        case '0': v += '\0'; break;
        case '\n': break;
        case 'x': case 'u': case 'U': {
          const size_t len = n == 'x' ? 2 : n == 'u' ? 4 : 8;
          if (p + len > src_.size()) fail("bad \\" + std::string(1, n) + " escape in a string");
          append_utf8(v, static_cast<uint32_t>(std::stoul(src_.substr(p, len), nullptr, 16)));
          p += len;
          break;
        }
        default: v += '\\'; v += n; break;
      }
    }
    out_.push_back({tok::string, v, 0, 0, line_});
    return p + 1;
  }

  std::string src_;
  lex_options o_;
  std::vector<token> out_;
  int line_ = 1;
};

}  // namespace

std::vector<token> lex(std::string_view source, const lex_options& o) {
  return lexer(normalize_newlines(source), o).run();
}

}  // namespace kvarena::jinja

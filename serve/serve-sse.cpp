// serve-sse.cpp: see serve-sse.h.
#include "serve-sse.h"

#include <string>

namespace kvarena::serve {

void sse_writer::begin() {
  sites::http_response head;
  head.status = 200;
  head.content_type = "text/event-stream";
  head.add_header("X-Accel-Buffering", "no");  // a proxy in front must not buffer the events
  stream_->begin(std::move(head));
}

void sse_writer::event(std::string_view json) {
  std::string e;
  e.reserve(json.size() + 8);
  e += "data: ";
  e += json;  // JSON from serve-response.cpp: one line (no raw newlines)
  e += "\n\n";
  stream_->write(std::move(e));
}

void sse_writer::done() {
  stream_->write("data: [DONE]\n\n");
  stream_->finish();
}

}  // namespace kvarena::serve

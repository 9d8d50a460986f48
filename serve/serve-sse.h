// serve-sse.h: Server-Sent Events on a response that streams (sites/http-stream.h), as
// OpenAI's streaming API sends them: a 200 head with Content-Type text/event-stream, then
// one "data: <json>\n\n" per chunk, and "data: [DONE]\n\n" at the end.
#pragma once
#include <memory>
#include <string_view>

#include "sites/http-stream.h"

namespace kvarena::serve {

class sse_writer {
 public:
  explicit sse_writer(std::shared_ptr<sites::http_body_stream> s) : stream_(std::move(s)) {}
  void begin();                       // the head (sent at once, before the first token)
  void event(std::string_view json);  // one "data:" event
  void done();                        // "data: [DONE]" and the end of the body
  bool cancelled() const { return stream_->cancelled(); }

 private:
  std::shared_ptr<sites::http_body_stream> stream_;
};

}  // namespace kvarena::serve

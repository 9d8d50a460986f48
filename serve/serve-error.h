// serve-error.h: an error a client of `kvarena serve` caused or must know about, with the
// HTTP status and OpenAI's error shape: {"error": {"message", "type", "param", "code"}}
// (serve-response.h writes it). type: "invalid_request_error" for 4xx, "server_error" for
// 5xx, or as given (e.g. "authentication_error").
#pragma once
#include <stdexcept>
#include <string>

namespace kvarena::serve {

class serve_error : public std::runtime_error {
 public:
  serve_error(int status, const std::string& message, std::string param = "", std::string type = "")
      : std::runtime_error(message), status_(status), param_(std::move(param)), type_(std::move(type)) {
    if (type_.empty()) type_ = status >= 500 ? "server_error" : "invalid_request_error";
  }
  int status() const { return status_; }
  const std::string& param() const { return param_; }  // the offending field ("" none): "kv.tau"
  const std::string& type() const { return type_; }

 private:
  int status_;
  std::string param_, type_;
};

}  // namespace kvarena::serve

// http-server.cpp: the Boost.Beast side of http_server (see http-server.h). The only file
// of the sites that includes Beast/Asio. Follows the Boost 1.74 advanced/async server
// examples: a listener that accepts on a strand per connection, one session class per
// connection with paired do_*/on_* handlers, a deadline on every I/O (tcp_stream
// expires_after). Requests are read header-first so "Expect: 100-continue" is answered and
// oversized bodies are refused before the client sends them. A handler's response with a
// `stream` (http-stream.h) is written when its producer completes it; meanwhile a read on the
// socket watches for the client going away, which cancels the stream.
#include "http-server.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "http-stream.h"

namespace kvarena::sites {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

std::string lowercase(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return out;
}

bool is_parse_error(const beast::error_code& ec) {
  return &ec.category() == &http::make_error_code(http::error::bad_target).category();
}

// Converts Beast's parsed request into the plain struct; an error message when the
// target or the form body is unusable (-> 400).
std::optional<std::string> to_http_request(const http::request<http::string_body>& req, http_request& out) {
  out.method = std::string(req.method_string());
  if (req.method() == http::verb::head) out.method = "GET";
  out.target = std::string(req.target());
  parsed_target pt;
  if (auto err = parse_target(out.target, pt)) return err;
  out.path = std::move(pt.path);
  out.query = std::move(pt.query);
  for (const auto& field : req) {
    auto raw_name = field.name_string();
    std::string name = lowercase(std::string_view(raw_name.data(), raw_name.size()));
    std::string_view value(field.value().data(), field.value().size());
    if (name == "cookie") parse_cookie_header(value, out.cookies);
    auto [it, inserted] = out.headers.try_emplace(name, value);
    if (!inserted) it->second += ", " + std::string(value);
  }
  out.body = req.body();
  std::string content_type = lowercase(out.header("content-type"));
  if (content_type.rfind("application/x-www-form-urlencoded", 0) == 0 && !parse_urlencoded(out.body, out.form))
    return "malformed percent-escape in the form body";
  return std::nullopt;
}

// The connections a server has open; each session holds a count for its lifetime.
struct connection_count {
  std::atomic<size_t> open{0};
};

class http_session : public std::enable_shared_from_this<http_session> {
 public:
  // `count` null: a connection past max_connections, answered 503 and closed.
  http_session(tcp::socket&& socket, const http_server::handler_fn& handler, const http_server_options& opt,
               std::shared_ptr<connection_count> count)
      : stream_(std::move(socket)), handler_(handler), opt_(opt), count_(std::move(count)) {}
  ~http_session() {
    if (count_) --count_->open;
    if (body_stream_) {
      body_stream_->set_waker(nullptr);
      body_stream_->cancel();
    }
  }

  void run() {
    // The socket was accepted on this connection's strand; start there.
    if (!count_)
      return net::dispatch(stream_.get_executor(), beast::bind_front_handler(&http_session::refuse, shared_from_this()));
    net::dispatch(stream_.get_executor(), beast::bind_front_handler(&http_session::do_read, shared_from_this()));
  }

 private:
  void refuse() {
    http_response r = own_error(503, "this server has " + std::to_string(opt_.max_connections) +
                                         " connections open, the most it takes; retry shortly, or reuse a connection");
    r.add_header("Retry-After", "1");
    send(std::move(r), false, false, 11);
  }

  void do_read() {
    parser_.emplace();
    parser_->body_limit(opt_.body_limit_bytes);
    parser_->header_limit(static_cast<std::uint32_t>(opt_.header_limit_bytes));
    stream_.expires_after(opt_.io_timeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            beast::bind_front_handler(&http_session::on_header, shared_from_this()));
  }

  void on_header(beast::error_code ec, std::size_t) {
    if (ec) return on_read_error(ec);
    if (beast::iequals(parser_->get()[http::field::expect], "100-continue")) {
      continue_.version(11);
      continue_.result(http::status::continue_);
      stream_.expires_after(opt_.io_timeout);
      return http::async_write(stream_, continue_,
                               beast::bind_front_handler(&http_session::on_continue, shared_from_this()));
    }
    do_read_body();
  }

  void on_continue(beast::error_code ec, std::size_t) {
    if (ec) return;
    do_read_body();
  }

  void do_read_body() {
    stream_.expires_after(opt_.io_timeout);
    http::async_read(stream_, buffer_, *parser_, beast::bind_front_handler(&http_session::on_read, shared_from_this()));
  }

  void on_read(beast::error_code ec, std::size_t) {
    if (ec) return on_read_error(ec);
    const auto& req = parser_->get();
    http_request request;
    http_response response;
    bool keep_alive = req.keep_alive();
    if (auto err = to_http_request(req, request)) {
      response = own_error(400, *err);
      keep_alive = false;  // a client that sends unusable targets gets no second chance
    } else {
      try {
        response = handler_(request);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "kvarena sites: 500 on %s %s: %s\n", request.method.c_str(), request.target.c_str(), e.what());
        response = own_error(500, std::string("the site failed on this request: ") + e.what());
      } catch (...) {
        std::fprintf(stderr, "kvarena sites: 500 on %s %s: unknown exception\n", request.method.c_str(), request.target.c_str());
        response = own_error(500, "the site failed on this request");
      }
    }
    if (response.stream)
      return start_stream(std::move(response.stream), keep_alive, req.method() == http::verb::head, req.version());
    send(std::move(response), keep_alive, req.method() == http::verb::head, req.version());
  }

  // Expected ends (client closed, deadline) just close; parse errors get a 4xx first.
  void on_read_error(beast::error_code ec) {
    if (ec == http::error::end_of_stream) return do_close();
    if (ec == beast::error::timeout || ec == net::error::operation_aborted) return;  // stream already closed
    if (ec == http::error::body_limit)
      return send(own_error(413, "the request body is larger than " +
                                                std::to_string(opt_.body_limit_bytes) + " bytes"),
                  false, false, 11);
    if (ec == http::error::header_limit)
      return send(own_error(431, "the request headers are larger than " +
                                                std::to_string(opt_.header_limit_bytes) + " bytes"),
                  false, false, 11);
    if (ec == http::error::partial_message) return do_close();  // client gave up mid-request
    if (is_parse_error(ec))
      return send(own_error(400, "malformed HTTP request (" + ec.message() + ")"), false, false, 11);
    // Connection reset and the like: nothing to answer.
  }

  // --- a response completed later by a producer (http-stream.h)

  void start_stream(std::shared_ptr<http_body_stream> s, bool keep_alive, bool head, unsigned version) {
    body_stream_ = std::move(s);
    stream_keep_alive_ = keep_alive && version >= 11;  // HTTP/1.0: the body ends with the connection
    stream_head_req_ = head;
    stream_version_ = version;
    std::weak_ptr<http_session> weak = shared_from_this();
    auto ex = stream_.get_executor();
    body_stream_->set_waker([weak, ex] {
      if (auto self = weak.lock()) net::post(ex, beast::bind_front_handler(&http_session::pump, self));
    });
    do_watch();
    pump();
  }

  // A read while the response waits: the client closing the connection cancels the stream.
  // Bytes it sends (a pipelined request) stay in buffer_ for the next request.
  void do_watch() {
    if (watch_pending_ || closed_ || buffer_.size() >= (64u << 10)) return;
    watch_pending_ = true;
    stream_.expires_never();
    stream_.async_read_some(buffer_.prepare(4096), beast::bind_front_handler(&http_session::on_watch, shared_from_this()));
  }

  void on_watch(beast::error_code ec, std::size_t n) {
    watch_pending_ = false;
    if (!ec) buffer_.commit(n);
    if (after_watch_) {
      auto next = std::move(after_watch_);
      after_watch_ = nullptr;
      return next();
    }
    if (ec) return fail_stream();  // end of stream, reset: the client is gone
    if (body_stream_) do_watch();
  }

  // Runs next once no watch read is pending (cancelling it), so reads never overlap.
  void then_without_watch(std::function<void()> next) {
    if (!watch_pending_) return next();
    after_watch_ = std::move(next);
    beast::error_code ec;
    stream_.socket().cancel(ec);
  }

  void pump() {
    if (!body_stream_ || writing_ || closed_) return;
    http_body_stream::batch b = body_stream_->take();
    if (b.head && !b.streamed) {  // the whole response at once
      drop_stream();
      auto self = shared_from_this();
      return then_without_watch([self, r = std::move(*b.head), this] {
        send(r, stream_keep_alive_, stream_head_req_, stream_version_);
      });
    }
    if (b.head) {
      head_res_ = {};
      head_res_.version(stream_version_);
      head_res_.result(static_cast<unsigned>(b.head->status));
      head_res_.set(http::field::server, "kvarena-sites");
      head_res_.set(http::field::content_type, b.head->content_type);
      head_res_.set(http::field::cache_control, "no-store");
      for (auto& [name, value] : b.head->headers) head_res_.insert(name, value);
      head_res_.keep_alive(stream_keep_alive_);
      chunked_ = stream_version_ >= 11;
      if (chunked_) head_res_.chunked(true);
      head_sr_.emplace(head_res_);
      out_ = std::move(b.data);
      out_done_ = b.done;
      writing_ = true;
      stream_.expires_after(opt_.io_timeout);
      return http::async_write_header(stream_, *head_sr_,
                                      beast::bind_front_handler(&http_session::on_stream_head, shared_from_this()));
    }
    if (!b.data.empty() || b.done) write_stream_data(std::move(b.data), b.done);
  }

  void on_stream_head(beast::error_code ec, std::size_t) {
    writing_ = false;
    if (ec) return fail_stream();
    if (!out_.empty() || out_done_) return write_stream_data(std::move(out_), out_done_);
    pump();
  }

  // Chunked transfer encoding written by hand: "<hex size>\r\n<data>\r\n", and "0\r\n\r\n" at the end.
  void write_stream_data(std::string data, bool done) {
    wire_.clear();
    if (chunked_) {
      if (!data.empty() && !stream_head_req_) {
        char size[24];
        std::snprintf(size, sizeof size, "%zx\r\n", data.size());
        wire_ += size;
        wire_ += data;
        wire_ += "\r\n";
      }
      if (done) wire_ += "0\r\n\r\n";
    } else if (!stream_head_req_) {
      wire_ = std::move(data);
    }
    out_done_ = done;
    if (wire_.empty()) return on_stream_write({}, 0);
    writing_ = true;
    stream_.expires_after(opt_.io_timeout);
    net::async_write(stream_, net::buffer(wire_),
                     beast::bind_front_handler(&http_session::on_stream_write, shared_from_this()));
  }

  void on_stream_write(beast::error_code ec, std::size_t) {
    writing_ = false;
    if (ec) return fail_stream();
    if (!out_done_) return pump();
    drop_stream();
    auto self = shared_from_this();
    if (stream_keep_alive_) return then_without_watch([self] { self->do_read(); });
    then_without_watch([self] { self->do_close(); });
  }

  void drop_stream() {
    if (!body_stream_) return;
    body_stream_->set_waker(nullptr);
    body_stream_.reset();
  }

  // The client is gone (or too slow): cancel the producer, close the socket.
  void fail_stream() {
    closed_ = true;
    if (body_stream_) {
      body_stream_->set_waker(nullptr);
      body_stream_->cancel();
      body_stream_.reset();
    }
    beast::error_code ignored;
    stream_.socket().close(ignored);
  }

  http_response own_error(int status, std::string_view message) const {
    return opt_.json_errors ? http_response::json_error(status, message) : http_response::error(status, message);
  }

  void send(http_response r, bool keep_alive, bool head, unsigned version) {
    res_ = {};
    res_.version(version);
    res_.result(static_cast<unsigned>(r.status));
    res_.set(http::field::server, "kvarena-sites");
    res_.set(http::field::content_type, r.content_type);
    res_.set(http::field::cache_control, "no-store");
    for (auto& [name, value] : r.headers) res_.insert(name, value);
    res_.keep_alive(keep_alive);
    if (r.status == 204 || r.status == 304) r.body.clear();
    if (head) {
      res_.content_length(r.body.size());
    } else {
      res_.body() = std::move(r.body);
      res_.prepare_payload();
    }
    stream_.expires_after(opt_.io_timeout);
    http::async_write(stream_, res_,
                      beast::bind_front_handler(&http_session::on_write, shared_from_this(), res_.need_eof()));
  }

  void on_write(bool close, beast::error_code ec, std::size_t) {
    if (ec) return;
    if (close) return do_close();
    do_read();
  }

  // Graceful close: send FIN, then discard what the client still sends (e.g. the body of a
  // refused upload) for a short while, so it reads our response instead of a reset.
  void do_close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    if (ec) return;
    drain_buf_.resize(16 << 10);
    do_drain();
  }

  void do_drain() {
    stream_.expires_after(std::min<std::chrono::milliseconds>(opt_.io_timeout, std::chrono::milliseconds(2000)));
    stream_.async_read_some(net::buffer(drain_buf_),
                            beast::bind_front_handler(&http_session::on_drain, shared_from_this()));
  }

  void on_drain(beast::error_code ec, std::size_t n) {
    drained_bytes_ += n;
    if (ec || drained_bytes_ > (8u << 20)) {
      beast::error_code ignored;
      stream_.socket().close(ignored);
      return;
    }
    do_drain();
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;  // fresh per request
  http::response<http::string_body> res_;
  http::response<http::empty_body> continue_;
  std::vector<char> drain_buf_;
  size_t drained_bytes_ = 0;
  // A streamed or deferred response (start_stream .. on_stream_write).
  std::shared_ptr<http_body_stream> body_stream_;
  bool stream_keep_alive_ = false, stream_head_req_ = false, chunked_ = false;
  unsigned stream_version_ = 11;
  bool watch_pending_ = false, writing_ = false, closed_ = false, out_done_ = false;
  std::function<void()> after_watch_;  // runs when the cancelled watch read has completed
  http::response<http::empty_body> head_res_;
  std::optional<http::response_serializer<http::empty_body>> head_sr_;
  std::string out_, wire_;  // data after the head; the bytes being written
  const http_server::handler_fn& handler_;
  const http_server_options& opt_;
  std::shared_ptr<connection_count> count_;
};

class http_listener : public std::enable_shared_from_this<http_listener> {
 public:
  http_listener(net::io_context& ioc, const tcp::endpoint& endpoint, const http_server::handler_fn& handler,
                const http_server_options& opt)
      : ioc_(ioc), acceptor_(net::make_strand(ioc)), retry_timer_(acceptor_.get_executor()), handler_(handler), opt_(opt) {
    beast::error_code ec;
    auto fail = [&](const char* what) {
      throw std::runtime_error(std::string("cannot ") + what + " " + endpoint.address().to_string() + ":" +
                               std::to_string(endpoint.port()) + ": " + ec.message() +
                               (ec == net::error::address_in_use ? " (choose another --port, or 0 for a free one)" : ""));
    };
    acceptor_.open(endpoint.protocol(), ec);
    if (ec) fail("open a socket for");
    acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (ec) fail("set SO_REUSEADDR on");
    acceptor_.bind(endpoint, ec);
    if (ec) fail("bind");
    acceptor_.listen(net::socket_base::max_listen_connections, ec);
    if (ec) fail("listen on");
  }

  uint16_t port() const { return acceptor_.local_endpoint().port(); }
  size_t connections() const { return count_->open.load(); }

  void run() { do_accept(); }

 private:
  void do_accept() {
    acceptor_.async_accept(net::make_strand(ioc_),
                           beast::bind_front_handler(&http_listener::on_accept, shared_from_this()));
  }

  void on_accept(beast::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted) return;
    if (!ec) {
      std::shared_ptr<connection_count> slot = count_;
      if (opt_.max_connections && count_->open.fetch_add(1) >= opt_.max_connections) {
        --count_->open;
        slot = nullptr;  // over the limit: 503
      }
      std::make_shared<http_session>(std::move(socket), handler_, opt_, std::move(slot))->run();
      return do_accept();
    }
    // Out of file descriptors and the like: retry shortly instead of spinning.
    std::fprintf(stderr, "kvarena sites: accept failed: %s (retrying in 100 ms)\n", ec.message().c_str());
    retry_timer_.expires_after(std::chrono::milliseconds(100));
    retry_timer_.async_wait([self = shared_from_this()](beast::error_code wait_ec) {
      if (!wait_ec) self->do_accept();
    });
  }

  net::io_context& ioc_;
  tcp::acceptor acceptor_;
  net::steady_timer retry_timer_;
  const http_server::handler_fn& handler_;
  const http_server_options& opt_;
  std::shared_ptr<connection_count> count_ = std::make_shared<connection_count>();
};

}  // namespace

struct http_server::impl {
  http_server_options opt;
  handler_fn handler;
  std::unique_ptr<net::io_context> ioc;
  std::shared_ptr<http_listener> listener;
  std::vector<std::thread> threads;
  uint16_t port = 0;
};

http_server::http_server(http_server_options opt, handler_fn handler) : impl_(std::make_unique<impl>()) {
  if (opt.threads < 1) opt.threads = 1;
  impl_->opt = std::move(opt);
  impl_->handler = std::move(handler);
}

http_server::~http_server() { stop(); }

void http_server::start() {
  if (running()) throw std::runtime_error("http_server::start: already running on port " + std::to_string(impl_->port));
  std::string host = impl_->opt.host == "localhost" ? "127.0.0.1" : impl_->opt.host;
  beast::error_code ec;
  auto address = net::ip::make_address(host, ec);
  if (ec) throw std::runtime_error("invalid host '" + impl_->opt.host + "' (use an IP address such as 127.0.0.1 or 0.0.0.0)");
  impl_->ioc = std::make_unique<net::io_context>(impl_->opt.threads);
  impl_->listener = std::make_shared<http_listener>(*impl_->ioc, tcp::endpoint(address, impl_->opt.port),
                                                    impl_->handler, impl_->opt);
  impl_->port = impl_->listener->port();
  impl_->listener->run();
  for (int i = 0; i < impl_->opt.threads; ++i) impl_->threads.emplace_back([ioc = impl_->ioc.get()] { ioc->run(); });
}

void http_server::stop() {
  if (!impl_->ioc) return;
  impl_->ioc->stop();
  for (auto& t : impl_->threads) t.join();
  impl_->threads.clear();
  impl_->listener.reset();
  impl_->ioc.reset();  // destroys pending handlers, and with them the sessions and sockets
}

bool http_server::running() const { return impl_->ioc != nullptr; }

uint16_t http_server::port() const { return impl_->port; }
size_t http_server::connections() const { return impl_->listener ? impl_->listener->connections() : 0; }

std::string http_server::base_url() const {
  std::string host = impl_->opt.host;
  if (host == "0.0.0.0" || host == "localhost" || host == "::") host = "127.0.0.1";
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return "http://" + host + ":" + std::to_string(impl_->port);
}

}  // namespace kvarena::sites

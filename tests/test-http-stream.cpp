// test-http-stream.cpp: responses completed later by another thread (envs/sites/http-stream.h)
// through the real http_server on a loopback port, read with a plain socket so the bytes on
// the wire are checked against HTTP/1.1 itself: a deferred response with Content-Length, a
// streamed one in chunked transfer encoding ("<hex size>\r\n<data>\r\n" ... "0\r\n\r\n"),
// keep-alive after both, and a client that closes its connection cancelling the stream.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "sites/http-server.h"
#include "sites/http-stream.h"

namespace kvarena::sites {
namespace {

int connect_to(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  timeval tv{10, 0};  // a hung server fails the test instead of blocking it
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

// Reads until `end` has arrived (or the peer closes / the read times out).
std::string read_until(int fd, const std::string& end) {
  std::string got;
  char buf[4096];
  while (got.find(end) == std::string::npos) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    got.append(buf, size_t(n));
  }
  return got;
}

void send_all(int fd, const std::string& s) { ASSERT_EQ(::send(fd, s.data(), s.size(), 0), ssize_t(s.size())); }

// A server whose "/defer" and "/stream" responses a thread completes after the handler returned.
struct fixture {
  std::atomic<bool> cancelled{false};
  std::vector<std::thread> producers;
  std::unique_ptr<http_server> server;

  fixture() {
    server = std::make_unique<http_server>(http_server_options{}, [this](const http_request& req) {
      auto s = std::make_shared<http_body_stream>();
      s->on_cancel([this] { cancelled = true; });
      if (req.path == "/defer") {
        producers.emplace_back([s] {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          s->respond(http_response::json("{\"late\":true}", 201));
        });
      } else if (req.path == "/stream") {
        producers.emplace_back([s] {
          s->begin(http_response::text("first"));
          s->write("hello");
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          s->write(std::string(300, 'x'));
          s->finish();
        });
      } else if (req.path == "/silent") {  // writes nothing until cancelled: only the read watch sees the client leave
        producers.emplace_back([s] {
          for (int i = 0; i < 4000 && !s->cancelled(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
          s->respond(http_response::text("too late"));
        });
      } else if (req.path == "/forever") {  // never completes unless cancelled
        producers.emplace_back([s] {
          s->begin(http_response::text(""));
          for (int i = 0; i < 20000 && !s->cancelled(); ++i) {
            s->write("tick\n");
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          }
        });
      } else {
        return http_response::text("plain");
      }
      http_response r;
      r.stream = s;
      return r;
    });
    server->start();
  }
  ~fixture() {
    for (auto& t : producers) t.join();
    server->stop();
  }
};

TEST(HttpStream, DeferredResponseHasContentLengthAndKeepsTheConnection) {
  fixture f;
  const int fd = connect_to(f.server->port());
  ASSERT_GE(fd, 0);
  send_all(fd, "GET /defer HTTP/1.1\r\nHost: t\r\n\r\n");
  const std::string r = read_until(fd, "{\"late\":true}");
  EXPECT_EQ(r.rfind("HTTP/1.1 201", 0), 0u) << r;
  EXPECT_NE(r.find("Content-Length: 13\r\n"), std::string::npos) << r;
  send_all(fd, "GET /plain HTTP/1.1\r\nHost: t\r\n\r\n");  // the same connection goes on
  EXPECT_NE(read_until(fd, "plain").find("HTTP/1.1 200"), std::string::npos);
  ::close(fd);
}

TEST(HttpStream, StreamedResponseIsChunked) {
  fixture f;
  const int fd = connect_to(f.server->port());
  ASSERT_GE(fd, 0);
  send_all(fd, "GET /stream HTTP/1.1\r\nHost: t\r\n\r\n");
  const std::string r = read_until(fd, "\r\n0\r\n\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.1 200", 0), 0u) << r;
  EXPECT_NE(r.find("Transfer-Encoding: chunked\r\n"), std::string::npos) << r;
  EXPECT_EQ(r.find("Content-Length"), std::string::npos) << r;
  // Decode the chunks by the grammar: each size line in hex must match its data; a last
  // chunk of size 0 ends the body. How the writes were grouped into chunks is timing.
  std::string body = r.substr(r.find("\r\n\r\n") + 4), data;
  int chunks = 0;
  bool last = false;
  while (!last) {
    const size_t eol = body.find("\r\n");
    ASSERT_NE(eol, std::string::npos) << body;
    const size_t n = std::stoul(body.substr(0, eol), nullptr, 16);
    ASSERT_GE(body.size(), eol + 2 + n + 2) << body;
    EXPECT_EQ(body.substr(eol + 2 + n, 2), "\r\n");
    data += body.substr(eol + 2, n);
    body = body.substr(eol + 2 + n + 2);
    last = n == 0;
    ++chunks;
  }
  EXPECT_EQ(data, "firsthello" + std::string(300, 'x'));
  EXPECT_GE(chunks, 2);
  EXPECT_EQ(body, "");
  send_all(fd, "GET /plain HTTP/1.1\r\nHost: t\r\n\r\n");  // keep-alive after the last chunk
  EXPECT_NE(read_until(fd, "plain").find("HTTP/1.1 200"), std::string::npos);
  ::close(fd);
}

TEST(HttpStream, AClientThatLeavesCancelsTheStream) {
  fixture f;
  const int fd = connect_to(f.server->port());
  ASSERT_GE(fd, 0);
  send_all(fd, "GET /forever HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_NE(read_until(fd, "tick").find("tick"), std::string::npos);
  ::close(fd);
  for (int i = 0; i < 2000 && !f.cancelled; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(f.cancelled);  // the producer stops long before its 20000 ticks
}

TEST(HttpStream, AClientThatLeavesWhileNothingIsWrittenCancels) {
  fixture f;
  const int fd = connect_to(f.server->port());
  ASSERT_GE(fd, 0);
  send_all(fd, "POST /silent HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the request is in the handler's hands
  ::close(fd);
  for (int i = 0; i < 2000 && !f.cancelled; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(f.cancelled);
}

}  // namespace
}  // namespace kvarena::sites

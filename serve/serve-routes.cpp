// serve-routes.cpp: the routes, the request -> job step and the answers (serve-routes.h).
#include "serve-routes.h"

#include <atomic>
#include <cstdio>
#include <ctime>
#include <memory>
#include <stdexcept>

#include "serve-error.h"
#include "serve-kv.h"
#include "serve-request.h"
#include "serve-response.h"
#include "serve-sse.h"
#include "serve-stream-text.h"
#include "sites/http-bearer.h"
#include "sites/http-stream.h"

namespace kvarena::serve {
namespace {

using sites::http_request;
using sites::http_response;

http_response error_response(const serve_error& e) {
  http_response r = http_response::json(error_body(e), e.status());
  if (e.status() == 401) r.add_header("WWW-Authenticate", "Bearer");
  if (e.status() == 503) r.add_header("Retry-After", "1");
  return r;
}

std::string answer_id(bool chat) {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t start = uint64_t(std::time(nullptr));
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s-%08llx%08llx", chat ? "chatcmpl" : "cmpl", (unsigned long long)(start & 0xffffffffu),
                (unsigned long long)counter.fetch_add(1));
  return buf;
}

// One request's answer as the worker produces it: the deferred response, or the event
// stream (its head and role chunk sent with the first token).
struct answer {
  answer_head head;
  kv_policy_spec kv;
  bool stream = false, include_usage = false;
  std::shared_ptr<sites::http_body_stream> body = std::make_shared<sites::http_body_stream>();
  sse_writer sse{body};
  stream_text_gate gate;
  bool begun = false;

  answer(std::vector<std::string> stops) : gate(stops) {}

  void begin() {
    if (begun) return;
    begun = true;
    sse.begin();
    sse.event(chunk_body(head, "", head.kind == request_kind::chat, ""));
  }
  void on_token(const generate_result& r) {
    if (!stream) return;
    begin();
    const std::string_view piece = gate.next(r.text);
    if (!piece.empty()) sse.event(chunk_body(head, piece, false, ""));
  }
  void on_done(const serve_outcome& o) {
    if (o.error_status > 0) {
      const serve_error e(o.error_status, o.error);
      if (!begun) return body->respond(error_response(e));
      sse.event(error_body(e));  // the stream had started: the error as an event
      return sse.done();
    }
    if (!stream) return body->respond(http_response::json(completion_body(head, o, kv)));
    begin();
    const std::string_view rest = gate.rest(o.result.text);
    if (!rest.empty()) sse.event(chunk_body(head, rest, false, ""));
    sse.event(chunk_body(head, "", false, o.finish));
    if (include_usage) sse.event(usage_chunk_body(head, o, kv));
    sse.done();
  }
};

}  // namespace

serve_routes::serve_routes(const model& m, const tokenizer& tok, serve_scheduler& sched, routes_config cfg)
    : model_(m), tok_(tok), sched_(sched), cfg_(std::move(cfg)), chat_(chat_template::for_model(m)),
      created_(int64_t(std::time(nullptr))) {
  auto chat = [this](const http_request& r) { return generate(r, true); };
  auto completion = [this](const http_request& r) { return generate(r, false); };
  auto models = [this](const http_request&) { return http_response::json(models_body(cfg_.model_id, created_)); };
  auto health = [this](const http_request&) {
    return http_response::json(health_body(cfg_.model_id, sched_.options().parallel, sched_.active(), sched_.queued(),
                                           sched_.options().queue, sched_.served(), sched_.cancelled()));
  };
  for (const std::string prefix : {"/v1", ""}) {
    routes_.add("POST", prefix + "/chat/completions", chat);
    routes_.add("POST", prefix + "/completions", completion);
    routes_.add("GET", prefix + "/models", models);
    routes_.add("GET", prefix + "/health", health);
  }
}

http_response serve_routes::handle(const http_request& req) {
  try {
    const auto match = routes_.find(req.method, req.path);
    if (match.kind == decltype(match)::not_found)
      throw serve_error(404, "no route " + req.method + " " + req.path +
                                 " (this server has POST /v1/chat/completions, POST /v1/completions, GET /v1/models, "
                                 "GET /health)");
    if (match.kind == decltype(match)::method_not_allowed) {
      http_response r = error_response(serve_error(405, req.path + " accepts " + match.allow + " only"));
      r.add_header("Allow", match.allow);
      return r;
    }
    const bool health = req.path == "/health" || req.path == "/v1/health";
    if (!cfg_.token.empty() && !health && !sites::bearer_token_matches(req.header("authorization"), cfg_.token))
      throw serve_error(401,
                        req.header("authorization").empty()
                            ? "this server needs a token: send \"Authorization: Bearer <token>\" (OpenAI clients: "
                              "api_key / OPENAI_API_KEY = the --token it was started with)"
                            : "the bearer token is wrong: send the --token this server was started with",
                        "", "authentication_error");
    return (*match.handler)(req);
  } catch (const serve_error& e) {
    return error_response(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kvarena serve: 500 on %s %s: %s\n", req.method.c_str(), req.path.c_str(), e.what());
    return error_response(serve_error(500, std::string("internal error of the server (please report): ") + e.what()));
  }
}

http_response serve_routes::generate(const http_request& req, bool chat) {
  const serve_request r = chat ? parse_chat_request(req.body) : parse_completion_request(req.body);

  std::vector<int32_t> prompt;
  if (chat) {
    std::string text;
    try {
      text = chat_.render(r.messages, /*add_generation_prompt=*/true);
    } catch (const std::invalid_argument& e) {
      throw serve_error(400, std::string("messages: ") + e.what(), "messages");
    }
    prompt = tok_.encode(text, /*add_bos=*/true, /*parse_special=*/true);
  } else if (r.prompt_is_tokens) {
    prompt = r.prompt_tokens;
    for (size_t i = 0; i < prompt.size(); ++i)
      if (prompt[i] >= model_.config.n_vocab)
        throw serve_error(400, "prompt[" + std::to_string(i) + "]: token id " + std::to_string(prompt[i]) +
                                   " is out of range (the model has " + std::to_string(model_.config.n_vocab) +
                                   " tokens)", "prompt");
  } else {
    prompt = tok_.encode(r.prompt, /*add_bos=*/true, /*parse_special=*/true);
  }
  if (prompt.empty()) throw serve_error(400, chat ? "messages: the prompt is empty" : "prompt: the prompt is empty",
                                        chat ? "messages" : "prompt");
  const int64_t n_prompt = int64_t(prompt.size());
  if (n_prompt >= cfg_.n_ctx)
    throw serve_error(400, "the prompt has " + std::to_string(n_prompt) + " tokens; this server's context holds " +
                               std::to_string(cfg_.n_ctx) + " (shorten the messages, or start it with a larger --ctx)",
                      chat ? "messages" : "prompt");

  const kv_policy_spec kv = kv_spec_for_request(r.kv, r.has_kv, cfg_.default_kv, model_.config, cfg_.n_ctx);

  auto job = std::make_shared<serve_job>();
  job->prompt = std::move(prompt);
  job->gen.max_tokens = r.max_tokens.value_or(cfg_.n_ctx - n_prompt);
  job->gen.stop = r.stop;
  if (chat && !r.ignore_eos)  // ignore_eos: only max_tokens, a stop given or the context end stop it
    for (const std::string& s : chat_.stop_strings()) job->gen.stop.push_back(s);
  job->gen.stop_at_eos = !r.ignore_eos;
  job->sampling = r.sampling;
  job->kv = kv;
  job->admitted = serve_clock::now();
  job->deadline = job->admitted + cfg_.timeout;

  auto a = std::make_shared<answer>(job->gen.stop);
  a->head = {chat ? request_kind::chat : request_kind::completion, answer_id(chat), int64_t(std::time(nullptr)),
             cfg_.model_id};
  a->kv = kv;
  a->stream = r.stream;
  a->include_usage = r.include_usage;
  job->on_token = [a](const generate_result& g) { a->on_token(g); };
  job->on_done = [a](const serve_outcome& o) { a->on_done(o); };
  std::weak_ptr<serve_job> weak = job;
  a->body->on_cancel([this, weak] {
    if (auto j = weak.lock()) sched_.cancel(j);
  });
  std::shared_ptr<sites::http_body_stream> body = a->body;
  if (!sched_.submit(job))
    throw serve_error(503,
                      "the server is busy: " + std::to_string(sched_.options().parallel) + " requests decoding and " +
                          std::to_string(sched_.options().queue) +
                          " waiting, its --parallel and --queue bounds; retry shortly",
                      "", "server_busy");
  http_response out;
  out.stream = std::move(body);
  return out;
}

}  // namespace kvarena::serve

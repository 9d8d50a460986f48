// agent-model.h: the model side of the agent loop, an extension point. The loop
// (agent-loop.h) builds each step's prompt (conversation.h) and acts on the reply; what
// answers the prompt is an agent_model:
//   - the embedded engine (agent-model-engine.cpp: make_engine_agent_model), the default:
//     the rendered chat text tokenized into one engine session under the item's KV policy;
//   - an OpenAI-compatible endpoint (agent-model-openai.h: `kvarena run --agent-url`): the
//     same conversation as chat messages, the step's Set-of-Marks screenshot as an image.
// A new one is one file implementing these two classes plus the place that picks it
// (runner_config::agent_model, set by cli/cmd-run.cpp).
//
// Per episode: prompt() at each step (it may end the episode: a full context), reply(),
// and collect() once at the end, also after a failure. Figures a model side cannot know
// (an endpoint that reports no KV bytes) are marked not reported (reported_figures) and
// stored as NULL, never 0.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat-template.h"
#include "conversation.h"
#include "episode-result.h"

namespace kvarena {

struct agent_config;
struct model_context;

// What one step asks the model.
struct model_prompt {
  int step = 0;                                    // 0-based
  const prompt_text* text = nullptr;               // the chat rendered with the chat template
  const std::vector<chat_message>* messages = nullptr;  // the same as chat messages, whole
  std::string_view screenshot_png;                 // this step's Set-of-Marks screenshot; "" none
  int64_t obs_tokens = 0;                          // observation tokens in it (for messages)
};

class episode_model {
 public:
  virtual ~episode_model() = default;
  // Takes the step's prompt. nullopt: go on to reply(); else the answer that ends the
  // episode before the model runs (its end_reason set in r: "Context full ..."). Throws
  // when not even the first prompt can run.
  virtual std::optional<std::string> prompt(const model_prompt& p, episode_result& r) = 0;
  // Answers the prompt taken last: rec.output and the model's figures of the step (tokens,
  // stop reason, times, KV, retries). Throws on a model failure.
  virtual void reply(step_record& rec) = 0;
  // The episode's model totals and peaks into r (after the steps, also after a failure).
  virtual void collect(episode_result& r) = 0;
};

// The run's model; shared read-only by the episodes on several threads.
class agent_model {
 public:
  virtual ~agent_model() = default;
  // One episode's model side under mc (the item's KV policy and seed) and cfg.
  virtual std::unique_ptr<episode_model> start_episode(const agent_config& cfg, const model_context& mc) const = 0;
};

// The embedded engine (model_context's llm, tokenizer, session options and sampling).
std::shared_ptr<const agent_model> make_engine_agent_model();

}  // namespace kvarena

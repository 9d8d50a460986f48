// agent-loop.h: one episode of the agent on one task: create an env session, then per
// step: check the early-stop rules, cut the observation to its token budget, build the
// prompt, generate with the engine, extract the action, step the env; at the end evaluate
// and close the env session (always, also when the model or the env throws).
//
// History modes:
//   last (VWA): every step is a new sequence (session.reset()): system + examples + the
//     current step's message, re-prefilled whole.
//   full: ONE engine session for the whole episode. Step 1 prefills system + examples +
//     the first message; each later step appends only what follows the reply already in
//     the cache (the reply's end marker, the new step message, the assistant header), so
//     the KV cache grows over the horizon and the session's KV policy decides what stays.
//     When the next message plus max_new_tokens would pass n_ctx, the episode ends early
//     ("Context full ...") and is evaluated, never a crash. In both modes, when not even
//     the FIRST prompt plus max_new_tokens fits, the episode is status "error" ("step 1
//     prompt: the first prompt (N tokens, ...) + max_new_tokens M does not fit n_ctx C:
//     raise --ctx ... or lower --max-obs-tokens ..."): nothing ran, nothing is evaluated.
//   Which one a run uses: --history, else the mode the model names (kvarena.history: a
//   trained model's, the one its figures were measured in), else full.
//
// Early stop (specs/web-envs.md §3) is checked before each model call with the agent's
// early_stop_config, which is also sent to the env server so both sides agree.
// run_episode never throws for a task's failure: a model or env error comes back as
// status "error" with a message naming the phase (create, step N model/env, evaluate) and
// the steps done so far; the runner records it and goes on.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat-template.h"
#include "client/env-client.h"
#include "episode-result.h"
#include "eval/early-stop.h"
#include "task/task.h"
#include "model.h"
#include "obs-truncate.h"
#include "prompt.h"
#include "sampler.h"
#include "session.h"
#include "tokenizer.h"

namespace kvarena {

enum class history_mode { last, full };
const char* history_mode_name(history_mode m);
// "last" or "full"; std::invalid_argument naming the valid values otherwise.
history_mode parse_history_mode(std::string_view name);
// The GGUF key a trained model names the history mode it was trained and measured in.
inline constexpr const char* k_history_key = "kvarena.history";
// requested when given; else the model's kvarena.history; else full (the project's default: the
// KV cache grows over the episode). std::invalid_argument when the model names neither.
history_mode history_for_model(const model& m, std::optional<history_mode> requested);

struct agent_config {
  history_mode history = history_mode::full;
  early_stop_config early_stop;    // max_steps 30, parse_failures 3, repeated_actions 5 (VWA)
  int64_t max_obs_tokens = k_default_max_obs_tokens;  // observation budget in model tokens; <= 0: no limit
  int64_t max_new_tokens = 256;    // per step
  int n_examples = 2;              // worked examples in the prompt (0..3)
  std::vector<std::string> stop;   // extra stop strings (the template's are always used)
  double max_episode_s = 0;        // episode wall-clock limit, checked before each model call
                                   // (status timeout); 0: none
  int trace_every = 8;             // decode steps between KV trace samples (prefill chunks: all)
  size_t max_trace_points = 4096;
  env_create_options env;          // browser, site URL overrides (early_stop is set from above)
};

class agent_model;

// The model side of an episode; shared read-only by episodes on several threads.
struct model_context {
  // What answers the prompts (agent-model.h); none: the embedded engine on llm.
  std::shared_ptr<const agent_model> agent;
  const model* llm = nullptr;    // the embedded engine's model (none with an endpoint's agent)
  // Cuts observations to max_obs_tokens (the model's tokenizer); none (an endpoint without
  // --model): cut by a byte estimate (truncate_by_estimate).
  const tokenizer* tok = nullptr;
  chat_template chat;         // chat_template::for_model(*llm, name)
  prompt_style style = prompt_style::vwa;  // prompt_style_for_model(*llm, name)
  std::string backend = "cpu";  // make_sequence's backend name
  session_options session;    // KV policy and its options, threads, n_ctx (0: the model's)
  sampler_options sampling;   // seed: one per work item
  // An endpoint's agent: the item's KV policy as kvarena serve's "kv" request object
  // ({"policy": "window", "window": 256, ...}); "" sends none (the server's default).
  std::string endpoint_kv_json;
};

episode_result run_episode(env_client& env, const task& t, const agent_config& cfg, const model_context& mc);

}  // namespace kvarena

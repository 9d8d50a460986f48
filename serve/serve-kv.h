// serve-kv.h: the KV policy a request runs under. Without a "kv" object: the server's
// default (the same flags as `kvarena run`: --policy, the option flags, --kv-budget). With
// one: {"policy": NAME, OPTION: VALUE, ..., "budget": "1024t"} where NAME is a registered
// policy (engine/kv/kv-policy-registry.h) or "none" (the plain F32 cache), and OPTION the
// registry's option names (n-high or n_high); options not given take the registry's
// defaults. Without "policy" the options apply to the server's default policy. "budget"
// as a string is an equal-memory budget ("512t", "8MiB": kv/kv-budget.h, like --kv-budget);
// as a number it is the policy's own "budget" option (freekv's device tokens).
// Every mistake is a serve_error 400 naming the fields: unknown options (all of them, with
// the policy's valid ones), wrong types, values make_kv_policy refuses for this model.
#pragma once
#include <string>
#include <vector>

#include "kv/kv-policy-registry.h"
#include "model.h"
#include "serve-request.h"

namespace kvarena::serve {

// seq_len: the longest sequence the server runs (a budget is spent for it).
kv_policy_spec kv_spec_for_request(const std::vector<kv_field>& fields, bool given, const kv_policy_spec& server_default,
                                   const model_config& c, int64_t seq_len);

// The policy and its effective options as one label: "window:window=64:sinks=0"; "none" for
// the plain cache.
std::string kv_spec_label(const kv_policy_spec& s);

// The server default's checks with the model loaded (make_kv_policy on the real shape);
// throws engine_error.
void check_kv_spec(const kv_policy_spec& s, const model_config& c);

}  // namespace kvarena::serve

// cmd-model.cpp: `kvarena model random ...` writes a random-weight GGUF model of any
// shape (see engine/model/model-random.h); `kvarena model info M` prints a model's config and a
// summary of its tensors. Both print one JSON object on stdout. `kvarena model check M` says
// whether kvarena can run a GGUF file (architecture, tensor types, context, RoPE scaling,
// chat template, tokenizer) without reading its weights: "supported", or one line per reason
// and exit 1.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "chat-template.h"
#include "cli-commands.h"
#include "engine-error.h"
#include "gguf-reader.h"
#include "model-random.h"
#include "model.h"
#include "tokenizer.h"

namespace kvarena::cli {

namespace {

using json = nlohmann::ordered_json;

struct random_args {
  random_model_spec spec;
  std::string arch = "llama";
  std::string type = "f16";
  std::string out;
};

struct info_args {
  std::string path;
  bool tensors = false;
};

struct check_args {
  std::string path;
};

int run_random(random_args a) {
  for (model_arch arch : {model_arch::llama, model_arch::qwen2, model_arch::gpt2}) {
    if (a.arch == model_arch_name(arch)) a.spec.arch = arch;
  }
  const auto type = ggml_type_from_name(a.type);
  if (!type) throw engine_error("model random: unknown --type '" + a.type + "' (f32, f16, bf16, q8_0, q4_0)");
  a.spec.type = *type;
  const auto t0 = std::chrono::steady_clock::now();
  const random_model_summary s = write_random_model(a.spec, a.out);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  json j;
  j["path"] = a.out;
  j["arch"] = a.arch;
  j["n_params"] = s.n_params;
  j["bytes"] = s.file_bytes;
  j["type"] = a.type;
  j["n_tensors"] = s.n_tensors;
  j["seconds"] = std::round(secs * 1000) / 1000;
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

json config_json(const model_config& c) {
  json j;
  j["arch"] = model_arch_name(c.arch);
  j["n_vocab"] = c.n_vocab;
  j["dim"] = c.dim;
  j["n_layers"] = c.n_layers;
  j["n_heads"] = c.n_heads;
  j["n_kv_heads"] = c.n_kv_heads;
  j["head_dim"] = c.head_dim;
  j["ffn_dim"] = c.ffn_dim;
  j["n_ctx"] = c.n_ctx;
  j["rope_dims"] = c.rope_dims;
  j["rope_freq_base"] = c.rope_freq_base;
  j["rope_neox"] = c.rope_neox;
  j["norm_eps"] = c.norm_eps;
  return j;
}

// A metadata value for display: scalars as they are, arrays as their size and type.
json value_json(const gguf_value& v) {
  switch (v.type) {
    case gguf_vtype::string: return v.s;
    case gguf_vtype::boolean: return v.i != 0;
    case gguf_vtype::f32: case gguf_vtype::f64: return v.f;
    case gguf_vtype::array:
      return "[" + std::to_string(v.array_size()) + " x " + gguf_vtype_name(v.elem_type) + "]";
    default: return v.i;
  }
}

int run_info(const info_args& a) {
  const auto m = load_model(a.path);
  // The stored tensors: the GGUF's own list, or (llama2.c) the model's distinct views.
  std::vector<tensor_view> tensors;
  if (m->gguf) {
    tensors = m->gguf->tensors();
  } else {
    std::set<const uint8_t*> seen;
    auto add = [&](const tensor_view& t) {
      if (t && seen.insert(t.data).second) tensors.push_back(t);
    };
    add(m->tok_embd);
    for (const auto& l : m->layers) {
      for (const tensor_view* t : {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.ffn_norm, &l.w_gate, &l.w_up, &l.w_down})
        add(*t);
    }
    add(m->output_norm);
    add(m->output);
  }
  json j;
  j["path"] = a.path;
  j["format"] = m->gguf ? "gguf" : "llama2c";
  j["config"] = config_json(m->config);
  int64_t n_params = 0;
  uint64_t n_bytes = 0;
  std::map<std::string, std::pair<int64_t, uint64_t>> by_type;  // type -> (count, bytes)
  json list = json::array();
  for (const auto& t : tensors) {
    n_params += t.n_elements();
    n_bytes += t.nbytes;
    auto& bt = by_type[ggml_traits(t.type).name];
    bt.first += 1;
    bt.second += t.nbytes;
    if (a.tensors) {
      json shape = json::array();
      for (int d = 0; d < std::max(t.n_dims, 1); ++d) shape.push_back(t.ne[d]);
      list.push_back({{"name", t.name}, {"type", ggml_traits(t.type).name}, {"shape", shape}, {"bytes", t.nbytes}});
    }
  }
  j["n_tensors"] = tensors.size();
  j["n_params"] = n_params;
  j["tensor_bytes"] = n_bytes;
  j["tied_output"] = m->output.data == m->tok_embd.data;
  json types = json::object();
  for (const auto& [name, cb] : by_type) types[name] = {{"count", cb.first}, {"bytes", cb.second}};
  j["types"] = types;
  if (m->gguf) {
    json meta = json::object();
    for (const auto& [k, v] : m->gguf->metadata()) meta[k] = value_json(v);
    j["metadata"] = meta;
  }
  if (a.tensors) j["tensors"] = list;
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

// `model check`: what the file is, then "supported" or each reason why not. Reads the
// header, metadata and tensor table only (the loader binds views into the memory map and
// converts a few 1-D norm vectors; no matrix is read).
int run_check(const check_args& a) {
  std::vector<std::string> reasons;
  auto line = [](const std::string& k, const std::string& v) { std::printf("%-14s %s\n", (k + ":").c_str(), v.c_str()); };
  line("file", a.path);
  std::shared_ptr<const gguf_file> f;
  try {
    f = std::make_shared<const gguf_file>(a.path);
  } catch (const engine_error& e) {
    // Not a readable GGUF (or a tensor type the reader does not know): nothing more to check.
    std::printf("not supported: %s\n", e.what());
    return 1;
  }
  const std::string arch = f->get_string("general.architecture").value_or("");
  const bool arch_ok = model_arch_from_name(arch).has_value();
  line("architecture", arch.empty() ? "(none)" : arch);
  if (!arch_ok) reasons.push_back("architecture '" + arch + "' is not supported (supported: " + model_arch_names() + ")");

  std::map<std::string, int64_t> types;
  for (const tensor_view& t : f->tensors()) types[ggml_traits(t.type).name] += 1;
  std::string tl;
  for (const auto& [n, c] : types) tl += (tl.empty() ? "" : ", ") + n + " x" + std::to_string(c);
  line("tensor types", tl.empty() ? "(no tensors)" : tl);

  const std::string ap = arch + ".";
  const auto ctx = f->get_int(ap + "context_length");
  line("context", ctx ? std::to_string(*ctx) : "(missing " + ap + "context_length)");
  const std::string scaling = f->get_string(ap + "rope.scaling.type").value_or("");
  const auto factor = f->get_float(ap + "rope.scaling.factor");
  std::string rope = scaling.empty() ? (factor ? "linear (type absent)" : "none") : scaling;
  if (factor) rope += ", factor " + std::to_string(*factor);
  if (f->find_tensor("rope_freqs.weight")) rope += "; Llama 3 rope_freqs.weight";
  line("rope scaling", rope);
  if (const auto sw = f->get_int(ap + "attention.sliding_window"); sw && *sw > 0) {
    // Applied where llama.cpp applies it (gemma3); llama and phi3 files carry the key but
    // llama.cpp runs them with full attention, and so does kvarena (its reference).
    const bool applied = arch == "gemma2" || arch == "gemma3";
    const int64_t p = f->get_int(ap + "attention.sliding_window_pattern").value_or(arch == "gemma2" ? 2 : 6);
    const std::string layers = p == 0 ? "all layers" : "layers: " + std::to_string(p - 1) + " of every " + std::to_string(p);
    line("sliding window", std::to_string(*sw) + (applied ? " (" + layers + ")"
                                                          : " (not applied: llama.cpp runs " + arch + " with full attention)"));
  }

  // Config and tensors (names, shapes, types, scaling keys) as the loader checks them.
  if (arch_ok) {
    try {
      load_model_gguf(f);
    } catch (const engine_error& e) {
      reasons.push_back(e.what());
    }
  }
  const auto tmpl = f->get_string("tokenizer.chat_template");
  if (!tmpl) {
    line("chat template", "none (plain text prompts)");
  } else {
    // Parsed and rendered on a probe conversation, as `kvarena run` will.
    std::string what = "present (" + std::to_string(tmpl->size()) + " bytes), ";
    try {
      const chat_template ct = chat_template::for_gguf(*f);
      what += "rendered from the file";
      if (std::string(ct.name()) != "gguf") what += std::string(", as the built-in ") + ct.name();
      if (!ct.prefix_stable()) what += ", not prefix-stable (history full restarts the sequence where it rewrites)";
    } catch (const std::invalid_argument& e) {
      what += "not renderable";
      reasons.push_back(e.what());
    }
    line("chat template", what);
  }
  const std::string tok_model = f->get_string("tokenizer.ggml.model").value_or("(none)");
  const std::string pre = f->get_string("tokenizer.ggml.pre").value_or("");
  line("tokenizer", tok_model + (pre.empty() ? "" : ", pre " + pre));
  try {
    tokenizer::from_gguf(*f);
  } catch (const engine_error& e) {
    reasons.push_back(e.what());
  }
  if (reasons.empty()) {
    std::printf("supported\n");
    return 0;
  }
  for (const std::string& r : reasons) std::printf("not supported: %s\n", r.c_str());
  return 1;
}

}  // namespace

void add_model_command(CLI::App& app, command_fn& run) {
  auto* model_cmd = app.add_subcommand("model", "Create or inspect model files");
  model_cmd->require_subcommand(1);

  auto ra = std::make_shared<random_args>();
  auto* rnd = model_cmd->add_subcommand("random", "Write a random-weight GGUF model (llama.cpp-loadable)");
  rnd->add_option("--arch", ra->arch, "Architecture")->check(CLI::IsMember({"llama", "qwen2", "gpt2"}))
      ->capture_default_str();
  rnd->add_option("--dim", ra->spec.dim, "Embedding width")->required();
  rnd->add_option("--layers", ra->spec.n_layers, "Number of transformer blocks")->required();
  rnd->add_option("--heads", ra->spec.n_heads, "Attention heads")->required();
  rnd->add_option("--kv-heads", ra->spec.n_kv_heads, "KV heads (GQA); 0 = same as --heads")->capture_default_str();
  rnd->add_option("--ffn", ra->spec.ffn_dim, "FFN hidden width")->required();
  rnd->add_option("--vocab", ra->spec.n_vocab, "Vocabulary size (>= 300)")->required();
  rnd->add_option("--ctx", ra->spec.n_ctx, "Trained context length")->capture_default_str();
  rnd->add_option("--type", ra->type, "Type of the 2-D matrices")
      ->check(CLI::IsMember({"f32", "f16", "bf16", "q8_0", "q4_0"}))->capture_default_str();
  rnd->add_option("--seed", ra->spec.seed, "Seed (same seed, same bytes on every machine)")->capture_default_str();
  rnd->add_option("--rope-base", ra->spec.rope_freq_base, "RoPE frequency base")->capture_default_str();
  rnd->add_option("--eps", ra->spec.norm_eps, "Norm epsilon")->capture_default_str();
  rnd->add_flag("--tied", ra->spec.tie_output, "No output.weight: logits use token_embd");
  rnd->add_option("--output-scale", ra->spec.output_scale,
                  "Scale of the output projection (logits): 1 gives near-uniform next-token "
                  "distributions, 2-4 a spread of confident and unsure steps")->capture_default_str();
  rnd->add_option("--qk-bias-scale", ra->spec.qk_bias_scale,
                  "qwen2: scale of the query/key biases; ~40 makes adjacent decode steps' queries "
                  "similar, as in trained models (FreeKV's premise)")->capture_default_str();
  rnd->add_flag("!--no-tokenizer", ra->spec.with_tokenizer, "Weights only, no tokenizer (any --vocab)");
  rnd->add_option("--out", ra->out, "Output .gguf path")->required();
  rnd->callback([&run, ra] { run = [ra] { return run_random(*ra); }; });

  auto ia = std::make_shared<info_args>();
  auto* info = model_cmd->add_subcommand("info", "Print a model's config and tensor summary as JSON");
  info->add_option("model", ia->path, "GGUF file or llama2.c checkpoint")->required();
  info->add_flag("--tensors", ia->tensors, "Also list every tensor");
  info->callback([&run, ia] { run = [ia] { return run_info(*ia); }; });

  auto ca = std::make_shared<check_args>();
  auto* check = model_cmd->add_subcommand(
      "check", "Say whether kvarena can run a GGUF file, without reading its weights: architecture, tensor types, "
               "context, RoPE scaling, chat template, tokenizer; prints 'supported' or each reason (exit 1)");
  check->add_option("model", ca->path, "GGUF file")->required();
  check->callback([&run, ca] { run = [ca] { return run_check(*ca); }; });
}

}  // namespace kvarena::cli

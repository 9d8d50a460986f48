// default-model.h: the model a command uses when --model is not given: the project's own
// trained agent model, models/kvarena-agent.gguf (models/README.md), looked for in the
// current folder and then beside the binary's build folder (<bin>/../models), so both
// `build/kvarena` from the checkout and an installed copy next to models/ find it.
#pragma once
#include <string>

namespace kvarena::cli {

inline constexpr const char* k_default_model_file = "models/kvarena-agent.gguf";

// `given` when not empty; else the default model's path. engine_error naming the places
// looked in when it is not there.
std::string model_or_default(const std::string& given);

}  // namespace kvarena::cli

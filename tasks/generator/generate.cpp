// generate.cpp: runs the template families in a fixed order and writes the suites
// (see generate.h).
#include "generator/generate.h"

#include <filesystem>
#include <fstream>
#include <system_error>

#include "generator/gen-templates.h"

namespace kvarena::tasks {

namespace fs = std::filesystem;

generated_suites generate_suites(uint64_t seed) {
  gen::site_data data(seed);
  std::vector<gen::draft> local, longh, visual;
  gen::classifieds_templates(data, local);
  gen::shopping_templates(data, local);
  if (data.has_site("reddit")) gen::reddit_templates(data, local);
  gen::multisite_templates(data, local);
  gen::long_horizon_templates(data, longh);
  gen::visual_templates(data, visual);

  generated_suites g;
  auto number = [](const std::vector<gen::draft>& drafts) {
    std::vector<task> out;
    for (size_t i = 0; i < drafts.size(); ++i) out.push_back(drafts[i].to_task(static_cast<int64_t>(i)));
    return out;
  };
  g.suites["vwa-local"] = number(local);
  g.suites["long-horizon"] = number(longh);
  g.suites["vwa-visual"] = number(visual);
  return g;
}

std::string task_file_text(const task& t) { return task_to_json(t, 2) + "\n"; }

std::map<std::string, std::string> suite_files(const generated_suites& g) {
  std::map<std::string, std::string> out;
  for (const auto& [suite, tasks] : g.suites)
    for (const task& t : tasks) out[suite + "/" + std::to_string(t.task_id) + ".json"] = task_file_text(t);
  return out;
}

bool write_suites(const generated_suites& g, const std::string& out_dir, std::string* err) {
  std::error_code ec;
  for (const auto& [suite, tasks] : g.suites) {
    fs::path dir = fs::path(out_dir) / suite;
    fs::create_directories(dir, ec);
    if (ec) {
      *err = "cannot create " + dir.string() + ": " + ec.message();
      return false;
    }
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.is_regular_file() && entry.path().extension() == ".json") fs::remove(entry.path(), ec);
    for (const task& t : tasks) {
      fs::path file = dir / (std::to_string(t.task_id) + ".json");
      std::ofstream f(file, std::ios::binary | std::ios::trunc);
      f << task_file_text(t);
      if (!f) {
        *err = "cannot write " + file.string();
        return false;
      }
    }
  }
  return true;
}

}  // namespace kvarena::tasks

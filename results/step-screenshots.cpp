// step-screenshots.cpp: see step-screenshots.h.
#include "step-screenshots.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>

#include "results-schema.h"

namespace kvarena::results {
namespace fs = std::filesystem;

namespace {

// Letters, digits, '-' and '.' kept; anything else '_' (a file name from any text).
std::string file_safe(std::string s) {
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.')) c = '_';
  return s;
}

fs::path folder_of(const std::string& results_path) {
  fs::path p = fs::absolute(results_path).parent_path();
  return p;
}

}  // namespace

std::string step_screenshot_rel_path(const std::string& results_path, const std::string& run_name,
                                     const work_item& item, int64_t step) {
  const std::string file = fs::path(results_path).filename().string();
  return file + "-screenshots/" + file_safe(run_name) + "/" +
         file_safe(item.task_id + "_" + item.policy + "_" + std::to_string(item.seed)) + "-step" +
         std::to_string(step) + ".png";
}

void write_step_screenshots(sql_db& db, int64_t run_id, const work_item& item, const std::vector<step_row>& steps) {
  std::string run_name;
  {
    auto st = db.prepare("SELECT name FROM runs WHERE run_id = ?1");
    st.bind_int(1, run_id);
    if (st.step()) run_name = st.text(0);
  }
  auto ins = db.prepare(std::string("INSERT INTO step_screenshots (run_id, ") + step_screenshot_columns +
                        ") VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  for (const step_row& s : steps) {
    if (s.screenshot_png.empty()) continue;
    const std::string rel = step_screenshot_rel_path(db.path(), run_name, item, s.step);
    const fs::path file = folder_of(db.path()) / rel;
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(s.screenshot_png.data(), static_cast<std::streamsize>(s.screenshot_png.size()));
    out.close();
    if (!out) throw results_error("cannot write the step screenshot " + file.string() + " (disk full? permissions?)");
    ins.bind_int(1, run_id).bind_text(2, item.task_id).bind_text(3, item.policy).bind_int(4, item.seed);
    ins.bind_int(5, s.step).bind_text(6, rel);
    ins.step();
    ins.reset();
  }
}

void read_step_screenshot_paths(sql_db& db, int64_t run_id, const work_item& item, std::vector<step_row>& steps) {
  auto st = db.prepare(
      "SELECT step, path FROM step_screenshots WHERE run_id = ?1 AND task_id = ?2 AND policy = ?3 AND seed = ?4");
  st.bind_int(1, run_id).bind_text(2, item.task_id).bind_text(3, item.policy).bind_int(4, item.seed);
  while (st.step())
    for (step_row& s : steps)
      if (s.step == st.int64(0)) s.screenshot_path = st.text(1);
}

std::optional<fs::path> path_inside(const fs::path& folder, const std::string& rel) {
  const fs::path p(rel);
  if (rel.empty() || p.has_root_name() || p.has_root_directory()) return std::nullopt;
  for (const fs::path& part : p.lexically_normal())
    if (part == "..") return std::nullopt;
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(folder, ec);
  if (ec) return std::nullopt;
  const fs::path full = fs::weakly_canonical(base / p, ec);  // symlinks resolved
  if (ec) return std::nullopt;
  const fs::path inside = full.lexically_relative(base);
  if (inside.empty() || *inside.begin() == ".." || inside == ".") return std::nullopt;
  return full;
}

void copy_step_screenshot_files(sql_db& db, int64_t src_run_id, const std::string& src_path,
                                const std::string& dst_path) {
  const fs::path from = folder_of(src_path), to = folder_of(dst_path);
  std::error_code ec;
  const bool same_folder = fs::equivalent(from, to, ec);
  auto st = db.prepare(
      "SELECT path FROM src.step_screenshots WHERE run_id = ?1 "
      "AND (task_id, policy, seed) IN (SELECT task_id, policy, seed FROM temp.pick)");
  st.bind_int(1, src_run_id);
  while (st.step()) {
    const std::string rel = st.text(0);
    const std::optional<fs::path> source = path_inside(from, rel), target = path_inside(to, rel);
    if (!source || !target)
      throw results_error("cannot merge " + src_path + ": its step_screenshots row names the path '" + rel +
                          "', which leaves the results folder (screenshot paths are relative and stay inside it); "
                          "nothing of this file was merged");
    if (same_folder || !fs::exists(*source)) continue;
    fs::create_directories(target->parent_path(), ec);
    fs::copy_file(*source, *target, fs::copy_options::overwrite_existing, ec);
    if (ec) throw results_error("cannot copy the step screenshot " + source->string() + ": " + ec.message());
  }
}

}  // namespace kvarena::results

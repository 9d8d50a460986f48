// step-screenshots.h: the Set-of-Marks screenshots of a run's steps, stored as PNG files
// beside the results file and referenced from its step_screenshots table (never as blobs
// in the steps rows):
//   <results file>-screenshots/<run name>/<task>_<policy>_<seed>-step<N>.png
// The table's path is relative to the results file's folder, so the file and its folder
// move together; merge copies the files of the rows it copies, and only paths that stay
// inside the folders.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "results-db.h"
#include "sqlite-util.h"

namespace kvarena::results {

// The path, relative to the results file's folder, of one step's screenshot.
std::string step_screenshot_rel_path(const std::string& results_path, const std::string& run_name,
                                     const work_item& item, int64_t step);

// Writes the PNG of every step that has one (step_row::screenshot_png) and its row, inside
// the caller's transaction; the item's earlier rows are the caller's to delete. Throws
// results_error when a file cannot be written.
void write_step_screenshots(sql_db& db, int64_t run_id, const work_item& item, const std::vector<step_row>& steps);

// Fills step_row::screenshot_path of `steps` (the item's) from the table.
void read_step_screenshot_paths(sql_db& db, int64_t run_id, const work_item& item, std::vector<step_row>& steps);

// Copies the files that the rows of run `src_run_id` in attached database `src` name, of
// the items merge picked (the temp.pick table), from the folder of `src_path` to the folder
// of `dst_path` (same relative paths), skipping missing ones; nothing is copied when both
// folders are the same. Throws results_error when a row's path leaves either folder
// ("x/../../.bashrc", an absolute path, a symlink out), before copying that file.
void copy_step_screenshot_files(sql_db& db, int64_t src_run_id, const std::string& src_path,
                                const std::string& dst_path);

// `folder` / `rel` with symlinks resolved when it stays inside `folder`; nullopt when `rel`
// is absolute, climbs out with "..", or leads out through a symlink.
std::optional<std::filesystem::path> path_inside(const std::filesystem::path& folder, const std::string& rel);

}  // namespace kvarena::results

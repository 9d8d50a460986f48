// step-screenshots.h: the Set-of-Marks screenshots of a run's steps, stored as PNG files
// beside the results file and referenced from its step_screenshots table (never as blobs
// in the steps rows):
//   <results file>-screenshots/<run name>/<task>_<policy>_<seed>-step<N>.png
// The table's path is relative to the results file's folder, so the file and its folder
// move together; merge copies the files of the rows it copies.
#pragma once
#include <cstdint>
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

// Copies the files that the rows of run `src_run_id` in attached database `src` name from
// the folder of `src_path` to the folder of `dst_path` (same relative paths), skipping
// missing ones; no-op when both folders are the same.
void copy_step_screenshot_files(sql_db& db, int64_t src_run_id, const std::string& src_path,
                                const std::string& dst_path);

}  // namespace kvarena::results

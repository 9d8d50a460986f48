// retarget-objectives.h: the agent-retarget training set (train-data.h). A step whose action picks
// an element the objective names ("Open the Auto Parts category" -> click [69] on
// "[69] link 'Auto Parts'"; "Show me all Books listings" -> type [58] [Books] [0] into the
// category combobox, whose option 'Books' it is) is rendered again with the objective naming
// a sibling instead ("Open the Cameras category" -> click [75]; "Show me all Cars listings"
// -> type [58] [Cars] [0]). The page, the URL and the previous actions stay as they were, so
// the only thing that tells the variants apart is the objective: the step can be learnt only
// by reading the name from the objective and finding it on the page. (Round 12 typed
// "All Vehicles", the category most often trained on, whatever category the objective
// named: its first-token distribution hardly moved when the objective's category changed.)
//
// Siblings are elements of the acted-on element's role at its depth under the same parent
// (for an option: under the same combobox), not selected already, with a name that no other
// element of that role on the page has and that the objective does not contain. A link alone
// in its parent (each forum's link in its own table cell) takes its siblings from the nearest
// ancestor, up to k_sibling_levels above the parent, that holds others (the table: the other
// forums' links). Round 21 chose f/fitness, the forum most often trained on, for 5 of the 6
// long-horizon tasks that named another: the forum list had never been retargeted.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "train-data.h"

namespace kvarena {

// One line of a page: "\t\t[69] link 'Auto Parts'" -> {depth 2, id 69, role "link",
// name "Auto Parts"}; a line that is not an element has id -1 (its depth still counts).
struct page_line {
  int depth = 0;  // leading tabs
  int64_t id = -1;
  std::string role;
  std::string name;  // between the quotes ('...' or "..."); "" when none
  bool selected = false;  // the line says "selected: True" (an option that is chosen already)
};

// Every line of an observation, in order.
std::vector<page_line> page_lines(const std::string& observation);

// The index of lines[k]'s parent: the nearest line above it that is shallower (k itself
// when there is none).
size_t parent_line(const std::vector<page_line>& lines, size_t k);

// The indices (into `lines`) of the siblings of lines[k] under lines[container] (its parent,
// or a further ancestor such as the combobox above an option's group): the elements in the
// container's subtree of lines[k]'s role and depth with a non-empty name, k itself excluded.
std::vector<size_t> sibling_lines(const std::vector<page_line>& lines, size_t k, size_t container);

// How far above an element's parent sibling_container looks for siblings.
inline constexpr int k_sibling_levels = 3;

// The container of lines[k]'s siblings: its parent, or when that holds none the nearest
// ancestor up to k_sibling_levels above it that does (the parent when none does; k itself when
// it has no parent).
size_t sibling_container(const std::vector<page_line>& lines, size_t k);

// One variant of a step: the objective and the action with the sibling in the original's place.
struct retargeted_step {
  std::string intent;
  std::string action;
};

// Up to `variants` retargetings of step `i` of `tr` (drawn from `seed` among the eligible
// siblings; all of them when fewer): none when the step does not act on a name that the
// objective contains (a click or hover on a named element, or a typed text that is an option
// of the combobox typed into). A scroll that the trajectory follows (after any further scrolls)
// by such a pick gets that pick's variants whose sibling this page does not show, the action
// still the scroll: the page cuts the forum list after f/movies, and the oracle scrolls for
// f/nba before clicking it, so "the named element is not shown: scroll" is learnt beside
// "it is shown: click it".
std::vector<retargeted_step> retarget_step(const trajectory& tr, size_t i, int variants, uint64_t seed);

// agent-retarget's sequences of one trajectory: every retargeting of every step, rendered in
// history mode last (the previous actions the trajectory's own), a share crop_share of them
// (drawn) with the observation cut around the new element as agent-crop cuts it.
// intents (when given) receives each made-up objective.
std::vector<train_sequence> render_retargeted_steps(const trajectory& tr, int variants, double crop_share,
                                                    uint64_t seed, const tokenizer* tok, int64_t max_obs_tokens,
                                                    std::set<std::string>* intents = nullptr);

}  // namespace kvarena

// som-draw.h: Set-of-Marks: numbered boxes drawn onto a page screenshot, as VisualWebArena
// shows it to multimodal agents (each interactable element outlined, its [id] in a label
// beside a corner of its box, the first spot clear of the other labels, as VWA places
// them). PNG decoding, drawing and encoding are Cairo's.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kvarena {

struct som_mark {
  int64_t id;                      // the element's [id] in the text observation
  double x, y, width, height;      // CSS pixels in the screenshot (device scale 1)
};

// `png` with every mark drawn; "" with *error when the PNG cannot be read or written.
std::string draw_som_marks(const std::string& png, const std::vector<som_mark>& marks, std::string* error);

}  // namespace kvarena

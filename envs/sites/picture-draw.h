// picture-draw.h: draws a picture as a PNG with Cairo (picture-draw.cpp, a library of its
// own so Cairo's include flags stay out of the other sources). picture.h turns a
// picture_attrs into this spec (colour names into RGB).
#pragma once
#include <cstdint>
#include <string>

namespace kvarena::sites {

struct picture_spec {
  std::string object;   // picture_objects() name; unknown draws a box
  std::string pattern;  // solid | striped | dotted | checked
  std::string shape;    // badge: circle | square | triangle | diamond | star
  std::string label;    // printed on the badge
  int64_t count = 1;    // copies, clamped to 1..4
  double main_rgb[3] = {0.5, 0.5, 0.5};    // 0..1
  double second_rgb[3] = {0.5, 0.5, 0.5};  // 0..1
  bool object_only = false;  // the objects alone on white, no badge (a task's input image)
};

// The PNG bytes of `p` at width x height pixels.
std::string draw_picture_png(const picture_spec& p, int width, int height);

}  // namespace kvarena::sites

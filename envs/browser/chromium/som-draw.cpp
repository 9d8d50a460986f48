// som-draw.cpp: Set-of-Marks drawing with Cairo (see som-draw.h).
#include "browser/chromium/som-draw.h"

#include <cairo.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace kvarena {
namespace {

struct png_reader {
  const std::string& data;
  size_t offset = 0;
};

cairo_status_t read_png(void* closure, unsigned char* out, unsigned int length) {
  auto* r = static_cast<png_reader*>(closure);
  if (r->offset + length > r->data.size()) return CAIRO_STATUS_READ_ERROR;
  std::memcpy(out, r->data.data() + r->offset, length);
  r->offset += length;
  return CAIRO_STATUS_SUCCESS;
}

cairo_status_t write_png(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

// A few distinct colours, cycled by mark (VWA's marks are coloured per element too).
void set_colour(cairo_t* cr, size_t i, double alpha) {
  static const double k_colours[][3] = {{0.90, 0.10, 0.10}, {0.10, 0.45, 0.90}, {0.05, 0.60, 0.20},
                                         {0.85, 0.45, 0.00}, {0.60, 0.10, 0.75}, {0.00, 0.55, 0.60}};
  const double* c = k_colours[i % (sizeof k_colours / sizeof k_colours[0])];
  cairo_set_source_rgba(cr, c[0], c[1], c[2], alpha);
}

}  // namespace

std::string draw_som_marks(const std::string& png, const std::vector<som_mark>& marks, std::string* error) {
  png_reader reader{png};
  cairo_surface_t* surface = cairo_image_surface_create_from_png_stream(read_png, &reader);
  if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
    if (error) *error = std::string("cannot read the screenshot PNG: ") + cairo_status_to_string(cairo_surface_status(surface));
    cairo_surface_destroy(surface);
    return "";
  }
  cairo_t* cr = cairo_create(surface);
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
  cairo_set_font_size(cr, 12);
  const double img_w = cairo_image_surface_get_width(surface), img_h = cairo_image_surface_get_height(surface);
  for (size_t i = 0; i < marks.size(); ++i) {  // every box first, so no box covers a label
    const som_mark& m = marks[i];
    set_colour(cr, i, 1.0);
    cairo_set_line_width(cr, 2);
    cairo_rectangle(cr, m.x, m.y, std::max(1.0, m.width), std::max(1.0, m.height));
    cairo_stroke(cr);
  }
  // Labels as VWA places them: the first of a few spots around the box's corners that stays
  // in the image and clear of the labels placed so far and (unlike VWA) of the other
  // boxes, so a label does not hide a neighbour's text; else above the top-left corner.
  struct rect {
    double x, y, w, h;
    bool overlaps(const rect& o) const { return x < o.x + o.w && o.x < x + w && y < o.y + o.h && o.y < y + h; }
  };
  std::vector<rect> boxes, placed;
  for (const som_mark& m : marks) boxes.push_back({m.x, m.y, std::max(1.0, m.width), std::max(1.0, m.height)});
  for (size_t i = 0; i < marks.size(); ++i) {
    const som_mark& m = marks[i];
    std::string label = std::to_string(m.id);
    cairo_text_extents_t ext;
    cairo_text_extents(cr, label.c_str(), &ext);
    const double lw = ext.x_advance + 6, lh = 15;
    const double right = m.x + std::max(1.0, m.width), bottom = m.y + std::max(1.0, m.height);
    const rect spots[] = {{m.x, m.y - lh, lw, lh},         {right - lw, m.y - lh, lw, lh}, {m.x - lw, m.y, lw, lh},
                          {right, m.y, lw, lh},            {m.x, bottom, lw, lh},          {right - lw, bottom, lw, lh}};
    rect at = {m.x, std::max(0.0, m.y - lh), lw, lh};
    for (const rect& r : spots) {
      bool inside = r.x >= 0 && r.y >= 0 && r.x + r.w <= img_w && r.y + r.h <= img_h;
      bool clear = std::none_of(placed.begin(), placed.end(), [&](const rect& p) { return p.overlaps(r); });
      for (size_t j = 0; j < boxes.size() && clear; ++j) clear = j == i || !boxes[j].overlaps(r);
      if (inside && clear) {
        at = r;
        break;
      }
    }
    placed.push_back(at);
    set_colour(cr, i, 1.0);
    cairo_rectangle(cr, at.x, at.y, at.w, at.h);
    cairo_fill(cr);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_move_to(cr, at.x + 3, at.y + lh - 3.5);
    cairo_show_text(cr, label.c_str());
  }
  cairo_destroy(cr);
  std::string out;
  cairo_status_t st = cairo_surface_write_to_png_stream(surface, write_png, &out);
  cairo_surface_destroy(surface);
  if (st != CAIRO_STATUS_SUCCESS) {
    if (error) *error = std::string("cannot write the Set-of-Marks PNG: ") + cairo_status_to_string(st);
    return "";
  }
  return out;
}

}  // namespace kvarena

// picture-draw.cpp: a picture drawn with Cairo (see picture-draw.h, picture.h).
// Each object is a few paths in a unit cell ([0,1] x [0,1], y down); its body is filled
// with the main colour and the pattern in the second colour, outlined in a dark line;
// details (wheels, lenses, screens) are dark or light gray. The badge (shape + label) sits
// in the top right corner of the picture.
#include "picture-draw.h"

#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

namespace kvarena::sites {
namespace {

// The main colour with the pattern in the second colour, as a repeating source in user
// space (one tile = `tile` user units).
cairo_pattern_t* body_source(const picture_spec& a, double tile) {
  const int px = 32;
  cairo_surface_t* s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, px, px);
  cairo_t* t = cairo_create(s);
  cairo_set_source_rgb(t, a.main_rgb[0], a.main_rgb[1], a.main_rgb[2]);
  cairo_paint(t);
  cairo_set_source_rgb(t, a.second_rgb[0], a.second_rgb[1], a.second_rgb[2]);
  if (a.pattern == "striped") {
    cairo_rectangle(t, 0, 0, px, px * 0.4);
    cairo_fill(t);
  } else if (a.pattern == "dotted") {
    cairo_arc(t, px / 2.0, px / 2.0, px * 0.2, 0, 2 * M_PI);
    cairo_fill(t);
  } else if (a.pattern == "checked") {
    cairo_rectangle(t, 0, 0, px / 2.0, px / 2.0);
    cairo_rectangle(t, px / 2.0, px / 2.0, px / 2.0, px / 2.0);
    cairo_fill(t);
  }
  cairo_destroy(t);
  cairo_pattern_t* p = cairo_pattern_create_for_surface(s);
  cairo_surface_destroy(s);
  cairo_pattern_set_extend(p, CAIRO_EXTEND_REPEAT);
  cairo_pattern_set_filter(p, CAIRO_FILTER_NEAREST);
  cairo_matrix_t mx;
  cairo_matrix_init_scale(&mx, px / tile, px / tile);
  cairo_pattern_set_matrix(p, &mx);
  return p;
}

struct painter {
  cairo_t* cr;
  cairo_pattern_t* body;
  double line;  // outline width in user units

  void fill_body() {
    cairo_set_source(cr, body);
    cairo_fill_preserve(cr);
    outline();
  }
  void fill_gray(double v) {
    cairo_set_source_rgb(cr, v, v, v);
    cairo_fill_preserve(cr);
    outline();
  }
  void outline() {
    cairo_set_source_rgb(cr, 0.12, 0.12, 0.14);
    cairo_set_line_width(cr, line);
    cairo_stroke(cr);
  }
  void rect(double x, double y, double w, double h) { cairo_rectangle(cr, x, y, w, h); }
  void circle(double x, double y, double r) {
    cairo_new_sub_path(cr);
    cairo_arc(cr, x, y, r, 0, 2 * M_PI);
  }
  void rounded(double x, double y, double w, double h, double r) {
    cairo_new_sub_path(cr);
    cairo_arc(cr, x + w - r, y + r, r, -M_PI / 2, 0);
    cairo_arc(cr, x + w - r, y + h - r, r, 0, M_PI / 2);
    cairo_arc(cr, x + r, y + h - r, r, M_PI / 2, M_PI);
    cairo_arc(cr, x + r, y + r, r, M_PI, 1.5 * M_PI);
    cairo_close_path(cr);
  }
  void poly(std::initializer_list<std::pair<double, double>> pts) {
    bool first = true;
    for (auto [x, y] : pts) {
      if (first) cairo_move_to(cr, x, y);
      else cairo_line_to(cr, x, y);
      first = false;
    }
    cairo_close_path(cr);
  }
  void stroke_line(double x0, double y0, double x1, double y1, double w) {
    cairo_move_to(cr, x0, y0);
    cairo_line_to(cr, x1, y1);
    cairo_set_source_rgb(cr, 0.12, 0.12, 0.14);
    cairo_set_line_width(cr, w);
    cairo_stroke(cr);
  }
};

using draw_fn = std::function<void(painter&)>;

const std::map<std::string, draw_fn>& drawers() {
  static const std::map<std::string, draw_fn> m = {
      {"box", [](painter& p) {
         p.poly({{0.15, 0.35}, {0.55, 0.35}, {0.55, 0.9}, {0.15, 0.9}}); p.fill_body();
         p.poly({{0.55, 0.35}, {0.85, 0.2}, {0.85, 0.75}, {0.55, 0.9}}); p.fill_body();
         p.poly({{0.15, 0.35}, {0.45, 0.2}, {0.85, 0.2}, {0.55, 0.35}}); p.fill_gray(0.85);
       }},
      {"mug", [](painter& p) {
         cairo_new_sub_path(p.cr);
         cairo_arc(p.cr, 0.72, 0.55, 0.14, -M_PI / 2, M_PI / 2);
         cairo_set_line_width(p.cr, 0.07);
         cairo_set_source_rgb(p.cr, 0.12, 0.12, 0.14);
         cairo_stroke(p.cr);
         p.rounded(0.18, 0.28, 0.52, 0.62, 0.06); p.fill_body();
       }},
      {"bottle", [](painter& p) {
         p.rect(0.43, 0.08, 0.14, 0.1); p.fill_gray(0.25);
         p.poly({{0.43, 0.18}, {0.57, 0.18}, {0.57, 0.28}, {0.7, 0.38}, {0.7, 0.92}, {0.3, 0.92}, {0.3, 0.38}, {0.43, 0.28}});
         p.fill_body();
       }},
      {"shoe", [](painter& p) {
         p.poly({{0.1, 0.5}, {0.38, 0.5}, {0.55, 0.62}, {0.88, 0.68}, {0.92, 0.8}, {0.1, 0.8}}); p.fill_body();
         p.rect(0.1, 0.8, 0.82, 0.07); p.fill_gray(0.92);
       }},
      {"car", [](painter& p) {
         p.poly({{0.25, 0.5}, {0.35, 0.3}, {0.65, 0.3}, {0.78, 0.5}}); p.fill_gray(0.8);
         p.rounded(0.06, 0.48, 0.88, 0.24, 0.06); p.fill_body();
         p.circle(0.27, 0.74, 0.09); p.fill_gray(0.2);
         p.circle(0.73, 0.74, 0.09); p.fill_gray(0.2);
       }},
      {"bike", [](painter& p) {
         p.circle(0.25, 0.68, 0.17); p.outline();
         p.circle(0.75, 0.68, 0.17); p.outline();
         p.poly({{0.25, 0.68}, {0.45, 0.4}, {0.7, 0.4}, {0.5, 0.68}});
         cairo_set_line_width(p.cr, 0.07); cairo_set_source(p.cr, p.body); cairo_stroke(p.cr);
         p.stroke_line(0.7, 0.4, 0.75, 0.68, 0.05);
         p.stroke_line(0.45, 0.4, 0.42, 0.3, 0.04);
         p.rect(0.36, 0.26, 0.14, 0.05); p.fill_gray(0.2);
         p.stroke_line(0.7, 0.4, 0.68, 0.28, 0.04);
       }},
      {"screen", [](painter& p) {
         p.rounded(0.08, 0.18, 0.84, 0.56, 0.04); p.fill_body();
         p.rect(0.14, 0.24, 0.72, 0.44); p.fill_gray(0.18);
         p.rect(0.44, 0.74, 0.12, 0.1); p.fill_gray(0.3);
         p.rect(0.3, 0.84, 0.4, 0.05); p.fill_gray(0.3);
       }},
      {"headphones", [](painter& p) {
         cairo_new_sub_path(p.cr);
         cairo_arc(p.cr, 0.5, 0.55, 0.32, M_PI, 2 * M_PI);
         cairo_set_source_rgb(p.cr, 0.12, 0.12, 0.14); cairo_set_line_width(p.cr, 0.12); cairo_stroke_preserve(p.cr);
         cairo_set_line_width(p.cr, 0.07); cairo_set_source(p.cr, p.body); cairo_stroke(p.cr);
         p.rounded(0.1, 0.5, 0.18, 0.32, 0.07); p.fill_body();
         p.rounded(0.72, 0.5, 0.18, 0.32, 0.07); p.fill_body();
       }},
      {"camera", [](painter& p) {
         p.rect(0.32, 0.24, 0.2, 0.1); p.fill_gray(0.3);
         p.rounded(0.1, 0.32, 0.8, 0.5, 0.06); p.fill_body();
         p.circle(0.5, 0.57, 0.17); p.fill_gray(0.25);
         p.circle(0.5, 0.57, 0.09); p.fill_gray(0.55);
       }},
      {"book", [](painter& p) {
         p.rect(0.24, 0.14, 0.56, 0.74); p.fill_gray(0.95);
         p.rect(0.2, 0.1, 0.56, 0.74); p.fill_body();
         p.rect(0.2, 0.1, 0.08, 0.74); p.fill_gray(0.25);
       }},
      {"ball", [](painter& p) {
         p.circle(0.5, 0.55, 0.36); p.fill_body();
         cairo_new_sub_path(p.cr);
         cairo_arc(p.cr, 0.5, 0.55, 0.36, 0, M_PI);
         p.stroke_line(0.14, 0.55, 0.86, 0.55, 0.02);
       }},
      {"chair", [](painter& p) {
         p.rect(0.28, 0.12, 0.44, 0.4); p.fill_body();
         p.rect(0.22, 0.52, 0.56, 0.1); p.fill_body();
         p.rect(0.26, 0.62, 0.06, 0.28); p.fill_gray(0.3);
         p.rect(0.68, 0.62, 0.06, 0.28); p.fill_gray(0.3);
       }},
      {"tent", [](painter& p) {
         p.poly({{0.08, 0.85}, {0.5, 0.15}, {0.92, 0.85}}); p.fill_body();
         p.poly({{0.42, 0.85}, {0.5, 0.5}, {0.58, 0.85}}); p.fill_gray(0.2);
       }},
  };
  return m;
}

void badge(cairo_t* cr, const picture_spec& a, double cx, double cy, double r) {
  cairo_new_path(cr);
  if (a.shape == "square") {
    cairo_rectangle(cr, cx - r * 0.85, cy - r * 0.85, r * 1.7, r * 1.7);
  } else if (a.shape == "triangle") {
    cairo_move_to(cr, cx, cy - r * 1.05);
    cairo_line_to(cr, cx + r * 1.1, cy + r * 0.8);
    cairo_line_to(cr, cx - r * 1.1, cy + r * 0.8);
    cairo_close_path(cr);
  } else if (a.shape == "diamond") {
    cairo_move_to(cr, cx, cy - r * 1.1);
    cairo_line_to(cr, cx + r * 1.1, cy);
    cairo_line_to(cr, cx, cy + r * 1.1);
    cairo_line_to(cr, cx - r * 1.1, cy);
    cairo_close_path(cr);
  } else if (a.shape == "star") {
    for (int i = 0; i < 10; ++i) {
      double ang = -M_PI / 2 + i * M_PI / 5, rr = i % 2 ? r * 0.5 : r * 1.15;
      if (i == 0) cairo_move_to(cr, cx + rr * std::cos(ang), cy + rr * std::sin(ang));
      else cairo_line_to(cr, cx + rr * std::cos(ang), cy + rr * std::sin(ang));
    }
    cairo_close_path(cr);
  } else {
    cairo_arc(cr, cx, cy, r, 0, 2 * M_PI);
  }
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.12);
  cairo_fill(cr);
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
  cairo_set_font_size(cr, r * (a.shape == "triangle" || a.shape == "star" ? 0.6 : 0.8));
  cairo_text_extents_t e;
  cairo_text_extents(cr, a.label.c_str(), &e);
  double ty = a.shape == "triangle" ? cy + r * 0.25 : cy;
  cairo_move_to(cr, cx - e.width / 2 - e.x_bearing, ty - e.height / 2 - e.y_bearing);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_show_text(cr, a.label.c_str());
}

cairo_status_t append_png(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

}  // namespace

std::string draw_picture_png(const picture_spec& a, int width, int height) {
  cairo_surface_t* s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
  cairo_t* cr = cairo_create(s);
  cairo_pattern_t* bg = cairo_pattern_create_linear(0, 0, 0, height);
  cairo_pattern_add_color_stop_rgb(bg, 0, 0.97, 0.97, 0.96);
  cairo_pattern_add_color_stop_rgb(bg, 1, a.object_only ? 0.97 : 0.86, a.object_only ? 0.97 : 0.87, a.object_only ? 0.96 : 0.88);
  cairo_set_source(cr, bg);
  cairo_paint(cr);
  cairo_pattern_destroy(bg);

  // Cells: 1 large; 2 side by side; 3 in a row; 4 in two rows of two.
  int n = int(std::clamp<int64_t>(a.count, 1, 4));
  int cols = n == 4 ? 2 : n, rows = n == 4 ? 2 : 1;
  double margin = height * 0.08;
  double cell = std::min((width - 2 * margin) / cols, (height - 2 * margin) / rows);
  double x0 = (width - cell * cols) / 2, y0 = (height - cell * rows) / 2;
  auto it = drawers().find(a.object);
  const draw_fn& draw = it == drawers().end() ? drawers().at("box") : it->second;
  cairo_pattern_t* body = body_source(a, 0.12);
  for (int i = 0; i < n; ++i) {
    cairo_save(cr);
    cairo_translate(cr, x0 + (i % cols) * cell, y0 + (i / cols) * cell);
    cairo_scale(cr, cell, cell);
    painter p{cr, body, 0.025};
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    draw(p);
    cairo_new_path(cr);
    cairo_restore(cr);
  }
  cairo_pattern_destroy(body);
  double r = height * 0.075;
  if (!a.object_only) badge(cr, a, width - r * 1.6, r * 1.6, r);

  cairo_destroy(cr);
  std::string png;
  cairo_surface_write_to_png_stream(s, append_png, &png);
  cairo_surface_destroy(s);
  return png;
}

}  // namespace kvarena::sites

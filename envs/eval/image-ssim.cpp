// image-ssim.cpp: see image-ssim.h.
#include "eval/image-ssim.h"

#include <png.h>
#include <jpeglib.h>

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstdio>

namespace kvarena {
namespace {

// PIL's RGB -> L: (R*299 + G*587 + B*114) / 1000, rounded, in its fixed-point form.
uint8_t luma(uint8_t r, uint8_t g, uint8_t b) {
  return static_cast<uint8_t>((r * 19595u + g * 38470u + b * 7471u + 0x8000u) >> 16);
}

bool decode_png(const std::string& bytes, gray_image* out, std::string* err) {
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&img, bytes.data(), bytes.size())) {
    *err = std::string("not a readable PNG: ") + img.message;
    return false;
  }
  img.format = PNG_FORMAT_RGB;  // alpha dropped, as PIL's convert("L") ignores it
  std::vector<uint8_t> rgb(PNG_IMAGE_SIZE(img));
  if (!png_image_finish_read(&img, nullptr, rgb.data(), 0, nullptr)) {
    *err = std::string("PNG decoding failed: ") + img.message;
    png_image_free(&img);
    return false;
  }
  out->width = static_cast<int>(img.width);
  out->height = static_cast<int>(img.height);
  out->pixels.resize(static_cast<size_t>(out->width) * out->height);
  for (size_t i = 0; i < out->pixels.size(); ++i) out->pixels[i] = luma(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
  return true;
}

struct jpeg_failure {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void on_jpeg_error(j_common_ptr cinfo) {
  auto* f = reinterpret_cast<jpeg_failure*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, f->message);
  std::longjmp(f->jump, 1);
}

bool decode_jpeg(const std::string& bytes, gray_image* out, std::string* err) {
  jpeg_decompress_struct cinfo{};
  jpeg_failure fail{};
  cinfo.err = jpeg_std_error(&fail.mgr);
  fail.mgr.error_exit = on_jpeg_error;
  std::vector<uint8_t> rgb;
  if (setjmp(fail.jump)) {
    *err = std::string("JPEG decoding failed: ") + fail.message;
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = JCS_RGB;
  jpeg_start_decompress(&cinfo);
  const int w = static_cast<int>(cinfo.output_width), h = static_cast<int>(cinfo.output_height);
  rgb.resize(static_cast<size_t>(w) * h * 3);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = rgb.data() + static_cast<size_t>(cinfo.output_scanline) * w * 3;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  out->width = w;
  out->height = h;
  out->pixels.resize(static_cast<size_t>(w) * h);
  for (size_t i = 0; i < out->pixels.size(); ++i) out->pixels[i] = luma(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
  return true;
}

double lanczos3(double x) {
  x = std::fabs(x);
  if (x < 1e-12) return 1;
  if (x >= 3) return 0;
  const double px = M_PI * x;
  return 3 * std::sin(px) * std::sin(px / 3) / (px * px);
}

// One axis of PIL's resampling: each output sample a normalised Lanczos-weighted sum of
// the inputs under its support (widened by the scale when shrinking).
std::vector<double> resample_axis(const std::vector<double>& in, int in_len, int out_len, int stride, int count,
                                  bool rows) {
  std::vector<double> out(static_cast<size_t>(out_len) * count);
  const double scale = static_cast<double>(in_len) / out_len;
  const double fscale = std::max(scale, 1.0);
  const double support = 3 * fscale;
  for (int o = 0; o < out_len; ++o) {
    const double center = (o + 0.5) * scale;
    const int lo = std::max(0, static_cast<int>(center - support + 0.5));
    const int hi = std::min(in_len, static_cast<int>(center + support + 0.5));
    std::vector<double> w;
    double sum = 0;
    for (int i = lo; i < hi; ++i) {
      w.push_back(lanczos3((i - center + 0.5) / fscale));
      sum += w.back();
    }
    for (double& x : w) x = sum != 0 ? x / sum : 0;
    for (int c = 0; c < count; ++c) {
      double acc = 0;
      for (int i = lo; i < hi; ++i)
        acc += w[i - lo] * (rows ? in[static_cast<size_t>(i) * stride + c] : in[static_cast<size_t>(c) * stride + i]);
      if (rows) out[static_cast<size_t>(o) * count + c] = acc;
      else out[static_cast<size_t>(c) * out_len + o] = acc;
    }
  }
  return out;
}

}  // namespace

bool decode_gray_image(const std::string& bytes, gray_image* out, std::string* err) {
  if (bytes.size() >= 8 && bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0) return decode_png(bytes, out, err);
  if (bytes.size() >= 3 && static_cast<uint8_t>(bytes[0]) == 0xFF && static_cast<uint8_t>(bytes[1]) == 0xD8)
    return decode_jpeg(bytes, out, err);
  *err = "neither PNG nor JPEG (" + std::to_string(bytes.size()) + " bytes)";
  return false;
}

gray_image resize_lanczos(const gray_image& img, int width, int height) {
  if (img.width == width && img.height == height) return img;
  std::vector<double> src(img.pixels.begin(), img.pixels.end());
  // Horizontal pass: (height, width) rows, then vertical.
  std::vector<double> h = resample_axis(src, img.width, width, img.width, img.height, false);
  std::vector<double> v = resample_axis(h, img.height, height, width, width, true);
  gray_image out;
  out.width = width;
  out.height = height;
  out.pixels.resize(v.size());
  for (size_t i = 0; i < v.size(); ++i) out.pixels[i] = static_cast<uint8_t>(std::clamp(std::lround(v[i]), 0L, 255L));
  return out;
}

double ssim(const gray_image& a, const gray_image& b) {
  constexpr int win = 7;
  if (a.width != b.width || a.height != b.height || a.width < win || a.height < win) return -1;
  const double n = win * win, cov_norm = n / (n - 1);
  const double c1 = (0.01 * 255) * (0.01 * 255), c2 = (0.03 * 255) * (0.03 * 255);
  double total = 0;
  long windows = 0;
  for (int y = 0; y + win <= a.height; ++y)
    for (int x = 0; x + win <= a.width; ++x) {
      double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
      for (int dy = 0; dy < win; ++dy)
        for (int dx = 0; dx < win; ++dx) {
          const size_t i = static_cast<size_t>(y + dy) * a.width + (x + dx);
          const double pa = a.pixels[i], pb = b.pixels[i];
          sa += pa, sb += pb, saa += pa * pa, sbb += pb * pb, sab += pa * pb;
        }
      const double ua = sa / n, ub = sb / n;
      const double va = cov_norm * (saa / n - ua * ua), vb = cov_norm * (sbb / n - ub * ub);
      const double vab = cov_norm * (sab / n - ua * ub);
      total += ((2 * ua * ub + c1) * (2 * vab + c2)) / ((ua * ua + ub * ub + c1) * (va + vb + c2));
      ++windows;
    }
  return total / static_cast<double>(windows);
}

double image_ssim(const gray_image& a, const gray_image& b) {
  const int w = std::max(a.width, b.width), h = std::max(a.height, b.height);
  return ssim(resize_lanczos(a, w, h), resize_lanczos(b, w, h));
}

}  // namespace kvarena

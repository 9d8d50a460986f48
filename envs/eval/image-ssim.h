// image-ssim.h: images for eval_fuzzy_image_match (VisualWebArena's image_utils.
// get_image_ssim): PNG and JPEG decoded to 8-bit grayscale (libpng, libjpeg; PIL's "L"
// weights), both resized to the larger width and height (Lanczos-3, as PIL's LANCZOS;
// an image already that size is kept as is, as PIL does; kvarena resizes the grey image,
// PIL the colour one, which differs by rounding only), then the mean structural
// similarity of scikit-image's structural_similarity defaults: 7x7 uniform windows, sample
// covariance (N/(N-1)), K1 0.01, K2 0.03, data range 255, the mean over every window that
// lies inside the image.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kvarena {

struct gray_image {
  int width = 0, height = 0;
  std::vector<uint8_t> pixels;  // (height, width), row-major
};

// PNG or JPEG bytes (told apart by their signature); false with *err saying why.
bool decode_gray_image(const std::string& bytes, gray_image* out, std::string* err);

// Lanczos-3 resampling to width x height (the same image when the size is unchanged).
gray_image resize_lanczos(const gray_image& img, int width, int height);

// The mean SSIM of two images of the same size, each at least 7x7 (else -1).
double ssim(const gray_image& a, const gray_image& b);

// VWA's get_image_ssim: both resized to the larger width and height, then ssim().
double image_ssim(const gray_image& a, const gray_image& b);

}  // namespace kvarena

// test-eval-image.cpp: eval_fuzzy_image_match and eval_vqa (envs/eval/eval-image.h,
// image-ssim.h). SSIM against values computed by hand from its definition (scikit-image's
// defaults: 7x7 windows, sample covariance, C1 = (0.01*255)^2 = 6.5025,
// C2 = (0.03*255)^2 = 58.5225); decoding of PNG and JPEG written here; the evaluator on a
// page whose images a local HTTP server serves; eval_vqa through a scripted vision endpoint.
#include <gtest/gtest.h>
#include <jpeglib.h>
#include <png.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "eval/evaluator.h"
#include "eval/eval-image.h"
#include "eval/image-ssim.h"
#include "sites/http-server.h"
#include "eval-test-util.h"
#include "test-util.h"

namespace kvarena {
namespace {

gray_image filled(int w, int h, uint8_t v) { return {w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h, v)}; }

TEST(Ssim, HandComputedValues) {
  // Constant images 100 and 110: the variance terms are (0 + C2) / (0 + C2) = 1, so
  // SSIM = (2*100*110 + C1) / (100^2 + 110^2 + C1) = 22006.5025 / 22106.5025 = 0.99547644...
  EXPECT_NEAR(ssim(filled(7, 7, 100), filled(7, 7, 110)), 22006.5025 / 22106.5025, 1e-12);
  EXPECT_NEAR(ssim(filled(7, 7, 100), filled(7, 7, 110)), 0.9954764441, 1e-9);
  // One window: X has 24 pixels of 100 then 25 of 0; Y = X / 2.
  //   mean x = 2400/49 = 48.97959, mean y = 24.48980
  //   var x = 24*25/49*100^2/48 = 2551.0204, var y = 637.7551, cov = 1275.5102 (all /(n-1))
  //   SSIM = (2*48.97959*24.48980 + C1)(2*1275.5102 + C2) / ((48.97959^2 + 24.48980^2 + C1)
  //          (2551.0204 + 637.7551 + C2)) = 2405.50 * 2609.54 / (3005.26 * 3247.30) = 0.64323126
  gray_image x = filled(7, 7, 0), y = filled(7, 7, 0);
  for (int i = 0; i < 24; ++i) x.pixels[i] = 100, y.pixels[i] = 50;
  EXPECT_NEAR(ssim(x, y), 0.6432312586, 1e-9);
  EXPECT_NEAR(ssim(x, x), 1.0, 1e-12);
  // 8x7: two windows, the mean of both; with constant images both are the first value.
  EXPECT_NEAR(ssim(filled(8, 7, 100), filled(8, 7, 110)), 0.9954764441, 1e-9);
  EXPECT_EQ(ssim(filled(6, 7, 1), filled(6, 7, 1)), -1);  // smaller than a window
}

TEST(Ssim, ResizeKeepsSameSizeAndConstants) {
  gray_image x = filled(9, 9, 0);
  for (size_t i = 0; i < x.pixels.size(); i += 3) x.pixels[i] = 200;
  EXPECT_EQ(resize_lanczos(x, 9, 9).pixels, x.pixels);  // PIL: same size, same image
  gray_image up = resize_lanczos(filled(7, 7, 77), 14, 21);
  EXPECT_EQ(up.width, 14);
  EXPECT_EQ(up.height, 21);
  for (uint8_t p : up.pixels) EXPECT_EQ(p, 77);  // normalised weights keep a constant
  EXPECT_NEAR(image_ssim(filled(7, 7, 100), filled(14, 14, 110)), 0.9954764441, 1e-9);
}

std::string png_bytes(int w, int h, const std::vector<uint8_t>& rgb) {
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  img.width = w;
  img.height = h;
  img.format = PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  EXPECT_TRUE(png_image_write_to_memory(&img, nullptr, &size, 0, rgb.data(), 0, nullptr));
  std::string out(size, '\0');
  EXPECT_TRUE(png_image_write_to_memory(&img, out.data(), &size, 0, rgb.data(), 0, nullptr));
  out.resize(size);
  return out;
}

std::string jpeg_bytes(int w, int h, uint8_t v) {
  jpeg_compress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &buf, &size);
  c.image_width = w;
  c.image_height = h;
  c.input_components = 3;
  c.in_color_space = JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 100, TRUE);
  jpeg_start_compress(&c, TRUE);
  std::vector<uint8_t> row(static_cast<size_t>(w) * 3, v);
  while (c.next_scanline < c.image_height) {
    JSAMPROW r = row.data();
    jpeg_write_scanlines(&c, &r, 1);
  }
  jpeg_finish_compress(&c);
  std::string out(reinterpret_cast<char*>(buf), size);
  jpeg_destroy_compress(&c);
  std::free(buf);
  return out;
}

TEST(Ssim, DecodesPngAndJpegToPilGray) {
  // PIL's L of (255, 0, 0) is 76 (0.299 * 255 = 76.2), of (0, 0, 255) 29.
  std::string png = png_bytes(2, 1, {255, 0, 0, 0, 0, 255});
  gray_image g;
  std::string err;
  ASSERT_TRUE(decode_gray_image(png, &g, &err)) << err;
  EXPECT_EQ(g.width, 2);
  EXPECT_EQ(g.pixels, (std::vector<uint8_t>{76, 29}));
  ASSERT_TRUE(decode_gray_image(jpeg_bytes(8, 8, 128), &g, &err)) << err;
  EXPECT_EQ(g.width, 8);
  EXPECT_NEAR(g.pixels[0], 128, 1);
  EXPECT_FALSE(decode_gray_image("GIF89a...", &g, &err));
  EXPECT_NE(err.find("neither PNG nor JPEG"), std::string::npos) << err;
}

task image_task(const std::string& queries) {
  task t;
  t.task_id = 9;
  t.sites = {"classifieds"};
  t.start_url = "http://127.0.0.1:1/";
  t.intent = "Find the red bike";
  t.eval.eval_types = {"page_image_query"};
  t.eval.extra["page_image_query"] = queries;
  return t;
}

TEST(PageImageQuery, FuzzyImageMatchAndVqa) {
  std::vector<uint8_t> stripes(16 * 16 * 3);
  for (size_t i = 0; i < stripes.size(); ++i) stripes[i] = (i / 48) % 2 ? 230 : 20;
  std::vector<uint8_t> inverted = stripes;
  for (uint8_t& v : inverted) v = static_cast<uint8_t>(250 - v);
  const std::string bike = png_bytes(16, 16, stripes);
  std::string last_vqa_body;
  sites::http_server server({}, [&](const sites::http_request& req) {
    sites::http_response r;
    if (req.path == "/img/bike.png") {
      r.content_type = "image/png";
      r.body = bike;
    } else if (req.path == "/v1/chat/completions") {
      last_vqa_body = req.body;
      nlohmann::json j = {{"choices", {{{"message", {{"role", "assistant"}, {"content", "A red bicycle."}}}}}}};
      return sites::http_response::json(j.dump());
    } else {
      r.status = 404;
    }
    return r;
  });
  server.start();
  const auto dir = test::temp_dir("page-image");
  auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream((dir / name).string(), std::ios::binary) << bytes;
    return (dir / name).string();
  };
  const std::string same = write("same.png", bike), other = write("other.png", png_bytes(16, 16, inverted));
  fake_page page;
  page.url = server.base_url() + "/item/3";
  page.html = "<div class='gallery'><img src='/img/bike.png' alt='bike'></div><img src='/logo.png' alt=''>";
  eval_inputs in;
  in.page = &page;
  auto score = [&](const std::string& q) { return evaluate_task(image_task(q), in); };
  // Without the image evaluator (the evaluator core alone, as the fuzz targets build it):
  // unsupported, never scored.
  eval_result bare = score(R"([{"eval_image_url": "last", "eval_image_class": ".gallery", "eval_fuzzy_image_match": "x"}])");
  EXPECT_EQ(bare.status, eval_status::unsupported);
  image_eval_options local_files;  // the reference images are local paths
  local_files.allow_file_urls = true;
  in.images = page_image_scorer(local_files);

  EXPECT_EQ(score(R"([{"eval_image_url": "last", "eval_image_class": ".gallery", "eval_fuzzy_image_match": ")" + same +
                  R"("}])").score, 1);
  eval_result miss = score(R"([{"eval_image_url": "last", "eval_image_class": "", "eval_fuzzy_image_match": ")" + other +
                           R"("}])");
  EXPECT_EQ(miss.score, 0);
  EXPECT_NE(miss.evaluators[0].detail.find("best SSIM"), std::string::npos) << miss.evaluators[0].detail;
  EXPECT_EQ(score(R"([{"eval_image_url": "last", "eval_image_class": "", "eval_fuzzy_image_match": ")" + other +
                  " |OR| " + same + R"("}])").score, 1);
  EXPECT_EQ(score(R"([{"eval_image_url": "last", "eval_image_class": ".none", "eval_fuzzy_image_match": ")" + same +
                  R"("}])").score, 0);  // no image selected: 0, as VWA

  const std::string vqa = R"([{"eval_image_url": "last", "eval_image_class": ".gallery",
    "eval_vqa": [{"question": "What colour is the bike?", "answer": "RED"}]}])";
  eval_result none = score(vqa);  // no --vqa-url: unsupported, never guessed
  EXPECT_EQ(none.status, eval_status::unsupported);
  EXPECT_NE(none.evaluators[0].detail.find("--vqa-url"), std::string::npos);
  image_eval_options with_vqa;
  with_vqa.allow_file_urls = true;
  with_vqa.vqa_url = server.base_url();
  in.images = page_image_scorer(with_vqa);
  EXPECT_EQ(score(vqa).score, 1);
  EXPECT_NE(last_vqa_body.find("Q: What colour is the bike? A:"), std::string::npos) << last_vqa_body;
  EXPECT_NE(last_vqa_body.find("data:image/png;base64,"), std::string::npos);
  EXPECT_EQ(score(R"([{"eval_image_url": "last", "eval_image_class": ".gallery",
    "eval_vqa": [{"question": "What colour?", "answer": "blue"}]}])").score, 0);
}

// Reference and page images are read by http(s) URL only; a local path or file:// URL
// needs --allow-file-urls (image_eval_options::allow_file_urls), and the detail says so.
TEST(PageImageQuery, LocalImagesNeedAllowFileUrls) {
  std::vector<uint8_t> stripes(16 * 16 * 3);
  for (size_t i = 0; i < stripes.size(); ++i) stripes[i] = (i / 48) % 2 ? 230 : 20;
  const std::string bike = png_bytes(16, 16, stripes);
  sites::http_server server({}, [&](const sites::http_request& req) {
    sites::http_response r;
    r.content_type = "image/png";
    r.body = bike;
    if (req.path != "/img/bike.png") r.status = 404;
    return r;
  });
  server.start();
  const auto dir = test::temp_dir("page-image-local");
  const std::string path = (dir / "bike.png").string();
  std::ofstream(path, std::ios::binary) << bike;
  fake_page page;
  page.url = server.base_url() + "/item/3";
  page.html = "<img src='/img/bike.png' alt='bike'>";
  eval_inputs in;
  in.page = &page;
  auto score = [&](const std::string& ref) {
    return evaluate_task(image_task(R"([{"eval_image_url": "last", "eval_image_class": "", "eval_fuzzy_image_match": ")" +
                                    ref + R"("}])"),
                         in);
  };
  in.images = page_image_scorer({});
  for (const std::string& ref : {path, "file://" + path}) {
    eval_result refused = score(ref);
    EXPECT_EQ(refused.score, 0) << ref;
    EXPECT_NE(refused.evaluators[0].detail.find("--allow-file-urls"), std::string::npos) << refused.evaluators[0].detail;
  }
  EXPECT_EQ(score(server.base_url() + "/img/bike.png").score, 1);  // by URL: read
  image_eval_options allow;
  allow.allow_file_urls = true;
  in.images = page_image_scorer(allow);
  EXPECT_EQ(score(path).score, 1);
  EXPECT_EQ(score("file://" + path).score, 1);
  // A page image at a file:// URL is not read without the flag either.
  page.url = "file://" + path;
  page.html = "<img src='" + page.url + "' alt='bike'>";
  in.images = page_image_scorer({});
  eval_result page_refused = score(server.base_url() + "/img/bike.png");
  EXPECT_EQ(page_refused.score, 0);
  in.images = page_image_scorer(allow);
  EXPECT_EQ(score(server.base_url() + "/img/bike.png").score, 1);
}

}  // namespace
}  // namespace kvarena

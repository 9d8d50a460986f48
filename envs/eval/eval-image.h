// eval-image.h: the page_image_query evaluator (VisualWebArena's PageImageEvaluator). For
// each query of eval.page_image_query in order: open eval_image_url ("last" = stay), take
// the page's images (eval_image_class "": every <img> but decorative ones (alt=""); ".cls":
// the matching elements that are <img>, and the <img> inside the others), download and
// decode them (PNG, JPEG), then
//   eval_vqa [{question, answer}]: each image asked "Q: <question> A:" through the VQA
//       endpoint (--vqa-url, an OpenAI-compatible vision chat endpoint); passes when any
//       reply contains the answer (case-insensitive). Without an endpoint the evaluator
//       is `unsupported`, never guessed.
//   eval_fuzzy_image_match "URL |OR| URL": passes when any page image has SSIM above
//       ssim_threshold (default 0.8) with any reference image (image-ssim.h).
// A query whose page has no image (or none that decodes) scores 0, as VWA. Where kvarena
// differs from VWA: scores of the queries multiply (VWA keeps only the last query's).
#pragma once
#include <string>

#include "eval/evaluator.h"
#include "eval/page-probe.h"
#include "task/task.h"

namespace kvarena {

struct image_eval_options {
  std::string vqa_url;  // "" = no VQA model: eval_vqa is unsupported
  std::string vqa_model = "gpt-4-vision-preview";
  // Page and reference images by http(s) URL only; with this (--allow-file-urls) also
  // file:// URLs and local paths (common/url-policy.h).
  bool allow_file_urls = false;
};

// `unsupported` is set (and 0 returned) when a query needs the VQA endpoint and there is
// none, or the queries are not VWA's JSON shape.
double score_page_image_query(const task_eval& e, page_probe* page, const image_eval_options& opt, bool* unsupported,
                              std::string* detail);

// score_page_image_query with opt, as eval_inputs::images takes it.
inline image_query_scorer page_image_scorer(image_eval_options opt) {
  return [opt = std::move(opt)](const task_eval& e, page_probe* page, bool* unsupported, std::string* detail) {
    return score_page_image_query(e, page, opt, unsupported, detail);
  };
}

}  // namespace kvarena

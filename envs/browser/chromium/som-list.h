// som-list.h: the text of a Set-of-Marks observation, VisualWebArena's list (its
// ImageObservationProcessor): one line per interactable element in view, in page order,
//   [<id>] [<TAG>] [<text>]       e.g. [1744] [A] [HP Inkjet Fax (Renewed)]
// and the page's other text as
//   [] [StaticText] [<text>]
// The id is the number drawn on the screenshot (som-draw.h) and the one actions take;
// TAG the element's tag name; text its accessible name (VWA: textContent, with an
// image's alt) with whitespace collapsed, cut at 200 characters. A text already listed
// (an element's own label, a repeated string) is not listed again as StaticText.
// kvarena differs from VWA in one way: the ids are the observation's ids (stable within a
// page), not 1..n renumbered per screenshot, so one action grammar serves both observations.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kvarena {

struct som_item {
  int64_t id = 0;            // the element's [id]; unused for text
  bool interactive = false;  // else page text: listed as [] [StaticText]
  std::string tag;           // "A", "BUTTON", "INPUT" (any case; printed in upper case)
  std::string text;
};

std::string som_list_text(const std::vector<som_item>& items);

}  // namespace kvarena

// render-sequences.cpp: render, the stage that turns an oracle trajectory into the agent's
// training sequences (train-data.h render_trajectory): the same conversation code the agent
// runs (conversation.h, ChatML, the compact prompt style), one sequence per step (history
// last) or per episode (full), each reply and its end marker the loss targets. A stop whose
// answer an element of the page names exactly answers by that element (action_by_element),
// and a note names the element showing its fact where the (cut) page still shows it.
#include <optional>
#include <string>

#include "agent-action.h"
#include "chat-template.h"
#include "conversation.h"
#include "obs-truncate.h"
#include "prompt.h"
#include "tokenizer.h"
#include "train-data.h"

namespace kvarena {

std::vector<train_sequence> render_trajectory(const trajectory& tr, history_mode mode, const tokenizer* tok,
                                              int64_t max_obs_tokens) {
  const chat_template chat(chat_format::chatml);
  const std::string end_marker = chat.stop_strings().front();  // "<|im_end|>"
  agent_conversation conv(chat, mode, prompt_style::compact, 0);
  std::vector<train_sequence> out;
  train_sequence cur;
  std::optional<agent_action> prev;
  for (const seen_step& s : tr.steps) {
    const std::string obs = tok ? truncate_to_tokens(*tok, s.observation, max_obs_tokens).text : s.observation;
    const std::string prev_text = previous_action_text(prev ? &*prev : nullptr, std::nullopt);
    prompt_text p = conv.next_prompt(obs, s.url, tr.intent, prev_text);
    if (p.first && !cur.segments.empty()) out.push_back(std::move(cur)), cur = {};
    if (!p.first && p.text.rfind(end_marker, 0) == 0) {  // the previous reply's end
      cur.segments.push_back({end_marker, true});
      p.text.erase(0, end_marker.size());
    }
    cur.segments.push_back({p.text, false});
    const std::string action = action_by_element(s.action, obs);  // "stop [[84]]" where the page shows the answer
    std::string reply = compact_reply(action, s.note, s.note_element);
    prev = extract_agent_action(reply, obs);
    if (s.note_element >= 0 && prev->note != s.note) {  // the element is off the cut page: note the text
      reply = compact_reply(action, s.note);
      prev = extract_agent_action(reply, obs);
    }
    cur.segments.push_back({reply, true});
    conv.add_reply(reply);
    if (mode == history_mode::last) cur.segments.push_back({end_marker, true});
  }
  if (mode == history_mode::full && !cur.segments.empty()) cur.segments.push_back({end_marker, true});
  if (!cur.segments.empty()) out.push_back(std::move(cur));
  return out;
}

}  // namespace kvarena

// page-element.h: one element of an observation (the accessibility-tree text of
// specs/web-envs.md §2, "\t\t[84] StaticText '$23.99'") looked up by its id: its line,
// and its name as the page shows it. Used by notes by element (`NOTE [84]`, agent-action.h)
// and by the training data's checks of which element a step acts on.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvarena {

// The line of element [id] ("[71] link 'Name'", its indent left out), or "" when the page
// has none.
std::string element_line(std::string_view observation, int64_t id);

// The name of element [id]: the quoted text after its role, Python-repr quoting undone
// (\' \" \\ \n \t \r; other escapes kept as shown). nullopt when the page has no element
// [id] or its line has no quoted name.
std::optional<std::string> element_text(std::string_view observation, int64_t id);

// The first place at or after `from` where `part` occurs in `text` as a whole: no ASCII
// letter or digit joined to it on a side where `part` itself begins or ends with one
// ("2.4" in "Rating: 2.4 out of 5", not in "$12.40"; "$5" in "a$5"); npos when none.
size_t find_whole(std::string_view text, std::string_view part, size_t from = 0);

// The id of the element whose name holds `text`: one whose name is exactly `text` first,
// else the shortest name containing it with no letter or digit joined to it either side
// ("2.4" in "Rating: 2.4 out of 5", not in "$12.40"; the first such on the page); -1 when
// none.
int64_t element_showing(std::string_view observation, std::string_view text);

}  // namespace kvarena

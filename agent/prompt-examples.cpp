// prompt-examples.cpp: see prompt-examples.h. The trees keep the text browser's format
// (tab header, tab-indented "[id] role 'name' props" lines).
#include "prompt-examples.h"

namespace kvarena {

const std::vector<worked_example>& worked_examples() {
  static const std::vector<worked_example> examples = {
      {"shopping",
       "Tab 0 (current): Search results for: 'ceramic teapot' | One Stop Market\n"
       "\n"
       "[1] RootWebArea \"Search results for: 'ceramic teapot' | One Stop Market\" focused: True\n"
       "\t[12] link 'One Stop Market'\n"
       "\t[55] search ''\n"
       "\t\t[58] searchbox 'Search' required: False\n"
       "\t\t\t[216] StaticText 'ceramic teapot'\n"
       "\t\t[59] button 'Search'\n"
       "\t[68] main ''\n"
       "\t\t[69] heading \"Search results for: 'ceramic teapot'\"\n"
       "\t\t[71] region 'Products'\n"
       "\t\t\t[75] StaticText 'Items 1-2 of 2'\n"
       "\t\t\t[96] article ''\n"
       "\t\t\t\t[97] heading 'Brightleaf Ceramic Teapot, 1.2 L'\n"
       "\t\t\t\t\t[98] link 'Brightleaf Ceramic Teapot, 1.2 L'\n"
       "\t\t\t\t[101] StaticText '$27.49'\n"
       "\t\t\t\t[103] StaticText 'Rating: 4.5 out of 5 (8 reviews)'\n"
       "\t\t\t\t[108] button 'Add Brightleaf Ceramic Teapot, 1.2 L to cart'\n"
       "\t\t\t[116] article ''\n"
       "\t\t\t\t[117] heading 'Brightleaf Ceramic Teapot, 0.6 L'\n"
       "\t\t\t\t\t[118] link 'Brightleaf Ceramic Teapot, 0.6 L'\n"
       "\t\t\t\t[121] StaticText '$19.99'\n"
       "\t\t\t\t[123] StaticText 'No reviews yet'\n"
       "\t\t\t\t[128] button 'Add Brightleaf Ceramic Teapot, 0.6 L to cart'",
       "http://127.0.0.1:7770/shopping/search?q=ceramic+teapot",
       "What is the price of the Brightleaf Ceramic Teapot, 1.2 L?",
       "type [58] [ceramic teapot] [1]",
       "Let's think step-by-step. This page lists the search results for 'ceramic teapot'. The "
       "product 'Brightleaf Ceramic Teapot, 1.2 L' is listed with the price $27.49, which is what "
       "the objective asks for. I think I have achieved the objective. I will issue the stop "
       "action with the answer. In summary, the next action I will perform is ```stop [$27.49]```"},
      {"classifieds",
       "Tab 0 (current): Buy and sell near you | Classifieds\n"
       "\n"
       "[1] RootWebArea 'Buy and sell near you | Classifieds' focused: True\n"
       "\t[12] link 'Classifieds'\n"
       "\t[14] navigation 'Main'\n"
       "\t\t[17] link 'Home'\n"
       "\t\t[20] link 'All listings'\n"
       "\t\t[23] link 'Post a listing'\n"
       "\t[31] search ''\n"
       "\t\t[34] searchbox 'Search' required: False\n"
       "\t\t[35] button 'Search'\n"
       "\t[44] main ''\n"
       "\t\t[45] heading 'Buy and sell near you'\n"
       "\t\t[48] heading 'Browse categories'\n"
       "\t\t[52] link 'Vehicles'\n"
       "\t\t[54] StaticText '(34)'\n"
       "\t\t[73] link 'Electronics'\n"
       "\t\t[75] StaticText '(54)'\n"
       "\t\t[140] link 'Sports & Outdoors'\n"
       "\t\t[142] StaticText '(31)'",
       "http://127.0.0.1:9980/classifieds",
       "Show me the listings of inflatable kayaks.",
       "None",
       "Let's think step-by-step. This is the home page of the classifieds site. The objective is "
       "to find listings of inflatable kayaks. No category on this page is that specific, but "
       "there is a search box with id [34]. I can search for \"inflatable kayak\" and press Enter. "
       "In summary, the next action I will perform is ```type [34] [inflatable kayak] [1]```"},
      {"reddit",
       "Tab 0 (current): Hot posts in all forums | Postmill\n"
       "\n"
       "[1] RootWebArea 'Hot posts in all forums | Postmill' focused: True\n"
       "\t[12] link 'Postmill'\n"
       "\t[14] navigation 'Main'\n"
       "\t\t[17] link 'Home'\n"
       "\t\t[20] link 'Forums'\n"
       "\t[41] main ''\n"
       "\t\t[42] heading 'Hot posts in all forums'\n"
       "\t\t[57] article ''\n"
       "\t\t\t[58] heading 'Which tomato varieties grow best in containers?'\n"
       "\t\t\t\t[59] link 'Which tomato varieties grow best in containers?'\n"
       "\t\t\t[65] StaticText 'Submitted 3 hours ago (2024-07-01 05:12) by'\n"
       "\t\t\t[66] link 'BalconyBotanist'\n"
       "\t\t\t[69] link 'f/gardening'\n"
       "\t\t\t[78] StaticText '21 points'\n"
       "\t\t\t[85] link '14 comments'\n"
       "\t\t[88] article ''\n"
       "\t\t\t[89] heading 'Tips for a first marathon?'\n"
       "\t\t\t\t[90] link 'Tips for a first marathon?'\n"
       "\t\t\t[97] link 'f/running'\n"
       "\t\t\t[106] StaticText '8 points'\n"
       "\t\t\t[113] link '3 comments'",
       "http://127.0.0.1:9999/reddit",
       "Open the comments of the post \"Which tomato varieties grow best in containers?\".",
       "None",
       "Let's think step-by-step. This page lists the hot posts of all forums. The post \"Which "
       "tomato varieties grow best in containers?\" is the first one, and its comments link is "
       "'14 comments' with id [85]. Clicking it opens the comments. In summary, the next action I "
       "will perform is ```click [85]```"},
  };
  return examples;
}

}  // namespace kvarena

// test-jinja: the chat-template renderer (agent/jinja), one feature at a time, on small
// hand-written templates with hand-written expected text (written as jinja2 with
// trim_blocks and lstrip_blocks, transformers' setting, renders them: whitespace control,
// loops and their scoping, set/namespace/macro, literals and Python printing, operators and
// their precedence, access and slicing, tests, filters, methods), and the errors: an
// unsupported filter/test/statement named, jinja2's deferral of unknown names inside `if`,
// undefined values, the sandbox's refusal of mutation, raise_exception.
#include <gtest/gtest.h>

#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "jinja-eval.h"

namespace kvarena::jinja {
namespace {

value from_json(const nlohmann::json& j) {
  if (j.is_null()) return value::none();
  if (j.is_boolean()) return value::boolean(j.get<bool>());
  if (j.is_number_integer()) return value::integer(j.get<int64_t>());
  if (j.is_number()) return value::floating(j.get<double>());
  if (j.is_string()) return value::str(j.get<std::string>());
  if (j.is_array()) {
    list l;
    for (const auto& x : j) l.push_back(from_json(x));
    return value::make_list(std::move(l));
  }
  value d = value::make_dict();
  for (const auto& [k, v] : j.items()) d.d->set(k, from_json(v));
  return d;
}

std::string render(const std::string& tmpl, const std::string& context_json = "{}") {
  std::map<std::string, value> ctx;
  const nlohmann::json j = nlohmann::json::parse(context_json);
  for (const auto& [k, v] : j.items()) ctx[k] = from_json(v);
  return template_(tmpl).render(ctx);
}

std::string error_of(const std::string& tmpl, const std::string& context_json = "{}") {
  try {
    render(tmpl, context_json);
  } catch (const error& e) {
    return e.what();
  }
  return "(no error)";
}

struct feature_case {
  const char* tmpl;
  const char* context;
  const char* expected;
};

// In order: whitespace control; for loops (loop.*, else, if filter, unpacking, dictsort,
// break/continue, per-iteration scope, namespace, strings and dicts, cycle); if/set/macro/
// filter/generation blocks; literals and printing; operators; access and slicing; tests;
// filters; methods.
const feature_case k_cases[] = {
    {"{% if true %}\n  a\n{% endif %}\nb\n",
     "{}",
     "  a\nb"},
    {"  {% if true %}x{% endif %}  \n",
     "{}",
     "x  "},
    {"a  {%- if true -%}  b  {%- endif %}\n\nc",
     "{}",
     "ab\nc"},
    {"a {{- ' b ' -}} c",
     "{}",
     "a b c"},
    {"  {%+ if true %}x{% endif %}",
     "{}",
     "  x"},
    {"{# note #}\nx{#- trimmed -#}   y",
     "{}",
     "xy"},
    {"a\r\nb\n",
     "{}",
     "a\nb"},
    {"{{ 'x' }}\n{{ 'y' }}",
     "{}",
     "x\ny"},
    {"{% for x in ['a','b','c'] %}{{ loop.index }}{{ loop.index0 }}{{ x }}{% if loop.first %}F{% endif %}{% if loop.last %}L{% endif %}{{ loop.length }}{{ loop.revindex }}|{% endfor %}",
     "{}",
     "10aF33|21b32|32cL31|"},
    {"{% for x in [1,2,3] %}{{ loop.previtem }}-{{ loop.nextitem }};{% endfor %}",
     "{}",
     "-2;1-3;2-;"},
    {"{% for x in [] %}x{% else %}empty{% endfor %}",
     "{}",
     "empty"},
    {"{% for x in [1,2,3,4] if x is odd %}{{ x }}{{ loop.length }}{% endfor %}",
     "{}",
     "1232"},
    {"{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }};{% endfor %}",
     "{}",
     "a=1;b=2;"},
    {"{% for k, v in {'b': 1, 'a': 2}|dictsort %}{{ k }}{{ v }}{% endfor %}",
     "{}",
     "a2b1"},
    {"{% for x in range(10) %}{% if x == 1 %}{% continue %}{% endif %}{% if x == 3 %}{% break %}{% endif %}{{ x }}{% endfor %}",
     "{}",
     "02"},
    {"{% set x = 0 %}{% for i in range(3) %}{% set x = x + 1 %}{{ x }}{% endfor %}{{ x }}",
     "{}",
     "1110"},
    {"{% set ns = namespace(n=0) %}{% for i in range(3) %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}",
     "{}",
     "3"},
    {"{% for c in 'ab' %}{{ c }}.{% endfor %}{% for k in {'x': 1} %}{{ k }}{% endfor %}",
     "{}",
     "a.b.x"},
    {"{% for x in [1,2] %}{{ loop.cycle('o', 'e') }}{% endfor %}",
     "{}",
     "oe"},
    {"{% if 0 %}a{% elif '' %}b{% elif [1] %}c{% else %}d{% endif %}",
     "{}",
     "c"},
    {"{% set a, b = 1, 'x' %}{{ a }}{{ b }}{% set t %}in {{ a }}{% endset %}[{{ t }}]",
     "{}",
     "1x[in 1]"},
    {"{% set t | upper %}hi{% endset %}{{ t }}",
     "{}",
     "HI"},
    {"{% macro m(a, b='B') %}{{ a }}{{ b }}{{ kwargs.c }}{% endmacro %}{{ m(1) }},{{ m(1, 2) }},{{ m(b=3, a=4, c=5) }}",
     "{}",
     "1B,12,435"},
    {"{% filter upper %}abc{% endfilter %}",
     "{}",
     "ABC"},
    {"{% generation %}kept{% endgeneration %}",
     "{}",
     "kept"},
    {"{{ none }} {{ true }} {{ False }} {{ 1.0 }} {{ 1e20 }} {{ 0.1 + 0.2 }} {{ 1_000 }}",
     "{}",
     "None True False 1.0 1e+20 0.30000000000000004 1000"},
    {"{{ ['a', 1, none, true, 1.5, {'k': (1, 2)}, \"it's\"] }}",
     "{}",
     "['a', 1, None, True, 1.5, {'k': (1, 2)}, \"it's\"]"},
    {"{{ 'a\\tb\\n' ~ \"q\\\"\" ~ '\\u00e9' }}",
     "{}",
     "a\tb\nq\"é"},
    {"{{ 'adj' 'acent' }}",
     "{}",
     "adjacent"},
    {"{{ 1 / 2 }} {{ 4 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 3 * 'ab' }} {{ [1] + [2] }} {{ 'a' + 'b' }}",
     "{}",
     "0.5 2.0 3 -4 2 1024 ababab [1, 2] ab"},
    {"{{ 1 ~ 2 ~ none }} {{ 'b' in 'abc' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 3 not in [1] }}",
     "{}",
     "12None True True True True"},
    {"{{ 1 < 2 < 3 }} {{ 1 < 3 < 2 }} {{ 'a' < 'b' }} {{ 1 == 1.0 }} {{ [1, 2] == [1, 2] }} {{ 'a' != 'a' }}",
     "{}",
     "True False True True True False"},
    {"{{ 0 or 'x' }} {{ 1 and 'y' }} {{ '' and 'z' }}| {{ not 0 }} {{ -3 }} {{ 'y' if 1 else 'n' }} [{{ 'y' if 0 }}]",
     "{}",
     "x y | True -3 y []"},
    {"{{ 1 + 2 * 3 - 4 / 2 }} {{ (1 + 2) * 3 }} {{ 2 ** 3 ** 2 }} {{ 'a' ~ (1 + 2) }}",
     "{}",
     "5.0 9 64 a3"},
    {"{{ m.role }} {{ m['content'] }} [{{ m.missing }}] {{ l[0] }} {{ l[-1] }} {{ l.1 }}",
     "{\"m\": {\"role\": \"user\", \"content\": \"hi\"}, \"l\": [1, 2, 3]}",
     "user hi [] 1 3 2"},
    {"{{ l[::-1] }} {{ l[1:] }} {{ l[:-1] }} {{ l[-2:] }} {{ l[::2] }} {{ 'hello'[1:4] }} {{ 'abc'[::-1] }}",
     "{\"l\": [1, 2, 3]}",
     "[3, 2, 1] [2, 3] [1, 2] [2, 3] [1, 3] ell cba"},
    {"{{ x is defined }} {{ y is defined }} {{ y is undefined }} {{ none is none }} {{ 'a' is string }} {{ 1 is string }} {{ {} is mapping }} {{ [] is mapping }}",
     "{\"x\": 1}",
     "True False True True True False True False"},
    {"{{ [] is sequence }} {{ 'a' is iterable }} {{ 1 is number }} {{ 1 is integer }} {{ 1.0 is float }} {{ true is boolean }} {{ x is not none }} {{ 3 is divisibleby 3 }}",
     "{\"x\": 1}",
     "True True True True True True True True"},
    {"{{ 'a' is equalto 'a' }} {{ 2 is gt 1 }} {{ 'x' is in ['x'] }} {{ 'abc' is lower }} {{ 'ABC' is upper }}",
     "{}",
     "True True True True True"},
    {"[{{ '  a b \\n' | trim }}] [{{ 'xxaxx' | trim('x') }}] {{ [1, 2] | length }} {{ 'hé' | length }} {{ {'a': 1} | count }} {{ y | length }}",
     "{}",
     "[a b] [a] 2 2 1 0"},
    {"{{ {'a': [1, 'x'], 'b': none, 'c': true, 'd': 'é\"'} | tojson }}",
     "{}",
     "{\"a\": [1, \"x\"], \"b\": null, \"c\": true, \"d\": \"é\\\"\"}"},
    {"{{ {'b': 1, 'a': [1, 2]} | tojson(indent=2, sort_keys=true) }}",
     "{}",
     "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": 1\n}"},
    {"{{ [1, 'a'] | tojson(separators=(',', ':')) }} {{ 'é' | tojson(ensure_ascii=true) }}",
     "{}",
     "[1,\"a\"] \"\\u00e9\""},
    {"{{ 'aB' | upper }} {{ 'aB' | lower }} {{ 'hello world' | capitalize }} {{ 'hello world' | title }}",
     "{}",
     "AB ab Hello world Hello World"},
    {"[{{ y | default('d') }}] [{{ '' | default('d') }}] [{{ '' | default('d', true) }}] [{{ none | d('n') }}]",
     "{}",
     "[d] [] [d] [None]"},
    {"{{ [1, 2, 3] | join(', ') }} {{ msgs | map(attribute='role') | join }} {{ msgs | selectattr('role', 'equalto', 'user') | list | length }} {{ msgs | rejectattr('role', 'equalto', 'user') | map(attribute='content') | first }}",
     "{\"msgs\": [{\"role\": \"user\", \"content\": \"a\"}, {\"role\": \"assistant\", \"content\": \"b\"}]}",
     "1, 2, 3 userassistant 1 b"},
    {"{{ 'aXbX' | replace('X', '-') }} {{ 'abc' | list }} {{ [3, 1, 2] | sort }} {{ [3, 1, 2] | sort(reverse=true) }} {{ [1, 2, 1] | unique | list }} {{ [1, 2] | last }} {{ [1, 2] | reverse | list }}",
     "{}",
     "a-b- ['a', 'b', 'c'] [1, 2, 3] [3, 2, 1] [1, 2] 2 [2, 1]"},
    {"{{ 'a\\nb\\n\\nc' | indent(2) }}|{{ 'a\\nb' | indent(2, true) }}",
     "{}",
     "a\n  b\n\n  c|  a\n  b"},
    {"{{ '42' | int }} {{ '4.7' | int }} {{ 'x' | int(7) }} {{ '2.5' | float }} {{ 3 | string }} {{ [1] | string }} {{ [1, 2] | sum }} {{ [3, 1] | min }} {{ [3, 1] | max }} {{ -2 | abs }}",
     "{}",
     "42 4 7 2.5 3 [1] 3 1 3 2"},
    {"{{ {'a': 1}.items() | list }} {{ {'a': 1} | items | list }} {{ '<b>' | safe }} {{ '<b>&' | escape }} {{ [0, 1, 2] | select | list }} {{ [0, 1, 2] | reject('odd') | list }}",
     "{}",
     "[('a', 1)] [('a', 1)] <b> &lt;b&gt;&amp; [1, 2] [0, 2]"},
    {"[{{ '  a  '.strip() }}] [{{ 'xax'.strip('x') }}] [{{ '  a '.lstrip() }}] [{{ ' a  '.rstrip() }}] {{ 'a b  c'.split() }} {{ 'a,b,,c'.split(',') }} {{ 'a,b,c'.split(',', 1) }}",
     "{}",
     "[a] [a] [a ] [ a] ['a', 'b', 'c'] ['a', 'b', '', 'c'] ['a', 'b,c']"},
    {"{{ 'abc'.startswith('ab') }} {{ 'abc'.endswith(('x', 'c')) }} {{ 'aaa'.replace('a', 'b', 2) }} {{ 'ab'.upper() }} {{ '{} and {name}'.format(1, name='n') }} {{ 'abcb'.find('b') }} {{ 'abcb'.count('b') }}",
     "{}",
     "True True bba AB 1 and n 1 2"},
    {"{{ d.get('a') }} {{ d.get('z') }} {{ d.get('z', 0) }} {{ d.keys() | list }} {{ d.values() | list }} {{ '-'.join(['a', 'b']) }} {{ [1, 2, 1].count(1) }}",
     "{\"d\": {\"a\": 1, \"b\": 2}}",
     "1 None 0 ['a', 'b'] [1, 2] a-b 2"},
    {"{% set d = {0: 'a', 512: 'b', true: 'c', none: 'n'} %}{{ d[512] }} {{ d }} {{ d | tojson }} {% for k, v in {512: 1, 0: 2} | dictsort %}{{ k }}{% endfor %} {{ 1 in {1.0: 'x'} }} {{ d[1] }}",
     "{}",
     "b {0: 'a', 512: 'b', True: 'c', None: 'n'} {\"0\": \"a\", \"512\": \"b\", \"true\": \"c\", \"null\": \"n\"} 0512 True c"},
    {"{{ '%s is %d' % ('x', 3) }}",
     "{}",
     "x is 3"},
};

TEST(Jinja, EachFeatureRendersAsJinja2Does) {
  for (const feature_case& c : k_cases) {
    SCOPED_TRACE(c.tmpl);
    try {
      EXPECT_EQ(render(c.tmpl, c.context), c.expected);
    } catch (const error& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

TEST(Jinja, UnsupportedNamesAreErrorsNamingThem) {
  EXPECT_EQ(error_of("{{ x | frobnicate }}"), "chat template line 1: chat template uses unsupported filter 'frobnicate'");
  EXPECT_NE(error_of("\n{{ x is frobnicated }}").find("line 2: chat template uses unsupported test 'frobnicated'"), std::string::npos);
  EXPECT_NE(error_of("{% extends 'base' %}").find("unsupported statement 'extends'"), std::string::npos);
  EXPECT_NE(error_of("{% for x in y recursive %}{% endfor %}").find("unsupported recursive"), std::string::npos);
  // Inside an `if`, as in jinja2, an unknown filter fails only when it is reached.
  EXPECT_EQ(render("{% if false %}{{ x | from_json }}{% endif %}ok"), "ok");
  EXPECT_NE(error_of("{% if true %}{{ x | from_json }}{% endif %}").find("unsupported filter 'from_json'"), std::string::npos);
  // But a for body inside an `if` is checked when parsed.
  EXPECT_NE(error_of("{% if false %}{% for i in x %}{{ i | nope }}{% endfor %}{% endif %}").find("'nope'"), std::string::npos);
  EXPECT_NE(error_of("{{ 'a'.casefold() }}").find("unsupported method 'casefold' of a value of type 'str'"), std::string::npos);
  EXPECT_NE(error_of("{{ nothing() }}").find("'nothing'"), std::string::npos);
}

TEST(Jinja, UndefinedValuesBehaveAsJinja2s) {
  EXPECT_EQ(render("[{{ x }}][{{ x | default('d') }}][{{ x is defined }}][{% for i in x %}i{% endfor %}][{{ 'a' in x }}]"),
            "[][d][False][][False]");
  EXPECT_EQ(render("[{{ m.missing }}][{{ m.missing is defined }}]", R"({"m": {"a": 1}})"), "[][False]");
  EXPECT_NE(error_of("{{ x.y }}").find("'x' is undefined"), std::string::npos);
  EXPECT_NE(error_of("{{ x + 1 }}").find("undefined value 'x'"), std::string::npos);
  EXPECT_NE(error_of("{{ x | tojson }}").find("'x' is undefined"), std::string::npos);
}

TEST(Jinja, MutationIsRefusedAsTheSandboxRefusesIt) {
  EXPECT_NE(error_of("{% set l = [1] %}{{ l.append(2) }}").find("list.append()"), std::string::npos);
  EXPECT_NE(error_of("{% set d = {} %}{{ d.update({'a': 1}) }}").find("dict.update()"), std::string::npos);
  EXPECT_NE(error_of("{% set n = 1 %}{% set n.a = 2 %}").find("not a namespace()"), std::string::npos);
}

TEST(Jinja, GlobalsRaiseExceptionAndStrftimeNow) {
  EXPECT_NE(error_of("{{ raise_exception('Conversation roles must alternate') }}")
                .find("chat template raised an error: Conversation roles must alternate"),
            std::string::npos);
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  const std::string year = std::to_string(1900 + tm.tm_year);  // (fails across a New Year's midnight)
  EXPECT_EQ(render("{{ strftime_now('%Y') }}"), year);
  EXPECT_EQ(render("{{ range(3) | list }} {{ range(1, 7, 2) | list }} {{ dict(a=1) }}"), "[0, 1, 2] [1, 3, 5] {'a': 1}");
}

TEST(Jinja, SyntaxErrorsNameTheLine) {
  EXPECT_NE(error_of("a\n{% if x %}").find("missing {% endif %}"), std::string::npos);
  EXPECT_NE(error_of("{{ 'open }}").find("unterminated string"), std::string::npos);
  EXPECT_NE(error_of("x\n\n{{ 1 + }}").find("line 3"), std::string::npos);
  EXPECT_NE(error_of("{# never closed").find("unterminated comment"), std::string::npos);
}

}  // namespace
}  // namespace kvarena::jinja

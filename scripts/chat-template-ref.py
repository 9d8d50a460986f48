#!/usr/bin/env python3
"""chat-template-ref.py: render chat templates with python3-jinja2 the way transformers'
apply_chat_template does, as the independent reference for kvarena's renderer
(tests/test-chat-template-llamacpp.cpp).

transformers (utils/chat_template_utils.py) compiles a template in an
ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with the loopcontrols
extension and a `generation` block tag (its AssistantTracker: the block renders its body),
replaces the tojson filter with json.dumps(ensure_ascii=False, indent, separators,
sort_keys), adds the globals raise_exception and strftime_now, and renders with
messages, tools=None, documents=None, add_generation_prompt and the special tokens.

Usage: chat-template-ref.py IN.json OUT.json
  IN:  {"templates": {"name": "template text", ...},
        "cases": [{"messages": [...], "add_generation_prompt": bool,
                   "bos_token": str, "eos_token": str}, ...],
        "cases_by_template": {"name": [case, ...]}}   (optional: a template's own cases)
  OUT: {"name": [{"ok": true, "text": "..."} or {"ok": false, "error": "..."}, ...], ...}
"""
import json
import sys
from datetime import datetime

import jinja2
import jinja2.ext
from jinja2 import nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment


class GenerationTag(jinja2.ext.Extension):
    """{% generation %}...{% endgeneration %}: renders its body unchanged."""
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def strftime_now(fmt):
    return datetime.now().strftime(fmt)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                       extensions=[GenerationTag, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    env = environment()
    out = {}
    for name, text in spec["templates"].items():
        results = []
        try:
            tmpl = env.from_string(text)
        except Exception as e:  # noqa: BLE001 - any failure is a result to compare
            out[name] = [{"ok": False, "error": f"{type(e).__name__}: {e}"}] * len(spec["cases"])
            continue
        for case in spec.get("cases_by_template", {}).get(name, spec["cases"]):
            try:
                text_out = tmpl.render(messages=case["messages"], tools=None, documents=None,
                                       add_generation_prompt=case["add_generation_prompt"],
                                       bos_token=case["bos_token"], eos_token=case["eos_token"])
                results.append({"ok": True, "text": text_out})
            except Exception as e:  # noqa: BLE001
                results.append({"ok": False, "error": f"{type(e).__name__}: {e}"})
        out[name] = results
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False)


if __name__ == "__main__":
    main()

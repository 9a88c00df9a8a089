#!/usr/bin/python3
"""Renders the reference outputs of the chat-template tool and variable cases, the way
transformers' apply_chat_template does (Debian's python3-jinja2 3.1.2, as the shared cases):

    tests/data/chat-tools/render_reference.py ../shared/chat-templates tests/data/chat-tools

For each case below and each template, writes TEMPLATE.CASE.txt (or .error.txt with the
raise_exception message). tests/unit/api/test_chat_tools.cpp builds the same conversations
with ember::ChatMessage and compares. strftime_now returns "26 Jul 2024".
"""
import json
import sys

from jinja2.sandbox import ImmutableSandboxedEnvironment

TEMPLATES = {
    "Qwen-Qwen2.5-7B-Instruct": ("", "<|im_end|>"),
    "meta-llama-Llama-3.1-8B-Instruct": ("<|begin_of_text|>", "<|eot_id|>"),
    "mistralai-Mistral-Nemo-Instruct-2407": ("<s>", "</s>"),
    "ibm-granite-granite-3.3-2B-Instruct": ("<|end_of_text|>", "<|end_of_text|>"),
    "HuggingFaceTB-SmolLM3-3B": ("", "<|im_end|>"),
}

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather in a city",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "City name"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city"]}}}]

# The JSON ember builds from ember::ChatMessage (src/api/chat_messages.cpp): content is always a
# string (templates such as Granite's concatenate it; the others treat "" as they treat null),
# and tool-call arguments are parsed into an object.
ROUND = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What is the weather in Paris?"},
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "abcDEF123", "type": "function",
         "function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}}]},
    {"role": "tool", "content": "{\"temperature\": 18, \"sky\": \"cloudy\"}",
     "tool_call_id": "abcDEF123", "name": "get_weather"},
]

CASES = {
    # tools offered, one question
    "tools": dict(messages=ROUND[:2], tools=TOOLS, add_generation_prompt=True),
    # a whole round: the call and its result, then the answer is due
    "tool_round": dict(messages=ROUND, tools=TOOLS, add_generation_prompt=True),
    # extra template variables
    "no_thinking": dict(messages=[{"role": "user", "content": "Hello!"}],
                        add_generation_prompt=True, enable_thinking=False),
}


class TemplateError(Exception):
    pass


def render(source, bos, eos, case):
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=["jinja2.ext.loopcontrols"])

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def raise_exception(message):
        raise TemplateError(message)

    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: "26 Jul 2024"
    variables = dict(case)
    variables.setdefault("tools", None)
    variables.setdefault("documents", None)
    return env.from_string(source).render(bos_token=bos, eos_token=eos, **variables)


def main():
    templates_dir, out_dir = sys.argv[1], sys.argv[2]
    for name, (bos, eos) in TEMPLATES.items():
        with open(f"{templates_dir}/{name}.jinja", encoding="utf-8") as f:
            source = f.read()
        for case_name, case in CASES.items():
            try:
                text, suffix = render(source, bos, eos, case), "txt"
            except TemplateError as e:
                text, suffix = str(e), "error.txt"
            with open(f"{out_dir}/{name}.{case_name}.{suffix}", "w", encoding="utf-8",
                      newline="") as f:
                f.write(text)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Exercises every call of examples/python/ember.py on stories260K (the example itself only
generates): model info, tokenize/detokenize, chat template with a tool call, the token loop by
hand, errors.  check_binding.py LIBRARY MODEL"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python"))
import ember  # noqa: E402


def main():
    lib = ember.load_library(sys.argv[1])
    model = ember.Model(lib, sys.argv[2], threads=1)
    info = model.info()
    assert info["architecture"] == "llama" and info["n_vocab"] == 512, info

    ids = model.tokenize("Once upon a time")
    assert ids == [1, 403, 407, 261, 378], ids
    assert model.detokenize(ids) == "Once upon a time"
    assert model.tokenize("") == [1]
    assert model.is_end_of_generation(2) and not model.is_end_of_generation(403)

    text = model.apply_chat_template(
        [{"role": "user", "content": "Weather?"},
         {"role": "assistant", "content": None, "tool_calls": [
             {"id": "c1", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
         {"role": "tool", "content": "18 C", "tool_call_id": "c1"}])
    assert text.startswith("<|im_start|>user\nWeather?<|im_end|>\n"), text
    assert text.endswith("<|im_start|>assistant\n"), text

    session = ember.Session(model, context=64)
    sampler = ember.Sampler(lib, temperature=0.0)
    session.prefill(ids)
    out = []
    for _ in range(7):
        logits, n = session.logits()
        token = sampler.sample(logits, n)
        out.append(token)
        session.decode(token)
    assert out == [432, 383, 286, 261, 376, 298, 315], out  # llama.cpp's greedy ids
    assert session.n_past() == 12
    assert session.metrics()["generated_tokens"] == 7

    try:
        session.decode(512)
        raise AssertionError("decode of an id outside the vocabulary succeeded")
    except ember.EmberError as e:
        assert e.status == "invalid_input", e.status
    try:
        ember.Sampler(lib, repeat_penalty=0.0)
        raise AssertionError("an invalid sampler option was accepted")
    except ember.EmberError as e:
        assert e.status == "error" and "repeat_penalty" in str(e), str(e)
    print("binding ok")


if __name__ == "__main__":
    main()

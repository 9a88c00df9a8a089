#!/usr/bin/env python3
"""Continues a prompt greedily through ember's C API from Python (ctypes, no other package).

    EMBER_LIBRARY=build/shared/libember.so examples/python/generate.py MODEL.gguf "Once upon a time" 32

Prints the prompt and its continuation as it streams, then one line of timings on stderr.
Exit status 1 with ember's message when the model cannot be loaded.
"""
import argparse
import sys

import ember


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("prompt")
    parser.add_argument("n", type=int, nargs="?", default=32)
    parser.add_argument("--library", help="path of libember.so (default: $EMBER_LIBRARY)")
    args = parser.parse_args()

    lib = ember.load_library(args.library)
    try:
        model = ember.Model(lib, args.model, threads=2)
    except ember.EmberError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    session = ember.Session(model, context=512)
    sampler = ember.Sampler(lib, temperature=0.0)  # greedy

    print(args.prompt, end="", flush=True)
    session.prefill(model.tokenize(args.prompt))
    _, reason = session.generate(sampler, max_tokens=args.n,
                                 on_text=lambda piece: print(piece, end="", flush=True))
    print()
    m = session.metrics()
    print(f"stop: {reason}; ttft {m['ttft_seconds'] * 1000:.1f} ms, "
          f"{m['generated_tokens']} tokens at "
          f"{m['generated_tokens'] / max(m['decode_seconds'], 1e-9):.1f} tok/s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

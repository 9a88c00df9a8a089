"""A small Python binding of ember's C API (include/ember/ember.h) with ctypes.

It needs a shared libember: build ember with -DBUILD_SHARED_LIBS=ON (or use the
libember.so the test suite builds in build/shared/) and point EMBER_LIBRARY at it, or pass its
path to load_library().

    import ember
    lib = ember.load_library("build/shared/libember.so")
    model = ember.Model(lib, "model.gguf", threads=2)
    session = ember.Session(model, context=512)
    sampler = ember.Sampler(lib, temperature=0.0)
    session.prefill(model.tokenize("Once upon a time"))
    text, reason = session.generate(sampler, max_tokens=32,
                                    on_text=lambda piece: print(piece, end="", flush=True))

Errors come back as ember.EmberError with ember's message. Handles are freed when the Python
objects are collected (or by close()).
"""

import ctypes
import ctypes.util
import json
import os

EMBER_OK = 0
STATUS_NAMES = {0: "ok", 1: "context_full", 2: "cancelled", 3: "invalid_input", 10: "error",
                11: "error_invalid_argument", 12: "error_buffer_too_small",
                13: "error_out_of_memory", 14: "error_internal"}
EMBER_ERROR_BUFFER_TOO_SMALL = 12
STOP_REASONS = {0: "eog", 1: "stop_string", 2: "max_tokens", 3: "context_full", 4: "cancelled"}

Token = ctypes.c_int32
TOKEN_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_bool, Token, ctypes.POINTER(ctypes.c_char),
                                  ctypes.c_size_t, ctypes.c_void_p)
CANCEL_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_void_p)
PROGRESS_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_float, ctypes.c_void_p)


class EmberError(RuntimeError):
    """A failed call: `status` is the ember_status name, the message is ember_last_error()."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = STATUS_NAMES.get(status, str(status))


class ModelOptions(ctypes.Structure):
    _fields_ = [("threads", ctypes.c_int32), ("on_progress", PROGRESS_CALLBACK),
                ("progress_user_data", ctypes.c_void_p)]


class ModelInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("architecture", ctypes.c_char_p),
                ("file_type", ctypes.c_char_p)] + \
               [(f, ctypes.c_int64) for f in ("n_vocab", "n_ctx_train", "n_embd", "n_layer",
                                              "n_head", "n_head_kv", "n_ff", "n_params",
                                              "weight_bytes")]


class ToolCall(ctypes.Structure):
    _fields_ = [("id", ctypes.c_char_p), ("name", ctypes.c_char_p), ("arguments", ctypes.c_char_p)]


class ChatMessage(ctypes.Structure):
    _fields_ = [("role", ctypes.c_char_p), ("content", ctypes.c_char_p),
                ("tool_calls", ctypes.POINTER(ToolCall)), ("n_tool_calls", ctypes.c_size_t),
                ("tool_call_id", ctypes.c_char_p), ("name", ctypes.c_char_p),
                ("reasoning_content", ctypes.c_char_p)]


class ChatOptions(ctypes.Structure):
    _fields_ = [("add_generation_prompt", ctypes.c_bool), ("tools", ctypes.c_char_p),
                ("variables", ctypes.c_char_p), ("template_override", ctypes.c_char_p)]


class SessionOptions(ctypes.Structure):
    _fields_ = [("context", ctypes.c_int32), ("threads", ctypes.c_int32),
                ("batch", ctypes.c_int32), ("logits_all", ctypes.c_bool),
                ("context_shift", ctypes.c_bool), ("n_keep", ctypes.c_int32)]


class Metrics(ctypes.Structure):
    _fields_ = [("prompt_tokens", ctypes.c_int64), ("generated_tokens", ctypes.c_int64),
                ("context_shifts", ctypes.c_int64), ("prefill_seconds", ctypes.c_double),
                ("decode_seconds", ctypes.c_double), ("ttft_seconds", ctypes.c_double)]


class LogitBias(ctypes.Structure):
    _fields_ = [("token", Token), ("bias", ctypes.c_float)]


class SamplerOptions(ctypes.Structure):
    _fields_ = [("temperature", ctypes.c_float), ("top_k", ctypes.c_int32),
                ("top_p", ctypes.c_float), ("min_p", ctypes.c_float),
                ("typical_p", ctypes.c_float), ("repeat_penalty", ctypes.c_float),
                ("frequency_penalty", ctypes.c_float), ("presence_penalty", ctypes.c_float),
                ("penalty_last_n", ctypes.c_int32), ("seed", ctypes.c_uint64),
                ("logit_bias", ctypes.POINTER(LogitBias)), ("n_logit_bias", ctypes.c_size_t)]


class GenerateOptions(ctypes.Structure):
    _fields_ = [("max_tokens", ctypes.c_int32), ("stop", ctypes.POINTER(ctypes.c_char_p)),
                ("n_stop", ctypes.c_size_t), ("on_token", TOKEN_CALLBACK),
                ("user_data", ctypes.c_void_p)]


class GenerateResult(ctypes.Structure):
    _fields_ = [("stop_reason", ctypes.c_int), ("status", ctypes.c_int),
                ("n_tokens", ctypes.c_int64), ("stop_index", ctypes.c_int32),
                ("last_token_pending", ctypes.c_bool)]


def load_library(path=None):
    """Loads libember (path, else $EMBER_LIBRARY, else the system's libember) and declares the
    signatures this module uses."""
    path = path or os.environ.get("EMBER_LIBRARY") or ctypes.util.find_library("ember")
    if not path:
        raise OSError("libember not found: pass its path or set EMBER_LIBRARY")
    lib = ctypes.CDLL(path)
    p, c_size, c_char_p = ctypes.POINTER, ctypes.c_size_t, ctypes.c_char_p
    signatures = {
        "ember_version": (c_char_p, []),
        "ember_last_error": (c_char_p, []),
        "ember_model_options_default": (ModelOptions, []),
        "ember_model_load": (ctypes.c_int, [c_char_p, p(ModelOptions), p(ctypes.c_void_p)]),
        "ember_model_free": (None, [ctypes.c_void_p]),
        "ember_model_get_info": (ctypes.c_int, [ctypes.c_void_p, p(ModelInfo)]),
        "ember_model_is_end_of_generation": (ctypes.c_bool, [ctypes.c_void_p, Token]),
        "ember_tokenize": (ctypes.c_int, [ctypes.c_void_p, c_char_p, c_size, ctypes.c_bool,
                                          ctypes.c_bool, p(Token), c_size, p(c_size)]),
        "ember_detokenize": (ctypes.c_int, [ctypes.c_void_p, p(Token), c_size, c_char_p, c_size,
                                            p(c_size)]),
        "ember_chat_options_default": (ChatOptions, []),
        "ember_apply_chat_template": (ctypes.c_int, [ctypes.c_void_p, p(ChatMessage), c_size,
                                                     p(ChatOptions), c_char_p, c_size, p(c_size)]),
        "ember_session_options_default": (SessionOptions, []),
        "ember_session_create": (ctypes.c_int, [ctypes.c_void_p, p(SessionOptions),
                                                p(ctypes.c_void_p)]),
        "ember_session_free": (None, [ctypes.c_void_p]),
        "ember_session_prefill": (ctypes.c_int, [ctypes.c_void_p, p(Token), c_size]),
        "ember_session_decode": (ctypes.c_int, [ctypes.c_void_p, Token]),
        "ember_session_logits": (p(ctypes.c_float), [ctypes.c_void_p, p(c_size)]),
        "ember_session_n_past": (ctypes.c_int32, [ctypes.c_void_p]),
        "ember_session_set_cancel_callback": (ctypes.c_int, [ctypes.c_void_p, CANCEL_CALLBACK,
                                                             ctypes.c_void_p]),
        "ember_session_get_metrics": (ctypes.c_int, [ctypes.c_void_p, p(Metrics)]),
        "ember_sampler_options_default": (SamplerOptions, []),
        "ember_sampler_create": (ctypes.c_int, [p(SamplerOptions), p(ctypes.c_void_p)]),
        "ember_sampler_free": (None, [ctypes.c_void_p]),
        "ember_sampler_sample": (ctypes.c_int, [ctypes.c_void_p, p(ctypes.c_float), c_size,
                                                p(Token)]),
        "ember_generate_options_default": (GenerateOptions, []),
        "ember_session_generate": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p,
                                                  p(GenerateOptions), p(GenerateResult)]),
    }
    for name, (restype, argtypes) in signatures.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


def _check(lib, status):
    if status != EMBER_OK:
        raise EmberError(status, lib.ember_last_error().decode("utf-8", "replace"))


def _text_call(lib, call):
    """Runs call(buffer, capacity, length_ptr) with the buffer convention: size, then data."""
    length = ctypes.c_size_t(0)
    status = call(None, 0, ctypes.byref(length))
    if status not in (EMBER_OK, EMBER_ERROR_BUFFER_TOO_SMALL):
        _check(lib, status)
    buf = ctypes.create_string_buffer(length.value + 1)
    _check(lib, call(buf, len(buf), ctypes.byref(length)))
    return buf.raw[:length.value].decode("utf-8", "replace")


class Model:
    """ember::Model: a loaded GGUF file, shared by sessions."""

    def __init__(self, lib, path, threads=0):
        self.lib = lib
        self._handle = ctypes.c_void_p()
        options = lib.ember_model_options_default()
        options.threads = threads
        _check(lib, lib.ember_model_load(os.fsencode(path), ctypes.byref(options),
                                         ctypes.byref(self._handle)))

    def close(self):
        if self._handle:
            self.lib.ember_model_free(self._handle)
            self._handle = ctypes.c_void_p()

    __del__ = close

    def info(self):
        info = ModelInfo()
        _check(self.lib, self.lib.ember_model_get_info(self._handle, ctypes.byref(info)))
        return {name: (getattr(info, name).decode() if isinstance(getattr(info, name), bytes)
                       else getattr(info, name)) for name, _ in ModelInfo._fields_}

    def tokenize(self, text, add_bos=True, parse_special=False):
        data = text.encode("utf-8")
        n = ctypes.c_size_t(0)
        status = self.lib.ember_tokenize(self._handle, data, len(data), add_bos, parse_special,
                                         None, 0, ctypes.byref(n))
        if status not in (EMBER_OK, EMBER_ERROR_BUFFER_TOO_SMALL):
            _check(self.lib, status)
        tokens = (Token * max(n.value, 1))()
        _check(self.lib, self.lib.ember_tokenize(self._handle, data, len(data), add_bos,
                                                 parse_special, tokens, n.value, ctypes.byref(n)))
        return list(tokens[:n.value])

    def detokenize(self, tokens):
        array = (Token * max(len(tokens), 1))(*tokens)
        return _text_call(self.lib, lambda buf, cap, length: self.lib.ember_detokenize(
            self._handle, array, len(tokens), buf, cap, length))

    def apply_chat_template(self, messages, add_generation_prompt=True, tools=None, **variables):
        """messages: OpenAI-style dicts ({"role", "content"}, and "tool_calls" with
        {"id", "function": {"name", "arguments"}}, "tool_call_id", "name"). tools: a list of
        OpenAI tool definitions. Keyword arguments become template variables
        (e.g. enable_thinking=False)."""
        keep = []  # every encoded string and array stays alive for the call

        def enc(value):
            if value is None:
                return None
            keep.append(value.encode("utf-8"))
            return keep[-1]

        structs = []
        for m in messages:
            calls = m.get("tool_calls") or []
            call_array = (ToolCall * max(len(calls), 1))(*[
                ToolCall(enc(c.get("id")), enc(c["function"]["name"]),
                         enc(c["function"]["arguments"] if isinstance(c["function"]["arguments"], str)
                             else json.dumps(c["function"]["arguments"]))) for c in calls])
            keep.append(call_array)
            structs.append(ChatMessage(enc(m["role"]), enc(m.get("content") or ""), call_array,
                                       len(calls), enc(m.get("tool_call_id")), enc(m.get("name")),
                                       enc(m.get("reasoning_content"))))
        array = (ChatMessage * max(len(structs), 1))(*structs)
        options = self.lib.ember_chat_options_default()
        options.add_generation_prompt = add_generation_prompt
        options.tools = enc(json.dumps(tools)) if tools else None
        options.variables = enc(json.dumps(variables)) if variables else None
        return _text_call(self.lib, lambda buf, cap, length: self.lib.ember_apply_chat_template(
            self._handle, array, len(structs), ctypes.byref(options), buf, cap, length))

    def is_end_of_generation(self, token):
        return self.lib.ember_model_is_end_of_generation(self._handle, token)


class Sampler:
    """ember::Sampler; keyword arguments are ember_sampler_options fields."""

    def __init__(self, lib, **options):
        self.lib = lib
        self._handle = ctypes.c_void_p()
        opts = lib.ember_sampler_options_default()
        for name, value in options.items():
            setattr(opts, name, value)
        _check(lib, lib.ember_sampler_create(ctypes.byref(opts), ctypes.byref(self._handle)))

    def close(self):
        if self._handle:
            self.lib.ember_sampler_free(self._handle)
            self._handle = ctypes.c_void_p()

    __del__ = close

    def sample(self, logits, n_logits):
        token = Token(0)
        _check(self.lib, self.lib.ember_sampler_sample(self._handle, logits, n_logits,
                                                       ctypes.byref(token)))
        return token.value


class Session:
    """ember::Session: one sequence with its KV cache."""

    def __init__(self, model, **options):
        self.model = model  # the C session keeps the model alive too
        self.lib = model.lib
        self._handle = ctypes.c_void_p()
        opts = self.lib.ember_session_options_default()
        for name, value in options.items():
            setattr(opts, name, value)
        _check(self.lib, self.lib.ember_session_create(model._handle, ctypes.byref(opts),
                                                       ctypes.byref(self._handle)))

    def close(self):
        if self._handle:
            self.lib.ember_session_free(self._handle)
            self._handle = ctypes.c_void_p()

    __del__ = close

    def prefill(self, tokens):
        array = (Token * max(len(tokens), 1))(*tokens)
        _check(self.lib, self.lib.ember_session_prefill(self._handle, array, len(tokens)))

    def decode(self, token):
        _check(self.lib, self.lib.ember_session_decode(self._handle, token))

    def logits(self):
        n = ctypes.c_size_t(0)
        pointer = self.lib.ember_session_logits(self._handle, ctypes.byref(n))
        return pointer, n.value

    def n_past(self):
        return self.lib.ember_session_n_past(self._handle)

    def metrics(self):
        m = Metrics()
        _check(self.lib, self.lib.ember_session_get_metrics(self._handle, ctypes.byref(m)))
        return {name: getattr(m, name) for name, _ in Metrics._fields_}

    def generate(self, sampler, max_tokens=-1, stop=(), on_text=None):
        """Samples and decodes until end of generation, a stop string or max_tokens; returns
        (text, stop reason). on_text(piece) is called as text streams out (complete UTF-8
        characters); returning False from it stops generation."""
        pieces = []

        def on_token(token, text, length, user_data):
            piece = ctypes.string_at(text, length).decode("utf-8")
            pieces.append(piece)
            return on_text is None or on_text(piece) is not False

        callback = TOKEN_CALLBACK(on_token)  # kept alive for the call
        opts = self.lib.ember_generate_options_default()
        opts.max_tokens = max_tokens
        encoded = [s.encode("utf-8") for s in stop]
        stops = (ctypes.c_char_p * max(len(encoded), 1))(*encoded)
        opts.stop = stops
        opts.n_stop = len(encoded)
        opts.on_token = callback
        result = GenerateResult()
        _check(self.lib, self.lib.ember_session_generate(self._handle, sampler._handle,
                                                         ctypes.byref(opts), ctypes.byref(result)))
        return "".join(pieces), STOP_REASONS[result.stop_reason]

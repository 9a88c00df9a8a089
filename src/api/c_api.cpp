// The C API (include/ember/ember.h) over the C++ one: handles own C++ objects, every entry
// point checks its arguments and turns exceptions into a status and a thread-local message.
#include "ember/ember.h"

#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "api/model_impl.hpp"
#include "ember/ember.hpp"

struct ember_model {
    ember::Model model;
};

struct ember_session {
    ember::Session session;
    std::string stream_text;  // the last ember_session_detokenize_stream result
};

struct ember_sampler {
    ember::Sampler sampler;
};

namespace {

thread_local std::string t_last_error;

// Records the message of a failure; never throws (a message that cannot be stored is dropped).
ember_status set_error(ember_status status, std::string_view where, std::string_view what) noexcept {
    try {
        t_last_error.assign(where);
        if (!where.empty() && !what.empty()) t_last_error.append(": ");
        t_last_error.append(what);
    } catch (...) {
        t_last_error.clear();
    }
    return status;
}

ember_status invalid(const char* fn, std::string_view what) noexcept {
    return set_error(EMBER_ERROR_INVALID_ARGUMENT, fn, what);
}

// Runs `body` (returning an ember_status) with every exception turned into a status.
template <class Body>
ember_status guarded(const char* fn, Body&& body) noexcept {
    try {
        return body();
    } catch (const ember::Error& e) {
        return set_error(EMBER_ERROR, "", e.what());  // ember's messages name what was wrong
    } catch (const std::bad_alloc&) {
        return set_error(EMBER_ERROR_OUT_OF_MEMORY, fn, "out of memory");
    } catch (const std::exception& e) {
        return set_error(EMBER_ERROR_INTERNAL, fn, e.what());
    } catch (...) {
        return set_error(EMBER_ERROR_INTERNAL, fn, "unknown exception");
    }
}

ember_status from_status(ember::Status s) noexcept {
    switch (s) {
        case ember::Status::ok: return EMBER_OK;
        case ember::Status::context_full: return EMBER_CONTEXT_FULL;
        case ember::Status::cancelled: return EMBER_CANCELLED;
        case ember::Status::invalid_input: return EMBER_INVALID_INPUT;
        case ember::Status::cache_full: return EMBER_CONTEXT_FULL;  // only an Engine's pool (not in the C API)
    }
    return EMBER_ERROR_INTERNAL;
}

// A step's status: EMBER_INVALID_INPUT etc. are outcomes, but the message helps too.
ember_status step_status(const char* fn, ember::Status s) noexcept {
    const ember_status status = from_status(s);
    if (status != EMBER_OK) set_error(status, fn, ember::to_string(s));
    return status;
}

// The caller's buffer convention: the size goes to *needed; the data only when it fits.
// (Called inside guarded(): composing the message may throw.)
template <class T>
ember_status write_array(const char* fn, const T* data, std::size_t n, T* out,
                         std::size_t capacity, std::size_t* needed) {
    *needed = n;
    if (capacity < n) {
        return set_error(EMBER_ERROR_BUFFER_TOO_SMALL, fn,
                         "the buffer holds " + std::to_string(capacity) + " elements, " +
                             std::to_string(n) + " are needed");
    }
    if (n > 0) std::memcpy(out, data, n * sizeof(T));
    return EMBER_OK;
}

ember_status write_text(const char* fn, std::string_view text, char* out, std::size_t capacity,
                        std::size_t* length) {
    *length = text.size();
    if (capacity < text.size() + 1) {
        return set_error(EMBER_ERROR_BUFFER_TOO_SMALL, fn,
                         "the buffer holds " + std::to_string(capacity) + " bytes, " +
                             std::to_string(text.size() + 1) + " are needed");
    }
    std::memcpy(out, text.data(), text.size());
    out[text.size()] = '\0';
    return EMBER_OK;
}

// Checks an output buffer: NULL only with capacity 0, and a size pointer.
bool bad_buffer(const void* out, std::size_t capacity, const std::size_t* size) noexcept {
    return size == nullptr || (out == nullptr && capacity > 0);
}

ember::ModelOptions model_options(const ember_model_options* o) {
    ember::ModelOptions options;
    if (o == nullptr) return options;
    options.threads = o->threads;
    if (o->on_progress != nullptr) {
        options.on_progress = [fn = o->on_progress, user = o->progress_user_data](float f) { fn(f, user); };
    }
    return options;
}

static_assert(EMBER_STOP_EOG == static_cast<int>(ember::StopReason::eog) &&
              EMBER_STOP_STRING == static_cast<int>(ember::StopReason::stop_string) &&
              EMBER_STOP_MAX_TOKENS == static_cast<int>(ember::StopReason::max_tokens) &&
              EMBER_STOP_CONTEXT_FULL == static_cast<int>(ember::StopReason::context_full) &&
              EMBER_STOP_CANCELLED == static_cast<int>(ember::StopReason::cancelled),
              "ember_stop_reason mirrors ember::StopReason");

// Runs a typed metadata getter: EMBER_ERROR_NOT_FOUND for an absent key.
template <class Get, class Use>
ember_status meta_call(const char* fn, const ember_model* model, const char* key, const void* out, Get get, Use use) {
    if (model == nullptr || key == nullptr || out == nullptr) return invalid(fn, "model, key and the output must not be NULL");
    return guarded(fn, [&] {
        auto value = get(model->model, std::string_view(key));
        if (!value) return set_error(EMBER_ERROR_NOT_FOUND, fn, std::string("no metadata key '") + key + "'");
        return use(*value);
    });
}

ember::SessionOptions session_options(const ember_session_options* options) {
    ember::SessionOptions so;
    if (options == nullptr) return so;
    so.context = options->context;
    so.threads = options->threads;
    so.batch = options->batch;
    so.logits_all = options->logits_all;
    so.context_shift = options->context_shift;
    so.n_keep = options->n_keep;
    return so;
}

std::string_view view(const char* s) noexcept { return s ? std::string_view(s) : std::string_view(); }

}  // namespace

extern "C" {

const char* ember_status_name(ember_status status) {
    switch (status) {
        case EMBER_OK: return "ok";
        case EMBER_CONTEXT_FULL: return "context_full";
        case EMBER_CANCELLED: return "cancelled";
        case EMBER_INVALID_INPUT: return "invalid_input";
        case EMBER_ERROR: return "error";
        case EMBER_ERROR_INVALID_ARGUMENT: return "error_invalid_argument";
        case EMBER_ERROR_BUFFER_TOO_SMALL: return "error_buffer_too_small";
        case EMBER_ERROR_OUT_OF_MEMORY: return "error_out_of_memory";
        case EMBER_ERROR_INTERNAL: return "error_internal";
        case EMBER_ERROR_NOT_FOUND: return "error_not_found";
    }
    return "unknown";
}

const char* ember_last_error(void) { return t_last_error.c_str(); }

const char* ember_version(void) { return ember::kVersion; }

// ---- model ------------------------------------------------------------------------------------

ember_model_options ember_model_options_default(void) {
    return ember_model_options{.threads = 0, .on_progress = nullptr, .progress_user_data = nullptr};
}

ember_status ember_model_load(const char* path, const ember_model_options* options,
                              ember_model** model) {
    constexpr const char* fn = "ember_model_load";
    if (path == nullptr || model == nullptr) return invalid(fn, "path and model must not be NULL");
    return guarded(fn, [&] {
        *model = new ember_model{ember::Model::load(path, model_options(options))};
        return EMBER_OK;
    });
}

ember_status ember_model_load_from_memory(const void* data, size_t size,
                                          const ember_model_options* options, ember_model** model) {
    constexpr const char* fn = "ember_model_load_from_memory";
    if ((data == nullptr && size > 0) || model == nullptr) {
        return invalid(fn, "data (with a size) and model must not be NULL");
    }
    return guarded(fn, [&] {
        *model = new ember_model{ember::Model::load_from_memory(data, size, model_options(options))};
        return EMBER_OK;
    });
}

void ember_model_free(ember_model* model) { delete model; }

ember_status ember_model_get_info(const ember_model* model, ember_model_info* info) {
    if (model == nullptr || info == nullptr) return invalid("ember_model_get_info", "model and info must not be NULL");
    const ember::ModelInfo& i = model->model.info();
    *info = ember_model_info{.name = i.name.c_str(),
                             .architecture = i.architecture.c_str(),
                             .file_type = i.file_type.c_str(),
                             .n_vocab = i.n_vocab,
                             .n_ctx_train = i.n_ctx_train,
                             .n_embd = i.n_embd,
                             .n_layer = i.n_layer,
                             .n_head = i.n_head,
                             .n_head_kv = i.n_head_kv,
                             .n_ff = i.n_ff,
                             .n_params = i.n_params,
                             .weight_bytes = i.weight_bytes};
    return EMBER_OK;
}

int32_t ember_model_n_vocab(const ember_model* model) {
    return model ? static_cast<int32_t>(model->model.n_vocab()) : -1;  // token ids are int32
}
ember_token ember_model_bos(const ember_model* model) { return model ? model->model.bos() : -1; }
ember_token ember_model_eos(const ember_model* model) { return model ? model->model.eos() : -1; }
bool ember_model_is_end_of_generation(const ember_model* model, ember_token token) {
    return model != nullptr && model->model.is_end_of_generation(token);
}

ember_status ember_tokenize(const ember_model* model, const char* text, size_t text_len,
                            bool add_bos, bool parse_special, ember_token* tokens, size_t capacity,
                            size_t* n_tokens) {
    constexpr const char* fn = "ember_tokenize";
    if (model == nullptr || (text == nullptr && text_len > 0) || bad_buffer(tokens, capacity, n_tokens)) {
        return invalid(fn, "model, text (with a length), tokens (with a capacity) and n_tokens must not be NULL");
    }
    return guarded(fn, [&] {
        const std::vector<ember::Token> ids = model->model.tokenize(
            std::string_view(text ? text : "", text_len), {.add_bos = add_bos, .parse_special = parse_special});
        return write_array(fn, ids.data(), ids.size(), tokens, capacity, n_tokens);
    });
}

ember_status ember_detokenize(const ember_model* model, const ember_token* tokens, size_t n_tokens,
                              char* text, size_t capacity, size_t* length) {
    constexpr const char* fn = "ember_detokenize";
    if (model == nullptr || (tokens == nullptr && n_tokens > 0) || bad_buffer(text, capacity, length)) {
        return invalid(fn, "model, tokens (with a count), text (with a capacity) and length must not be NULL");
    }
    return guarded(fn, [&] {
        const std::string s = model->model.detokenize(std::vector<ember::Token>(tokens, tokens + n_tokens));
        return write_text(fn, s, text, capacity, length);
    });
}

ember_status ember_token_to_piece(const ember_model* model, ember_token token, char* text,
                                  size_t capacity, size_t* length) {
    constexpr const char* fn = "ember_token_to_piece";
    if (model == nullptr || bad_buffer(text, capacity, length)) {
        return invalid(fn, "model, text (with a capacity) and length must not be NULL");
    }
    return guarded(fn, [&] { return write_text(fn, model->model.token_to_piece(token), text, capacity, length); });
}

// ---- GGUF metadata ----------------------------------------------------------------------------

size_t ember_model_meta_count(const ember_model* model) {
    return model ? ember::detail::ModelAccess::impl(model->model)->file.metadata().size() : 0;
}

ember_status ember_model_meta_key(const ember_model* model, size_t index, char* key, size_t capacity,
                                  size_t* length) {
    constexpr const char* fn = "ember_model_meta_key";
    if (model == nullptr || bad_buffer(key, capacity, length)) {
        return invalid(fn, "model, key (with a capacity) and length must not be NULL");
    }
    const auto& metadata = ember::detail::ModelAccess::impl(model->model)->file.metadata();
    if (index >= metadata.size()) {
        return invalid(fn, "index " + std::to_string(index) + " is past the " + std::to_string(metadata.size()) + " keys");
    }
    return guarded(fn, [&] { return write_text(fn, metadata[index].key, key, capacity, length); });
}

ember_meta_type ember_model_meta_type(const ember_model* model, const char* key) {
    if (model == nullptr || key == nullptr) return EMBER_META_ABSENT;
    switch (model->model.metadata_type(key)) {
        case ember::MetadataType::absent: return EMBER_META_ABSENT;
        case ember::MetadataType::integer: return EMBER_META_INTEGER;
        case ember::MetadataType::floating: return EMBER_META_FLOAT;
        case ember::MetadataType::boolean: return EMBER_META_BOOL;
        case ember::MetadataType::string: return EMBER_META_STRING;
        case ember::MetadataType::array: return EMBER_META_ARRAY;
    }
    return EMBER_META_ABSENT;
}

ember_status ember_model_meta_int(const ember_model* model, const char* key, int64_t* value) {
    return meta_call("ember_model_meta_int", model, key, value,
                     [](const ember::Model& m, std::string_view k) { return m.metadata_int(k); },
                     [&](std::int64_t v) { *value = v; return EMBER_OK; });
}

ember_status ember_model_meta_float(const ember_model* model, const char* key, double* value) {
    return meta_call("ember_model_meta_float", model, key, value,
                     [](const ember::Model& m, std::string_view k) { return m.metadata_float(k); },
                     [&](double v) { *value = v; return EMBER_OK; });
}

ember_status ember_model_meta_bool(const ember_model* model, const char* key, bool* value) {
    return meta_call("ember_model_meta_bool", model, key, value,
                     [](const ember::Model& m, std::string_view k) { return m.metadata_bool(k); },
                     [&](bool v) { *value = v; return EMBER_OK; });
}

ember_status ember_model_meta_string(const ember_model* model, const char* key, char* value, size_t capacity,
                                     size_t* length) {
    constexpr const char* fn = "ember_model_meta_string";
    if (bad_buffer(value, capacity, length)) return invalid(fn, "value (with a capacity) and length must not be NULL");
    return meta_call(fn, model, key, length,
                     [](const ember::Model& m, std::string_view k) { return m.metadata_string(k); },
                     [&](const std::string& v) { return write_text(fn, v, value, capacity, length); });
}

ember_status ember_model_meta_array_length(const ember_model* model, const char* key, size_t* n) {
    constexpr const char* fn = "ember_model_meta_array_length";
    if (model == nullptr || key == nullptr || n == nullptr) return invalid(fn, "model, key and n must not be NULL");
    return guarded(fn, [&] {
        const ember::gguf::Value* v = ember::detail::ModelAccess::impl(model->model)->file.find(key);
        if (v == nullptr) return set_error(EMBER_ERROR_NOT_FOUND, fn, std::string("no metadata key '") + key + "'");
        if (v->type != ember::gguf::ValueType::array) {
            return set_error(EMBER_ERROR, fn, std::string("metadata key '") + key + "' is not an array");
        }
        *n = v->as_array(key).items.size();
        return EMBER_OK;
    });
}

ember_status ember_model_meta_int_array(const ember_model* model, const char* key, int64_t* values, size_t capacity,
                                        size_t* n) {
    constexpr const char* fn = "ember_model_meta_int_array";
    if (bad_buffer(values, capacity, n)) return invalid(fn, "values (with a capacity) and n must not be NULL");
    return meta_call(fn, model, key, n,
                     [](const ember::Model& m, std::string_view k) { return m.metadata_int_array(k); },
                     [&](const std::vector<std::int64_t>& v) {
                         return write_array(fn, v.data(), v.size(), values, capacity, n);
                     });
}

ember_status ember_model_meta_float_array(const ember_model* model, const char* key, double* values,
                                          size_t capacity, size_t* n) {
    constexpr const char* fn = "ember_model_meta_float_array";
    if (bad_buffer(values, capacity, n)) return invalid(fn, "values (with a capacity) and n must not be NULL");
    return meta_call(fn, model, key, n,
                     [](const ember::Model& m, std::string_view k) { return m.metadata_float_array(k); },
                     [&](const std::vector<double>& v) { return write_array(fn, v.data(), v.size(), values, capacity, n); });
}

ember_status ember_model_meta_string_at(const ember_model* model, const char* key, size_t index, char* value,
                                        size_t capacity, size_t* length) {
    constexpr const char* fn = "ember_model_meta_string_at";
    if (bad_buffer(value, capacity, length)) return invalid(fn, "value (with a capacity) and length must not be NULL");
    return meta_call(fn, model, key, length,
                     [](const ember::Model& m, std::string_view k) { return m.metadata_string_array(k); },
                     [&](const std::vector<std::string>& v) {
                         if (index >= v.size()) {
                             return set_error(EMBER_ERROR_INVALID_ARGUMENT, fn,
                                              "index " + std::to_string(index) + " is past the array's " +
                                                  std::to_string(v.size()) + " strings");
                         }
                         return write_text(fn, v[index], value, capacity, length);
                     });
}

// ---- memory and embeddings --------------------------------------------------------------------

ember_status ember_estimate_memory(const char* path, const ember_session_options* options,
                                   ember_memory_estimate* estimate) {
    constexpr const char* fn = "ember_estimate_memory";
    if (path == nullptr || estimate == nullptr) return invalid(fn, "path and estimate must not be NULL");
    return guarded(fn, [&] {
        const ember::MemoryEstimate e = ember::Model::estimate_memory(path, session_options(options));
        *estimate = ember_memory_estimate{.weight_bytes = e.weight_bytes,
                                          .kv_bytes_per_token_f32 = e.kv_bytes_per_token_f32,
                                          .kv_bytes_per_token_f16 = e.kv_bytes_per_token_f16,
                                          .kv_bytes_per_token_q8_0 = e.kv_bytes_per_token_q8_0,
                                          .context = e.context,
                                          .scratch_bytes = e.scratch_bytes,
                                          .session_bytes = e.session_bytes,
                                          .total_bytes = e.total_bytes};
        return EMBER_OK;
    });
}

ember_embed_options ember_embed_options_default(void) {
    const ember::EmbedOptions d;
    return ember_embed_options{.pooling = EMBER_POOLING_MEAN,
                               .normalize = d.normalize,
                               .add_bos = d.add_bos,
                               .threads = d.threads,
                               .batch = d.batch};
}

ember_status ember_embed(const ember_model* model, const char* const* texts, size_t n_texts,
                         const ember_embed_options* options, float* embeddings, size_t capacity, size_t* n_floats) {
    constexpr const char* fn = "ember_embed";
    if (model == nullptr || (texts == nullptr && n_texts > 0) || bad_buffer(embeddings, capacity, n_floats)) {
        return invalid(fn, "model, texts (with a count), embeddings (with a capacity) and n_floats must not be NULL");
    }
    for (std::size_t i = 0; i < n_texts; ++i) {
        if (texts[i] == nullptr) return invalid(fn, "a text is NULL");
    }
    const ember_embed_options o = options ? *options : ember_embed_options_default();
    if (o.pooling != EMBER_POOLING_MEAN && o.pooling != EMBER_POOLING_LAST) return invalid(fn, "unknown pooling");
    const auto n_embd = static_cast<std::size_t>(model->model.info().n_embd);
    if (n_texts > std::numeric_limits<std::size_t>::max() / std::max<std::size_t>(n_embd, 1)) {
        return invalid(fn, "too many texts");
    }
    *n_floats = n_texts * n_embd;
    if (capacity < *n_floats) {
        return guarded(fn, [&] {
            return set_error(EMBER_ERROR_BUFFER_TOO_SMALL, fn,
                             "the buffer holds " + std::to_string(capacity) + " floats, " +
                                 std::to_string(*n_floats) + " are needed");
        });
    }
    return guarded(fn, [&] {
        ember::EmbedOptions eo;
        eo.pooling = o.pooling == EMBER_POOLING_LAST ? ember::EmbedOptions::Pooling::last
                                                     : ember::EmbedOptions::Pooling::mean;
        eo.normalize = o.normalize;
        eo.add_bos = o.add_bos;
        eo.threads = o.threads;
        eo.batch = o.batch;
        const std::vector<std::vector<float>> vectors =
            model->model.embed(std::vector<std::string>(texts, texts + n_texts), eo);
        for (std::size_t i = 0; i < vectors.size(); ++i) {
            std::memcpy(embeddings + i * n_embd, vectors[i].data(), n_embd * sizeof(float));
        }
        return EMBER_OK;
    });
}

// ---- chat template ----------------------------------------------------------------------------

ember_chat_options ember_chat_options_default(void) {
    return ember_chat_options{.add_generation_prompt = true, .tools = nullptr, .variables = nullptr,
                              .template_override = nullptr};
}

ember_status ember_apply_chat_template(const ember_model* model, const ember_chat_message* messages,
                                       size_t n_messages, const ember_chat_options* options, char* text,
                                       size_t capacity, size_t* length) {
    constexpr const char* fn = "ember_apply_chat_template";
    if (model == nullptr || (messages == nullptr && n_messages > 0) || bad_buffer(text, capacity, length)) {
        return invalid(fn, "model, messages (with a count), text (with a capacity) and length must not be NULL");
    }
    for (std::size_t i = 0; i < n_messages; ++i) {
        if (messages[i].tool_calls == nullptr && messages[i].n_tool_calls > 0) {
            return invalid(fn, "a message's tool_calls is NULL with n_tool_calls > 0");
        }
    }
    return guarded(fn, [&] {
        std::vector<ember::ChatMessage> conversation(n_messages);
        for (std::size_t i = 0; i < n_messages; ++i) {
            const ember_chat_message& in = messages[i];
            ember::ChatMessage& out = conversation[i];
            out.role = view(in.role);
            out.content = view(in.content);
            for (std::size_t j = 0; j < in.n_tool_calls; ++j) {
                const ember_tool_call& call = in.tool_calls[j];
                out.tool_calls.push_back({.id = std::string(view(call.id)),
                                          .name = std::string(view(call.name)),
                                          .arguments = std::string(view(call.arguments))});
            }
            out.tool_call_id = view(in.tool_call_id);
            out.name = view(in.name);
            out.reasoning_content = view(in.reasoning_content);
        }
        const ember_chat_options o = options ? *options : ember_chat_options_default();
        ember::ChatTemplateOptions co;
        co.add_generation_prompt = o.add_generation_prompt;
        co.tools = view(o.tools);
        co.variables = view(o.variables);
        co.template_override = view(o.template_override);
        return write_text(fn, model->model.apply_chat_template(conversation, co), text, capacity, length);
    });
}

// ---- session ----------------------------------------------------------------------------------

ember_session_options ember_session_options_default(void) {
    const ember::SessionOptions d;
    return ember_session_options{.context = d.context,
                                 .threads = d.threads,
                                 .batch = d.batch,
                                 .logits_all = d.logits_all,
                                 .context_shift = d.context_shift,
                                 .n_keep = d.n_keep};
}

ember_status ember_session_create(const ember_model* model, const ember_session_options* options,
                                  ember_session** session) {
    constexpr const char* fn = "ember_session_create";
    if (model == nullptr || session == nullptr) return invalid(fn, "model and session must not be NULL");
    return guarded(fn, [&] {
        *session = new ember_session{ember::Session(model->model, session_options(options)), {}};
        return EMBER_OK;
    });
}

void ember_session_free(ember_session* session) { delete session; }

ember_status ember_session_prefill(ember_session* session, const ember_token* tokens, size_t n_tokens) {
    constexpr const char* fn = "ember_session_prefill";
    if (session == nullptr || (tokens == nullptr && n_tokens > 0)) {
        return invalid(fn, "session and tokens (with a count) must not be NULL");
    }
    return guarded(fn, [&] {
        return step_status(fn, session->session.prefill(std::span<const ember::Token>(tokens, n_tokens)));
    });
}

ember_status ember_session_decode(ember_session* session, ember_token token) {
    constexpr const char* fn = "ember_session_decode";
    if (session == nullptr) return invalid(fn, "session must not be NULL");
    return guarded(fn, [&] { return step_status(fn, session->session.decode(token)); });
}

const float* ember_session_logits(const ember_session* session, size_t* n_logits) {
    const std::span<const float> logits = session ? session->session.logits() : std::span<const float>();
    if (n_logits != nullptr) *n_logits = logits.size();
    return logits.empty() ? nullptr : logits.data();
}

ember_status ember_session_logits_at(const ember_session* session, int32_t i, const float** logits,
                                     size_t* n_logits) {
    constexpr const char* fn = "ember_session_logits_at";
    if (session == nullptr || logits == nullptr) return invalid(fn, "session and logits must not be NULL");
    return guarded(fn, [&] {
        const std::span<const float> row = session->session.logits_at(i);
        *logits = row.data();
        if (n_logits != nullptr) *n_logits = row.size();
        return EMBER_OK;
    });
}

ember_status ember_session_tokens(const ember_session* session, ember_token* tokens, size_t capacity,
                                  size_t* n_tokens) {
    constexpr const char* fn = "ember_session_tokens";
    if (session == nullptr || bad_buffer(tokens, capacity, n_tokens)) {
        return invalid(fn, "session, tokens (with a capacity) and n_tokens must not be NULL");
    }
    return guarded(fn, [&] {
        const std::vector<ember::Token>& t = session->session.tokens();
        return write_array(fn, t.data(), t.size(), tokens, capacity, n_tokens);
    });
}

int32_t ember_session_n_past(const ember_session* session) { return session ? session->session.n_past() : -1; }
int32_t ember_session_context(const ember_session* session) { return session ? session->session.context() : -1; }

ember_status ember_session_detokenize_stream(ember_session* session, ember_token token, const char** text,
                                             size_t* length) {
    constexpr const char* fn = "ember_session_detokenize_stream";
    if (session == nullptr || text == nullptr) return invalid(fn, "session and text must not be NULL");
    return guarded(fn, [&] {
        session->stream_text = session->session.detokenize_stream(token);
        *text = session->stream_text.c_str();
        if (length != nullptr) *length = session->stream_text.size();
        return EMBER_OK;
    });
}

ember_status ember_session_set_cancel_callback(ember_session* session, ember_cancel_callback callback,
                                               void* user_data) {
    constexpr const char* fn = "ember_session_set_cancel_callback";
    if (session == nullptr) return invalid(fn, "session must not be NULL");
    return guarded(fn, [&] {
        if (callback == nullptr) {
            session->session.set_cancel_callback({});
        } else {
            session->session.set_cancel_callback([callback, user_data] { return callback(user_data); });
        }
        return EMBER_OK;
    });
}

ember_status ember_session_set_progress_callback(ember_session* session, ember_progress_callback callback,
                                                 void* user_data) {
    constexpr const char* fn = "ember_session_set_progress_callback";
    if (session == nullptr) return invalid(fn, "session must not be NULL");
    return guarded(fn, [&] {
        if (callback == nullptr) {
            session->session.set_progress_callback({});
        } else {
            session->session.set_progress_callback(
                [callback, user_data](std::int64_t done, std::int64_t total) { callback(done, total, user_data); });
        }
        return EMBER_OK;
    });
}

ember_status ember_session_reset(ember_session* session) {
    if (session == nullptr) return invalid("ember_session_reset", "session must not be NULL");
    session->session.reset();
    return EMBER_OK;
}

ember_status ember_session_get_metrics(const ember_session* session, ember_metrics* metrics) {
    if (session == nullptr || metrics == nullptr) {
        return invalid("ember_session_get_metrics", "session and metrics must not be NULL");
    }
    const ember::Metrics& m = session->session.metrics();
    *metrics = ember_metrics{.prompt_tokens = m.prompt_tokens,
                             .generated_tokens = m.generated_tokens,
                             .context_shifts = m.context_shifts,
                             .prefill_seconds = m.prefill_seconds,
                             .decode_seconds = m.decode_seconds,
                             .ttft_seconds = m.ttft_seconds,
                             .last_ttft_seconds = m.last_ttft_seconds,
                             .last_prompt_tokens = m.last_prompt_tokens,
                             .prefills = m.prefills};
    return EMBER_OK;
}

ember_status ember_session_save_file(const ember_session* session, const char* path,
                                     const ember_sampler* sampler) {
    constexpr const char* fn = "ember_session_save_file";
    if (session == nullptr || path == nullptr) return invalid(fn, "session and path must not be NULL");
    return guarded(fn, [&] {
        session->session.save_state_file(path, sampler ? &sampler->sampler : nullptr);
        return EMBER_OK;
    });
}

ember_status ember_session_restore_file(ember_session* session, const char* path, ember_sampler* sampler) {
    constexpr const char* fn = "ember_session_restore_file";
    if (session == nullptr || path == nullptr) return invalid(fn, "session and path must not be NULL");
    return guarded(fn, [&] {
        session->session.restore_state_file(path, sampler ? &sampler->sampler : nullptr);
        return EMBER_OK;
    });
}

// ---- sampler ----------------------------------------------------------------------------------

ember_sampler_options ember_sampler_options_default(void) {
    const ember::SamplerOptions d;
    return ember_sampler_options{.temperature = d.temperature,
                                 .top_k = d.top_k,
                                 .top_p = d.top_p,
                                 .min_p = d.min_p,
                                 .typical_p = d.typical_p,
                                 .repeat_penalty = d.repeat_penalty,
                                 .frequency_penalty = d.frequency_penalty,
                                 .presence_penalty = d.presence_penalty,
                                 .penalty_last_n = d.penalty_last_n,
                                 .seed = d.seed,
                                 .logit_bias = nullptr,
                                 .n_logit_bias = 0};
}

ember_status ember_sampler_create(const ember_sampler_options* options, ember_sampler** sampler) {
    constexpr const char* fn = "ember_sampler_create";
    if (sampler == nullptr) return invalid(fn, "sampler must not be NULL");
    if (options != nullptr && options->logit_bias == nullptr && options->n_logit_bias > 0) {
        return invalid(fn, "logit_bias is NULL with n_logit_bias > 0");
    }
    return guarded(fn, [&] {
        const ember_sampler_options o = options ? *options : ember_sampler_options_default();
        ember::SamplerOptions so;
        so.temperature = o.temperature;
        so.top_k = o.top_k;
        so.top_p = o.top_p;
        so.min_p = o.min_p;
        so.typical_p = o.typical_p;
        so.repeat_penalty = o.repeat_penalty;
        so.frequency_penalty = o.frequency_penalty;
        so.presence_penalty = o.presence_penalty;
        so.penalty_last_n = o.penalty_last_n;
        so.seed = o.seed;
        for (std::size_t i = 0; i < o.n_logit_bias; ++i) so.logit_bias.emplace_back(o.logit_bias[i].token, o.logit_bias[i].bias);
        *sampler = new ember_sampler{ember::Sampler(std::move(so))};
        return EMBER_OK;
    });
}

void ember_sampler_free(ember_sampler* sampler) { delete sampler; }

ember_status ember_sampler_sample(ember_sampler* sampler, const float* logits, size_t n_logits,
                                  ember_token* token) {
    constexpr const char* fn = "ember_sampler_sample";
    if (sampler == nullptr || logits == nullptr || n_logits == 0 || token == nullptr) {
        return invalid(fn, "sampler, logits (with a count > 0) and token must not be NULL");
    }
    return guarded(fn, [&] {
        *token = sampler->sampler.sample(std::span<const float>(logits, n_logits));
        return EMBER_OK;
    });
}

ember_status ember_sampler_accept(ember_sampler* sampler, ember_token token) {
    constexpr const char* fn = "ember_sampler_accept";
    if (sampler == nullptr) return invalid(fn, "sampler must not be NULL");
    return guarded(fn, [&] {
        sampler->sampler.accept(token);
        return EMBER_OK;
    });
}

ember_status ember_sampler_last(const ember_sampler* sampler, float* probability, float* entropy) {
    if (sampler == nullptr) return invalid("ember_sampler_last", "sampler must not be NULL");
    if (probability != nullptr) *probability = sampler->sampler.last().probability;
    if (entropy != nullptr) *entropy = sampler->sampler.last().entropy;
    return EMBER_OK;
}

ember_status ember_sampler_reset(ember_sampler* sampler) {
    if (sampler == nullptr) return invalid("ember_sampler_reset", "sampler must not be NULL");
    sampler->sampler.reset();
    return EMBER_OK;
}

// ---- log-probabilities -----------------------------------------------------------------------

ember_status ember_logprobs(const float* logits, size_t n_logits, ember_token token, float* logprob,
                            ember_token_logprob* top, size_t n_top, size_t* n_written) {
    constexpr const char* fn = "ember_logprobs";
    if (logits == nullptr || logprob == nullptr || (top == nullptr && n_top > 0)) {
        return invalid(fn, "logits, logprob and top (with n_top > 0) must not be NULL");
    }
    if (n_top > static_cast<std::size_t>(std::numeric_limits<int>::max())) return invalid(fn, "n_top is too large");
    return guarded(fn, [&] {
        const ember::TokenLogprobs r =
            ember::logprobs(std::span<const float>(logits, n_logits), token, static_cast<int>(n_top));
        *logprob = r.logprob;
        for (std::size_t i = 0; i < r.top.size(); ++i) top[i] = {r.top[i].token, r.top[i].logprob};
        if (n_written != nullptr) *n_written = r.top.size();
        return EMBER_OK;
    });
}

// ---- generation -------------------------------------------------------------------------------

ember_generate_options ember_generate_options_default(void) {
    return ember_generate_options{.max_tokens = -1, .stop = nullptr, .n_stop = 0, .on_token = nullptr,
                                  .user_data = nullptr};
}

ember_status ember_session_generate(ember_session* session, ember_sampler* sampler,
                                    const ember_generate_options* options, ember_generate_result* result) {
    constexpr const char* fn = "ember_session_generate";
    if (session == nullptr || sampler == nullptr) return invalid(fn, "session and sampler must not be NULL");
    const ember_generate_options o = options ? *options : ember_generate_options_default();
    if (o.stop == nullptr && o.n_stop > 0) return invalid(fn, "stop is NULL with n_stop > 0");
    for (std::size_t i = 0; i < o.n_stop; ++i) {
        if (o.stop[i] == nullptr) return invalid(fn, "a stop string is NULL");
    }
    return guarded(fn, [&] {
        ember::GenerateOptions go;
        go.max_tokens = o.max_tokens;
        go.stop.assign(o.stop, o.stop + o.n_stop);
        if (o.on_token != nullptr) {
            go.on_token = [cb = o.on_token, user = o.user_data](ember::Token t, std::string_view text) {
                return cb(t, text.data(), text.size(), user);
            };
        }
        const ember::GenerateResult r = session->session.generate(sampler->sampler, go);
        if (result != nullptr) {
            int32_t stop_index = -1;
            if (r.stop_reason == ember::StopReason::stop_string) {
                for (std::size_t i = 0; i < go.stop.size(); ++i) {
                    if (go.stop[i] == r.stop_string) {
                        stop_index = static_cast<int32_t>(i);
                        break;
                    }
                }
            }
            *result = ember_generate_result{.stop_reason = static_cast<ember_stop_reason>(r.stop_reason),
                                            .status = from_status(r.status),
                                            .n_tokens = static_cast<int64_t>(r.tokens.size()),
                                            .stop_index = stop_index,
                                            .last_token_pending = r.last_token_pending};
        }
        return EMBER_OK;
    });
}

}  // extern "C"

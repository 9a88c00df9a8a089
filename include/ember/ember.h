/* ember/ember.h: the C API of ember, for C programs and for bindings (Python ctypes, Node,
 * C#, Go, Rust, Swift). It wraps the C++ API (ember/ember.hpp) one to one; the C++ headers
 * document the behaviour in full.
 *
 *   ember_model* model = NULL;
 *   if (ember_model_load("model.gguf", NULL, &model) != EMBER_OK) {
 *       fprintf(stderr, "%s\n", ember_last_error());
 *       return 1;
 *   }
 *
 * Conventions
 *  - Handles (ember_model, ember_session, ember_sampler) are opaque; create them with the
 *    *_load / *_create functions and release them with the matching *_free (NULL is ignored).
 *    A session keeps its model alive: the two may be freed in any order.
 *  - Functions that can fail return an ember_status. On anything but EMBER_OK,
 *    ember_last_error() has a one-line message for the calling thread, and the outputs are
 *    left unchanged unless documented otherwise. No C++ exception ever crosses this API.
 *  - Option structs are filled by their *_default() function, then changed field by field;
 *    passing NULL for an options pointer means the defaults.
 *  - Outputs of variable size use a caller's buffer: pass the buffer, its capacity (elements,
 *    or bytes for text) and a pointer that receives the size needed. When the capacity is too
 *    small the call returns EMBER_ERROR_BUFFER_TOO_SMALL, writes nothing to the buffer and
 *    still reports the size, so a NULL buffer with capacity 0 asks for the size. Text is
 *    UTF-8 and NUL-terminated, so it needs a capacity of at least its length + 1.
 *  - Every pointer, count and size is checked (NULL where data is needed, counts that do not
 *    fit): such calls return EMBER_ERROR_INVALID_ARGUMENT.
 *  - Thread safety is the C++ API's: a model may be used from many threads at once; a
 *    session and a sampler by one thread at a time.
 */
#ifndef EMBER_EMBER_H
#define EMBER_EMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* In C++ the enums get int as their fixed type, so that any int a C caller passes is a valid
 * value to read (and an unknown one is rejected, not undefined behaviour). */
#ifdef __cplusplus
#define EMBER_ENUM_INT : int
#else
#define EMBER_ENUM_INT
#endif

/* ---- errors ------------------------------------------------------------------------------ */

typedef enum ember_status EMBER_ENUM_INT {
    EMBER_OK = 0,
    /* Outcomes of a generation step (ember::Status); the session stays consistent. */
    EMBER_CONTEXT_FULL = 1,  /* no room left in the context; nothing was changed */
    EMBER_CANCELLED = 2,     /* the cancel callback asked to stop */
    EMBER_INVALID_INPUT = 3, /* a token id outside the vocabulary, or nothing to process */
    /* Failures; ember_last_error() says what went wrong. */
    EMBER_ERROR = 10,                  /* an ember::Error: bad file, option, input, template... */
    EMBER_ERROR_INVALID_ARGUMENT = 11, /* a NULL pointer, a count or size out of range */
    EMBER_ERROR_BUFFER_TOO_SMALL = 12, /* the size needed was reported; nothing was written */
    EMBER_ERROR_OUT_OF_MEMORY = 13,
    EMBER_ERROR_INTERNAL = 14,         /* an unexpected failure inside ember (a bug) */
    EMBER_ERROR_NOT_FOUND = 15         /* no such metadata key */
} ember_status;

/* A short name for a status ("ok", "context_full", "error_invalid_argument", ...). */
EMBER_API const char* ember_status_name(ember_status status);

/* The message of the last call that failed on this thread ("" when none has). Valid until the
 * next failing call on the same thread. */
EMBER_API const char* ember_last_error(void);

/* The library's version, "MAJOR.MINOR.PATCH". */
EMBER_API const char* ember_version(void);

/* ---- model -------------------------------------------------------------------------------- */

typedef int32_t ember_token;
typedef struct ember_model ember_model;

typedef struct ember_model_options {
    int32_t threads; /* worker threads for sessions that do not set their own; 0: all */
    /* Called during loading with the fraction done (0 to 1); may be NULL. */
    void (*on_progress)(float fraction, void* user_data);
    void* progress_user_data;
} ember_model_options;

EMBER_API ember_model_options ember_model_options_default(void);

/* Loads a GGUF file (memory-mapped). `options` may be NULL. On success *model is a new
 * handle; free it with ember_model_free. */
EMBER_API ember_status ember_model_load(const char* path, const ember_model_options* options,
                                        ember_model** model);
/* Loads a GGUF image held in memory (the bytes are copied). */
EMBER_API ember_status ember_model_load_from_memory(const void* data, size_t size,
                                                    const ember_model_options* options,
                                                    ember_model** model);
EMBER_API void ember_model_free(ember_model* model);

/* What a model is (ember::ModelInfo). The strings belong to the model. */
typedef struct ember_model_info {
    const char* name;
    const char* architecture;
    const char* file_type;
    int64_t n_vocab, n_ctx_train, n_embd, n_layer, n_head, n_head_kv, n_ff;
    int64_t n_params, weight_bytes;
} ember_model_info;

EMBER_API ember_status ember_model_get_info(const ember_model* model, ember_model_info* info);

/* Vocabulary facts; these never fail on a valid model (-1 / false for a NULL model). */
EMBER_API int32_t ember_model_n_vocab(const ember_model* model);
EMBER_API ember_token ember_model_bos(const ember_model* model); /* -1 when none */
EMBER_API ember_token ember_model_eos(const ember_model* model); /* -1 when none */
EMBER_API bool ember_model_is_end_of_generation(const ember_model* model, ember_token token);

/* Text (text_len bytes of UTF-8) to token ids, into tokens[capacity]; *n_tokens receives the
 * count. add_bos and parse_special as ember::TokenizeOptions. */
EMBER_API ember_status ember_tokenize(const ember_model* model, const char* text, size_t text_len,
                                      bool add_bos, bool parse_special, ember_token* tokens,
                                      size_t capacity, size_t* n_tokens);

/* Token ids to text, into text[capacity]; *length receives the byte count (without the NUL).
 * An id outside the vocabulary is an EMBER_ERROR. */
EMBER_API ember_status ember_detokenize(const ember_model* model, const ember_token* tokens,
                                        size_t n_tokens, char* text, size_t capacity,
                                        size_t* length);

/* The text of one token inside a longer text (may be part of a UTF-8 sequence). */
EMBER_API ember_status ember_token_to_piece(const ember_model* model, ember_token token,
                                            char* text, size_t capacity, size_t* length);

/* ---- GGUF metadata ------------------------------------------------------------------------ */

/* The kind of a metadata value (ember::MetadataType). */
typedef enum ember_meta_type EMBER_ENUM_INT {
    EMBER_META_ABSENT = 0,
    EMBER_META_INTEGER = 1,
    EMBER_META_FLOAT = 2,
    EMBER_META_BOOL = 3,
    EMBER_META_STRING = 4,
    EMBER_META_ARRAY = 5
} ember_meta_type;

EMBER_API size_t ember_model_meta_count(const ember_model* model);
/* The key of entry `index` (in file order), into key[capacity]. */
EMBER_API ember_status ember_model_meta_key(const ember_model* model, size_t index, char* key,
                                            size_t capacity, size_t* length);
EMBER_API ember_meta_type ember_model_meta_type(const ember_model* model, const char* key);
/* Typed values; EMBER_ERROR_NOT_FOUND when the key is absent, EMBER_ERROR when it holds another
 * type (see Model::metadata_int etc.). */
EMBER_API ember_status ember_model_meta_int(const ember_model* model, const char* key, int64_t* value);
EMBER_API ember_status ember_model_meta_float(const ember_model* model, const char* key, double* value);
EMBER_API ember_status ember_model_meta_bool(const ember_model* model, const char* key, bool* value);
EMBER_API ember_status ember_model_meta_string(const ember_model* model, const char* key, char* value,
                                               size_t capacity, size_t* length);
/* Arrays: integers or numbers into values[capacity] (*n receives the count); strings one at a
 * time (ember_model_meta_array_length gives the count of any array). */
EMBER_API ember_status ember_model_meta_array_length(const ember_model* model, const char* key, size_t* n);
EMBER_API ember_status ember_model_meta_int_array(const ember_model* model, const char* key,
                                                  int64_t* values, size_t capacity, size_t* n);
EMBER_API ember_status ember_model_meta_float_array(const ember_model* model, const char* key,
                                                    double* values, size_t capacity, size_t* n);
EMBER_API ember_status ember_model_meta_string_at(const ember_model* model, const char* key, size_t index,
                                                  char* value, size_t capacity, size_t* length);

/* ---- memory and embeddings ---------------------------------------------------------------- */

/* ember::MemoryEstimate (bytes). */
typedef struct ember_memory_estimate {
    int64_t weight_bytes;
    int64_t kv_bytes_per_token_f32, kv_bytes_per_token_f16, kv_bytes_per_token_q8_0;
    int64_t context;
    int64_t scratch_bytes, session_bytes, total_bytes;
} ember_memory_estimate;

typedef struct ember_session_options ember_session_options;

/* What loading `path` and one session with `options` (NULL: defaults) need, from the file's
 * header (Model::estimate_memory). */
EMBER_API ember_status ember_estimate_memory(const char* path, const ember_session_options* options,
                                             ember_memory_estimate* estimate);

typedef enum ember_pooling EMBER_ENUM_INT { EMBER_POOLING_MEAN = 0, EMBER_POOLING_LAST = 1 } ember_pooling;

/* ember::EmbedOptions. */
typedef struct ember_embed_options {
    ember_pooling pooling;
    bool normalize;
    bool add_bos;
    int32_t threads;
    int32_t batch;
} ember_embed_options;

EMBER_API ember_embed_options ember_embed_options_default(void);

/* Embeddings of texts[n_texts] (NUL-terminated), row by row into
 * embeddings[capacity] (n_texts x n_embd floats); *n_floats receives n_texts x n_embd
 * (Model::embed). `options` may be NULL. */
EMBER_API ember_status ember_embed(const ember_model* model, const char* const* texts, size_t n_texts,
                                   const ember_embed_options* options, float* embeddings,
                                   size_t capacity, size_t* n_floats);

/* ---- chat template ------------------------------------------------------------------------ */

/* A tool call made by the assistant (ember::ToolCall); NULL strings count as empty. */
typedef struct ember_tool_call {
    const char* id;
    const char* name;
    const char* arguments; /* JSON text, e.g. {"city": "Paris"} */
} ember_tool_call;

/* One message of a conversation (ember::ChatMessage); NULL strings count as empty. */
typedef struct ember_chat_message {
    const char* role; /* "system", "user", "assistant", "tool" */
    const char* content;
    const ember_tool_call* tool_calls; /* assistant: n_tool_calls calls */
    size_t n_tool_calls;
    const char* tool_call_id;      /* tool: the call it answers */
    const char* name;              /* tool: the function's name */
    const char* reasoning_content; /* assistant: its reasoning */
} ember_chat_message;

/* ember::ChatTemplateOptions; NULL strings count as empty. */
typedef struct ember_chat_options {
    bool add_generation_prompt;
    const char* tools;             /* JSON array of tools in OpenAI's format */
    const char* variables;         /* JSON object of further template variables */
    const char* template_override; /* a Jinja template to use instead of the model's */
} ember_chat_options;

EMBER_API ember_chat_options ember_chat_options_default(void);

/* Lays out a conversation with the model's chat template (ChatML when the file has none); see
 * Model::apply_chat_template. `options` may be NULL. */
EMBER_API ember_status ember_apply_chat_template(const ember_model* model,
                                                 const ember_chat_message* messages,
                                                 size_t n_messages,
                                                 const ember_chat_options* options, char* text,
                                                 size_t capacity, size_t* length);

/* ---- session ------------------------------------------------------------------------------ */

typedef struct ember_session ember_session;

/* ember::SessionOptions. */
struct ember_session_options {
    int32_t context;    /* tokens; 0: the model's training context, at most 4096 */
    int32_t threads;    /* 0: the model's threads */
    int32_t batch;      /* most tokens per forward pass during prefill */
    bool logits_all;    /* keep the logits of every token of the last prefill chunk */
    bool context_shift; /* shift the context instead of returning EMBER_CONTEXT_FULL */
    int32_t n_keep;     /* tokens a context shift never drops */
};

EMBER_API ember_session_options ember_session_options_default(void);

EMBER_API ember_status ember_session_create(const ember_model* model,
                                            const ember_session_options* options,
                                            ember_session** session);
EMBER_API void ember_session_free(ember_session* session);

/* Runs tokens[n_tokens] after those already in the session (Session::prefill). Returns
 * EMBER_OK, EMBER_CANCELLED, EMBER_INVALID_INPUT (no tokens), or EMBER_ERROR when an id is
 * outside the vocabulary or the tokens do not fit in the context. */
EMBER_API ember_status ember_session_prefill(ember_session* session, const ember_token* tokens,
                                             size_t n_tokens);
/* Runs one token (Session::decode): EMBER_OK, EMBER_CONTEXT_FULL, EMBER_CANCELLED or
 * EMBER_INVALID_INPUT. */
EMBER_API ember_status ember_session_decode(ember_session* session, ember_token token);

/* The logits after the last token processed (n_vocab floats, owned by the session, valid until
 * the next step), or NULL before any; *n_logits (may be NULL) receives their count. */
EMBER_API const float* ember_session_logits(const ember_session* session, size_t* n_logits);
/* With logits_all: the logits after token i of the last prefill chunk. */
EMBER_API ember_status ember_session_logits_at(const ember_session* session, int32_t i,
                                               const float** logits, size_t* n_logits);

/* The tokens in the session, into tokens[capacity]; *n_tokens receives the count. */
EMBER_API ember_status ember_session_tokens(const ember_session* session, ember_token* tokens,
                                            size_t capacity, size_t* n_tokens);
EMBER_API int32_t ember_session_n_past(const ember_session* session);
EMBER_API int32_t ember_session_context(const ember_session* session);

/* Streamed text for `token` (UTF-8 safe, Session::detokenize_stream): *text receives
 * NUL-terminated text owned by the session, valid until the next call on it; *length (may be
 * NULL) its byte count. */
EMBER_API ember_status ember_session_detokenize_stream(ember_session* session, ember_token token,
                                                       const char** text, size_t* length);

/* Called between layers and chunks of a step; return true to cancel it. NULL removes it. */
typedef bool (*ember_cancel_callback)(void* user_data);
EMBER_API ember_status ember_session_set_cancel_callback(ember_session* session,
                                                         ember_cancel_callback callback,
                                                         void* user_data);

/* Called during prefill after each chunk with the tokens done and their total. NULL removes it. */
typedef void (*ember_progress_callback)(int64_t done, int64_t total, void* user_data);
EMBER_API ember_status ember_session_set_progress_callback(ember_session* session,
                                                           ember_progress_callback callback,
                                                           void* user_data);

/* Forgets every token (Session::reset). */
EMBER_API ember_status ember_session_reset(ember_session* session);

/* ember::Metrics. */
typedef struct ember_metrics {
    int64_t prompt_tokens, generated_tokens, context_shifts;
    double prefill_seconds, decode_seconds, ttft_seconds;
    double last_ttft_seconds; /* the latest prefill's */
    int64_t last_prompt_tokens, prefills;
} ember_metrics;

EMBER_API ember_status ember_session_get_metrics(const ember_session* session,
                                                 ember_metrics* metrics);

/* Session (and, when not NULL, sampler) state to a file and back (Session::save_state_file,
 * restore_state_file). */
typedef struct ember_sampler ember_sampler;
EMBER_API ember_status ember_session_save_file(const ember_session* session, const char* path,
                                               const ember_sampler* sampler);
EMBER_API ember_status ember_session_restore_file(ember_session* session, const char* path,
                                                  ember_sampler* sampler);

/* ---- sampler ------------------------------------------------------------------------------ */

typedef struct ember_logit_bias {
    ember_token token;
    float bias; /* -INFINITY bans the token */
} ember_logit_bias;

/* ember::SamplerOptions (the defaults are llama.cpp's). The default stage order is used. */
typedef struct ember_sampler_options {
    float temperature; /* <= 0: greedy */
    int32_t top_k;
    float top_p, min_p, typical_p;
    float repeat_penalty, frequency_penalty, presence_penalty;
    int32_t penalty_last_n;
    uint64_t seed;                      /* 0xFFFFFFFF: a random seed */
    const ember_logit_bias* logit_bias; /* n_logit_bias entries, copied at creation */
    size_t n_logit_bias;
} ember_sampler_options;

EMBER_API ember_sampler_options ember_sampler_options_default(void);

EMBER_API ember_status ember_sampler_create(const ember_sampler_options* options,
                                            ember_sampler** sampler);
EMBER_API void ember_sampler_free(ember_sampler* sampler);

/* Picks the next token from logits[n_logits] and accepts it into the penalty history. */
EMBER_API ember_status ember_sampler_sample(ember_sampler* sampler, const float* logits,
                                            size_t n_logits, ember_token* token);
/* Adds a token to the penalty history without sampling (e.g. the prompt's). */
EMBER_API ember_status ember_sampler_accept(ember_sampler* sampler, ember_token token);
/* Probability and entropy (nats) of the distribution the last token was drawn from. */
EMBER_API ember_status ember_sampler_last(const ember_sampler* sampler, float* probability,
                                          float* entropy);
EMBER_API ember_status ember_sampler_reset(ember_sampler* sampler);

/* ---- log-probabilities -------------------------------------------------------------------- */

typedef struct ember_token_logprob {
    ember_token token;
    float logprob;
} ember_token_logprob;

/* The natural-log probability of `token` under the model's raw distribution logits[n_logits]
 * (before any sampler stage, as OpenAI's logprobs), and the n_top most likely tokens into
 * top[n_top] (most likely first; *n_written receives how many, fewer for a small vocabulary).
 * top may be NULL when n_top is 0; n_written may be NULL. See ember::logprobs. Inside an
 * ember_token_callback, ember_session_logits still holds the logits the token came from. */
EMBER_API ember_status ember_logprobs(const float* logits, size_t n_logits, ember_token token,
                                      float* logprob, ember_token_logprob* top, size_t n_top,
                                      size_t* n_written);

/* ---- generation --------------------------------------------------------------------------- */

/* Why ember_session_generate stopped (ember::StopReason). */
typedef enum ember_stop_reason EMBER_ENUM_INT {
    EMBER_STOP_EOG = 0,          /* an end-of-generation token was sampled */
    EMBER_STOP_STRING = 1,       /* the text reached a stop string */
    EMBER_STOP_MAX_TOKENS = 2,
    EMBER_STOP_CONTEXT_FULL = 3,
    EMBER_STOP_CANCELLED = 4     /* on_token returned false, or the cancel callback */
} ember_stop_reason;

/* Called for every generated token with the text it releases (text_len bytes, not
 * NUL-terminated, may be 0 while text is held back); a last call with token -1 may deliver
 * held-back text. Return false to stop. During the call the session's logits are those the
 * token was sampled from (for ember_logprobs). */
typedef bool (*ember_token_callback)(ember_token token, const char* text, size_t text_len,
                                     void* user_data);

/* ember::GenerateOptions. */
typedef struct ember_generate_options {
    int32_t max_tokens;       /* < 0: no limit */
    const char* const* stop;  /* n_stop stop strings (NUL-terminated) */
    size_t n_stop;
    ember_token_callback on_token; /* may be NULL */
    void* user_data;
} ember_generate_options;

EMBER_API ember_generate_options ember_generate_options_default(void);

typedef struct ember_generate_result {
    ember_stop_reason stop_reason;
    ember_status status;      /* EMBER_OK, EMBER_CONTEXT_FULL or EMBER_CANCELLED */
    int64_t n_tokens;         /* tokens generated (without the end-of-generation token) */
    int32_t stop_index;       /* index into stop[] of the stop string found, else -1 */
    bool last_token_pending;  /* see ember::GenerateResult */
} ember_generate_result;

/* Samples and decodes until an end-of-generation token, a stop string, max_tokens, a full
 * context or cancellation (Session::generate). The text goes to on_token; the tokens are the
 * last n_tokens of ember_session_tokens (but for a pending one). Returns EMBER_OK when generation ran (the reason is in
 * *result, which may be NULL), or an error. */
EMBER_API ember_status ember_session_generate(ember_session* session, ember_sampler* sampler,
                                              const ember_generate_options* options,
                                              ember_generate_result* result);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_EMBER_H */

/* The C API from C (compiled as C11 with -Wall -Wextra -Wpedantic -Werror): handles, errors and
 * the thread-local message, the buffer convention, the token loop, generate with callbacks and
 * cancellation, chat template, metrics, state files. Runs on stories260K (argv[1]).
 *   test_c_api MODEL.gguf WORK_DIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember/ember.h"

static int g_failures = 0;
static int g_checks = 0;

#define CHECK(cond)                                                                     \
    do {                                                                                \
        ++g_checks;                                                                     \
        if (!(cond)) {                                                                  \
            ++g_failures;                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %s)\n", __FILE__,     \
                    __LINE__, #cond, ember_last_error());                               \
        }                                                                               \
    } while (0)

#define REQUIRE(cond)                                                                   \
    do {                                                                                \
        const bool ok_ = (cond); /* evaluated once: it may be a call */                  \
        ++g_checks;                                                                     \
        if (!ok_) {                                                                     \
            ++g_failures;                                                               \
            fprintf(stderr, "%s:%d: REQUIRE failed: %s (last error: %s)\n", __FILE__,   \
                    __LINE__, #cond, ember_last_error());                               \
            return;                                                                     \
        }                                                                               \
    } while (0)

static const char* kReference =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. "
    "One day, she saw a big, red ball. She wanted to play with it, but it was too high.";

static void test_errors_without_a_model(void) {
    ember_model* model = NULL;
    CHECK(strlen(ember_version()) >= 5);
    CHECK(strcmp(ember_status_name(EMBER_CONTEXT_FULL), "context_full") == 0);
    CHECK(strcmp(ember_status_name(EMBER_ERROR_BUFFER_TOO_SMALL), "error_buffer_too_small") == 0);

    CHECK(ember_model_load("/nonexistent/model.gguf", NULL, &model) == EMBER_ERROR);
    CHECK(model == NULL);
    CHECK(strstr(ember_last_error(), "/nonexistent/model.gguf") != NULL);
    CHECK(ember_model_load(NULL, NULL, &model) == EMBER_ERROR_INVALID_ARGUMENT);
    CHECK(ember_model_load("x.gguf", NULL, NULL) == EMBER_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ember_last_error(), "ember_model_load") != NULL);

    const char junk[] = "GGUF\3\0\0\0 not a model";
    CHECK(ember_model_load_from_memory(junk, sizeof junk, NULL, &model) == EMBER_ERROR);
    CHECK(ember_model_load_from_memory(NULL, 10, NULL, &model) == EMBER_ERROR_INVALID_ARGUMENT);
    CHECK(model == NULL);

    ember_sampler_options so = ember_sampler_options_default();
    ember_sampler* sampler = NULL;
    so.repeat_penalty = 0.0f; /* must be > 0 */
    CHECK(ember_sampler_create(&so, &sampler) == EMBER_ERROR);
    CHECK(strstr(ember_last_error(), "repeat_penalty") != NULL);
    so = ember_sampler_options_default();
    so.n_logit_bias = 1; /* without the array */
    CHECK(ember_sampler_create(&so, &sampler) == EMBER_ERROR_INVALID_ARGUMENT);
    CHECK(sampler == NULL);

    /* Freeing NULL is a no-op; queries on NULL handles do not crash. */
    ember_model_free(NULL);
    ember_session_free(NULL);
    ember_sampler_free(NULL);
    CHECK(ember_model_n_vocab(NULL) == -1);
    CHECK(ember_session_logits(NULL, NULL) == NULL);
}

static void test_tokens(const ember_model* model) {
    static const ember_token expected[] = {1, 403, 407, 261, 378};
    const char* text = "Once upon a time";
    ember_token tokens[16];
    size_t n = 0;
    char buf[64];
    size_t len = 0;

    /* Size query, too small, then right. */
    CHECK(ember_tokenize(model, text, strlen(text), true, false, NULL, 0, &n) == EMBER_ERROR_BUFFER_TOO_SMALL);
    CHECK(n == 5);
    n = 0;
    tokens[0] = -7;
    CHECK(ember_tokenize(model, text, strlen(text), true, false, tokens, 3, &n) == EMBER_ERROR_BUFFER_TOO_SMALL);
    CHECK(n == 5 && tokens[0] == -7); /* nothing written */
    CHECK(ember_tokenize(model, text, strlen(text), true, false, tokens, 16, &n) == EMBER_OK);
    REQUIRE(n == 5);
    CHECK(memcmp(tokens, expected, sizeof expected) == 0);
    CHECK(ember_tokenize(model, text, strlen(text), false, false, tokens, 16, &n) == EMBER_OK);
    CHECK(n == 4 && tokens[0] == 403);
    CHECK(ember_tokenize(model, "", 0, false, false, tokens, 16, &n) == EMBER_OK && n == 0);
    CHECK(ember_tokenize(model, NULL, 3, false, false, tokens, 16, &n) == EMBER_ERROR_INVALID_ARGUMENT);
    CHECK(ember_tokenize(model, text, 4, false, false, NULL, 16, &n) == EMBER_ERROR_INVALID_ARGUMENT);
    CHECK(ember_tokenize(model, text, 4, false, false, tokens, 16, NULL) == EMBER_ERROR_INVALID_ARGUMENT);

    /* Text needs length + 1 bytes. */
    CHECK(ember_detokenize(model, expected, 5, NULL, 0, &len) == EMBER_ERROR_BUFFER_TOO_SMALL);
    CHECK(len == strlen(text));
    CHECK(ember_detokenize(model, expected, 5, buf, len, &len) == EMBER_ERROR_BUFFER_TOO_SMALL);
    CHECK(ember_detokenize(model, expected, 5, buf, len + 1, &len) == EMBER_OK);
    CHECK(strcmp(buf, text) == 0);
    {
        const ember_token bad[] = {403, 100000};
        CHECK(ember_detokenize(model, bad, 2, buf, sizeof buf, &len) == EMBER_ERROR);
        CHECK(strstr(ember_last_error(), "100000") != NULL);
    }
    CHECK(ember_token_to_piece(model, 403, buf, sizeof buf, &len) == EMBER_OK);
    CHECK(strcmp(buf, " Once") == 0 || strcmp(buf, "Once") == 0);

    CHECK(ember_model_n_vocab(model) == 512);
    CHECK(ember_model_bos(model) == 1 && ember_model_eos(model) == 2);
    CHECK(ember_model_is_end_of_generation(model, 2));
    CHECK(!ember_model_is_end_of_generation(model, 403));
    {
        ember_model_info info;
        CHECK(ember_model_get_info(model, &info) == EMBER_OK);
        CHECK(strcmp(info.architecture, "llama") == 0);
        CHECK(strcmp(info.file_type, "F32") == 0);
        CHECK(info.n_vocab == 512 && info.n_embd == 64 && info.n_layer == 5);
        CHECK(ember_model_get_info(model, NULL) == EMBER_ERROR_INVALID_ARGUMENT);
    }
}

/* The token loop by hand: greedy text equals llama.cpp's reference. */
static void test_token_loop(const ember_model* model) {
    ember_session_options o = ember_session_options_default();
    ember_session* session = NULL;
    ember_sampler* sampler = NULL;
    ember_sampler_options so = ember_sampler_options_default();
    ember_token prompt[8];
    size_t n_prompt = 0;
    char text[512];
    size_t len = 0;
    int i;

    o.context = 64;
    REQUIRE(ember_session_create(model, &o, &session) == EMBER_OK);
    so.temperature = 0.0f;
    REQUIRE(ember_sampler_create(&so, &sampler) == EMBER_OK);
    CHECK(ember_session_context(session) == 64);
    CHECK(ember_session_logits(session, &len) == NULL && len == 0);

    REQUIRE(ember_tokenize(model, "Once upon a time", 16, true, false, prompt, 8, &n_prompt) == EMBER_OK);
    CHECK(ember_session_prefill(session, prompt, 0) == EMBER_INVALID_INPUT);
    REQUIRE(ember_session_prefill(session, prompt, n_prompt) == EMBER_OK);
    CHECK(ember_session_n_past(session) == 5);

    strcpy(text, "Once upon a time");
    len = strlen(text);
    for (i = 0; i < 20; ++i) {
        size_t n_logits = 0;
        const float* logits = ember_session_logits(session, &n_logits);
        ember_token t = -1;
        const char* piece = NULL;
        size_t piece_len = 0;
        REQUIRE(logits != NULL && n_logits == 512);
        REQUIRE(ember_sampler_sample(sampler, logits, n_logits, &t) == EMBER_OK);
        REQUIRE(ember_session_detokenize_stream(session, t, &piece, &piece_len) == EMBER_OK);
        REQUIRE(len + piece_len < sizeof text);
        memcpy(text + len, piece, piece_len + 1);
        len += piece_len;
        REQUIRE(ember_session_decode(session, t) == EMBER_OK);
    }
    CHECK(strncmp(text, kReference, len) == 0);
    CHECK(len > 60);
    {
        float p = 0.0f, h = 1.0f;
        CHECK(ember_sampler_last(sampler, &p, &h) == EMBER_OK);
        CHECK(p == 1.0f && h == 0.0f); /* greedy: a point mass */
    }
    {
        ember_token all[64];
        size_t n = 0;
        CHECK(ember_session_tokens(session, all, 64, &n) == EMBER_OK);
        CHECK(n == 25 && all[0] == 1 && all[4] == 378);
        CHECK(ember_session_tokens(session, all, 10, &n) == EMBER_ERROR_BUFFER_TOO_SMALL && n == 25);
    }

    /* Bad steps: a token outside the vocabulary. */
    CHECK(ember_session_decode(session, 512) == EMBER_INVALID_INPUT);
    CHECK(ember_session_decode(session, -1) == EMBER_INVALID_INPUT);
    {
        const ember_token bad[] = {5, 99999};
        CHECK(ember_session_prefill(session, bad, 2) == EMBER_ERROR);
        CHECK(strstr(ember_last_error(), "99999") != NULL);
    }
    CHECK(ember_session_n_past(session) == 25);
    {
        ember_metrics m;
        CHECK(ember_session_get_metrics(session, &m) == EMBER_OK);
        CHECK(m.prompt_tokens == 5 && m.generated_tokens == 20);
        CHECK(m.ttft_seconds > 0.0 && m.decode_seconds > 0.0);
    }
    /* A full context: 64 tokens, then EMBER_CONTEXT_FULL and nothing changes. */
    while (ember_session_n_past(session) < 64) REQUIRE(ember_session_decode(session, 300) == EMBER_OK);
    CHECK(ember_session_decode(session, 300) == EMBER_CONTEXT_FULL);
    CHECK(ember_session_n_past(session) == 64);
    CHECK(ember_session_reset(session) == EMBER_OK);
    CHECK(ember_session_n_past(session) == 0);

    ember_sampler_free(sampler);
    ember_session_free(session);
}

typedef struct collected {
    char text[1024];
    size_t len;
    int calls;
    int stop_after; /* return false on this call (0: never) */
} collected;

static bool collect(ember_token token, const char* text, size_t text_len, void* user_data) {
    collected* c = (collected*)user_data;
    (void)token;
    if (c->len + text_len < sizeof c->text) {
        memcpy(c->text + c->len, text, text_len);
        c->len += text_len;
        c->text[c->len] = '\0';
    }
    ++c->calls;
    return c->stop_after == 0 || c->calls < c->stop_after;
}

static bool cancel_always(void* user_data) {
    ++*(int*)user_data;
    return true;
}

static void test_generate(const ember_model* model, const char* work_dir) {
    ember_session* session = NULL;
    ember_sampler* sampler = NULL;
    ember_sampler_options so = ember_sampler_options_default();
    ember_generate_options go = ember_generate_options_default();
    ember_generate_result r;
    ember_token prompt[8];
    size_t n_prompt = 0;
    collected c;
    const char* stops[] = {"XYZ", "girl"};
    char path[512];

    so.temperature = 0.0f;
    REQUIRE(ember_session_create(model, NULL, &session) == EMBER_OK);
    REQUIRE(ember_sampler_create(&so, &sampler) == EMBER_OK);
    REQUIRE(ember_tokenize(model, "Once upon a time", 16, true, false, prompt, 8, &n_prompt) == EMBER_OK);
    CHECK(ember_session_generate(session, sampler, NULL, &r) == EMBER_ERROR); /* nothing prefilled */
    REQUIRE(ember_session_prefill(session, prompt, n_prompt) == EMBER_OK);

    /* Save the state after the prompt, to restore later. */
    snprintf(path, sizeof path, "%s/c_api_state.bin", work_dir);
    CHECK(ember_session_save_file(session, path, sampler) == EMBER_OK);

    memset(&c, 0, sizeof c);
    go.max_tokens = 16;
    go.on_token = collect;
    go.user_data = &c;
    REQUIRE(ember_session_generate(session, sampler, &go, &r) == EMBER_OK);
    CHECK(r.stop_reason == EMBER_STOP_MAX_TOKENS && r.status == EMBER_OK);
    CHECK(r.n_tokens == 16 && r.stop_index == -1 && !r.last_token_pending);
    CHECK(strncmp(kReference + strlen("Once upon a time"), c.text, c.len) == 0);
    CHECK(c.len > 40);

    /* Restore: the same continuation again, this time stopped by a stop string. */
    CHECK(ember_session_restore_file(session, path, sampler) == EMBER_OK);
    CHECK(ember_session_n_past(session) == 5);
    memset(&c, 0, sizeof c);
    go.stop = stops;
    go.n_stop = 2;
    REQUIRE(ember_session_generate(session, sampler, &go, &r) == EMBER_OK);
    CHECK(r.stop_reason == EMBER_STOP_STRING && r.stop_index == 1);
    CHECK(strcmp(c.text, ", there was a little ") == 0);

    /* on_token returning false stops; so does the cancel callback. */
    CHECK(ember_session_restore_file(session, path, sampler) == EMBER_OK);
    memset(&c, 0, sizeof c);
    c.stop_after = 3;
    go.n_stop = 0;
    REQUIRE(ember_session_generate(session, sampler, &go, &r) == EMBER_OK);
    CHECK(r.stop_reason == EMBER_STOP_CANCELLED && r.status == EMBER_OK && r.n_tokens == 3);
    {
        int polls = 0;
        CHECK(ember_session_set_cancel_callback(session, cancel_always, &polls) == EMBER_OK);
        CHECK(ember_session_prefill(session, prompt, n_prompt) == EMBER_CANCELLED);
        CHECK(polls > 0);
        CHECK(ember_session_set_cancel_callback(session, NULL, NULL) == EMBER_OK);
        CHECK(ember_session_decode(session, 300) == EMBER_OK);
    }
    {
        const char* bad_stops[] = {"a", NULL};
        go.stop = bad_stops;
        go.n_stop = 2;
        CHECK(ember_session_generate(session, sampler, &go, &r) == EMBER_ERROR_INVALID_ARGUMENT);
    }
    CHECK(ember_session_restore_file(session, "/nonexistent/state.bin", NULL) == EMBER_ERROR);
    CHECK(strstr(ember_last_error(), "/nonexistent/state.bin") != NULL);
    remove(path);
    ember_sampler_free(sampler);
    ember_session_free(session);
}

static void test_chat_template(const ember_model* model) {
    const ember_chat_message messages[] = {{.role = "system", .content = "Be brief."},
                                           {.role = "user", .content = "Hi"}};
    const char* expected =
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n";
    ember_chat_options options = ember_chat_options_default();
    char text[512];
    size_t len = 0;
    CHECK(ember_apply_chat_template(model, messages, 2, NULL, text, sizeof text, &len) == EMBER_OK);
    CHECK(strcmp(text, expected) == 0); /* stories260K has no template: ChatML */
    CHECK(len == strlen(expected));

    options.template_override = "{{ messages[0].content }}";
    CHECK(ember_apply_chat_template(model, messages, 2, &options, text, sizeof text, &len) == EMBER_OK);
    CHECK(strcmp(text, "Be brief.") == 0);
    options.template_override = "{% if %}";
    CHECK(ember_apply_chat_template(model, messages, 2, &options, text, sizeof text, &len) == EMBER_ERROR);
    CHECK(strstr(ember_last_error(), "line 1") != NULL);

    /* Tool calls, a tool result, the tools list and a variable reach the template. */
    {
        const ember_tool_call call = {.id = "call_1", .name = "get_weather", .arguments = "{\"city\": \"Paris\"}"};
        const ember_chat_message round[] = {
            {.role = "user", .content = "Weather in Paris?"},
            {.role = "assistant", .tool_calls = &call, .n_tool_calls = 1},
            {.role = "tool", .content = "18 C", .tool_call_id = "call_1", .name = "get_weather"}};
        options.template_override =
            "{{ tools[0].function.name }} {{ flag }}|"
            "{% for m in messages %}{{ m.role }}:{{ m.content }}"
            "{% if m.tool_calls %}[{{ m.tool_calls[0].id }} {{ m.tool_calls[0].function.name }}"
            " {{ m.tool_calls[0].function.arguments.city }}]{% endif %}"
            "{% if m.tool_call_id %}({{ m.tool_call_id }} {{ m.name }}){% endif %};{% endfor %}";
        options.tools = "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\"}}]";
        options.variables = "{\"flag\": 42}";
        CHECK(ember_apply_chat_template(model, round, 3, &options, text, sizeof text, &len) == EMBER_OK);
        CHECK(strcmp(text, "get_weather 42|user:Weather in Paris?;assistant:[call_1 get_weather Paris];"
                           "tool:18 C(call_1 get_weather);") == 0);
        options.tools = "{}";
        CHECK(ember_apply_chat_template(model, round, 3, &options, text, sizeof text, &len) == EMBER_ERROR);
        CHECK(strstr(ember_last_error(), "tools") != NULL);
        {
            ember_chat_message bad = {.role = "assistant", .n_tool_calls = 2};
            CHECK(ember_apply_chat_template(model, &bad, 1, NULL, text, sizeof text, &len) ==
                  EMBER_ERROR_INVALID_ARGUMENT);
        }
    }
}

static void count_progress(int64_t done, int64_t total, void* user_data) {
    int64_t* last = (int64_t*)user_data;
    last[0] = done;
    last[1] = total;
}

/* Metadata, memory estimate, embeddings, log-probabilities, prefill progress, metrics. */
static void test_extras(const ember_model* model, const char* path) {
    char text[64];
    size_t len = 0, n = 0;
    int64_t i64 = 0;
    double f64 = 0.0;
    bool flag = false;

    CHECK(ember_model_meta_count(model) == 19);
    CHECK(ember_model_meta_key(model, 0, text, sizeof text, &len) == EMBER_OK);
    CHECK(strcmp(text, "tokenizer.ggml.tokens") == 0);
    CHECK(ember_model_meta_key(model, 19, text, sizeof text, &len) == EMBER_ERROR_INVALID_ARGUMENT);
    CHECK(ember_model_meta_type(model, "llama.block_count") == EMBER_META_INTEGER);
    CHECK(ember_model_meta_type(model, "nope") == EMBER_META_ABSENT);
    CHECK(ember_model_meta_int(model, "llama.block_count", &i64) == EMBER_OK && i64 == 5);
    CHECK(ember_model_meta_float(model, "llama.attention.layer_norm_rms_epsilon", &f64) == EMBER_OK);
    CHECK(fabs(f64 - 1e-5) < 1e-9);
    CHECK(ember_model_meta_string(model, "general.architecture", text, sizeof text, &len) == EMBER_OK);
    CHECK(strcmp(text, "llama") == 0 && len == 5);
    CHECK(ember_model_meta_int(model, "nope", &i64) == EMBER_ERROR_NOT_FOUND);
    CHECK(ember_model_meta_bool(model, "llama.block_count", &flag) == EMBER_ERROR);
    CHECK(strstr(ember_last_error(), "llama.block_count") != NULL);
    CHECK(ember_model_meta_array_length(model, "tokenizer.ggml.tokens", &n) == EMBER_OK && n == 512);
    CHECK(ember_model_meta_string_at(model, "tokenizer.ggml.tokens", 2, text, sizeof text, &len) == EMBER_OK);
    CHECK(strcmp(text, "</s>") == 0);
    CHECK(ember_model_meta_string_at(model, "tokenizer.ggml.tokens", 512, text, sizeof text, &len) ==
          EMBER_ERROR_INVALID_ARGUMENT);
    {
        int64_t types[512];
        double scores[4];
        CHECK(ember_model_meta_int_array(model, "tokenizer.ggml.token_type", types, 512, &n) == EMBER_OK);
        CHECK(n == 512 && types[0] == 2 && types[1] == 3);
        CHECK(ember_model_meta_float_array(model, "tokenizer.ggml.scores", scores, 4, &n) ==
              EMBER_ERROR_BUFFER_TOO_SMALL);
        CHECK(n == 512);
    }

    {
        ember_memory_estimate e;
        ember_session_options o = ember_session_options_default();
        o.context = 256;
        CHECK(ember_estimate_memory(path, &o, &e) == EMBER_OK);
        CHECK(e.kv_bytes_per_token_f32 == 2 * 5 * 32 * 4 && e.context == 256);
        CHECK(e.total_bytes == e.weight_bytes + e.session_bytes);
        CHECK(ember_estimate_memory("/nonexistent.gguf", NULL, &e) == EMBER_ERROR);
    }

    {
        const char* texts[] = {"Once upon a time", "The little dog"};
        float vectors[128];
        double norm = 0.0;
        int k;
        ember_embed_options eo = ember_embed_options_default();
        CHECK(ember_embed(model, texts, 2, NULL, NULL, 0, &n) == EMBER_ERROR_BUFFER_TOO_SMALL && n == 128);
        REQUIRE(ember_embed(model, texts, 2, &eo, vectors, 128, &n) == EMBER_OK);
        for (k = 64; k < 128; ++k) norm += (double)vectors[k] * vectors[k];
        CHECK(fabs(norm - 1.0) < 1e-4);
        eo.pooling = (ember_pooling)7;
        CHECK(ember_embed(model, texts, 2, &eo, vectors, 128, &n) == EMBER_ERROR_INVALID_ARGUMENT);
    }

    {
        ember_session* session = NULL;
        ember_session_options o = ember_session_options_default();
        ember_token prompt[16];
        size_t n_prompt = 0, n_logits = 0, n_top = 0;
        int64_t progress[2] = {0, 0};
        ember_token_logprob top[3];
        float lp = 0.0f;
        ember_metrics m;
        const float* logits;
        o.context = 64;
        o.batch = 2;
        REQUIRE(ember_session_create(model, &o, &session) == EMBER_OK);
        CHECK(ember_session_set_progress_callback(session, count_progress, progress) == EMBER_OK);
        REQUIRE(ember_tokenize(model, "Once upon a time", 16, true, false, prompt, 16, &n_prompt) == EMBER_OK);
        REQUIRE(ember_session_prefill(session, prompt, n_prompt) == EMBER_OK);
        CHECK(progress[0] == 5 && progress[1] == 5);
        CHECK(ember_session_get_metrics(session, &m) == EMBER_OK);
        CHECK(m.prefills == 1 && m.last_prompt_tokens == 5 && m.last_ttft_seconds == m.ttft_seconds);

        logits = ember_session_logits(session, &n_logits);
        CHECK(ember_logprobs(logits, n_logits, 432, &lp, top, 3, &n_top) == EMBER_OK);
        CHECK(n_top == 3 && top[0].token == 432); /* the greedy continuation */
        CHECK(lp == top[0].logprob && lp < 0.0f);
        CHECK(top[1].logprob <= top[0].logprob && top[2].logprob <= top[1].logprob);
        CHECK(ember_logprobs(logits, n_logits, 432, &lp, NULL, 0, NULL) == EMBER_OK);
        CHECK(ember_logprobs(logits, n_logits, 512, &lp, NULL, 0, NULL) == EMBER_ERROR);
        CHECK(ember_logprobs(logits, n_logits, 1, &lp, NULL, 2, NULL) == EMBER_ERROR_INVALID_ARGUMENT);
        ember_session_free(session);
    }
}

static void on_progress(float fraction, void* user_data) {
    float* last = (float*)user_data;
    if (fraction >= *last) *last = fraction;
}

int main(int argc, char** argv) {
    ember_model* model = NULL;
    ember_model_options mo = ember_model_options_default();
    float progress = -1.0f;
    test_errors_without_a_model();
    if (argc < 3) {
        fprintf(stderr, "usage: test_c_api MODEL.gguf WORK_DIR\n");
        return 2;
    }
    mo.threads = 2;
    mo.on_progress = on_progress;
    mo.progress_user_data = &progress;
    if (ember_model_load(argv[1], &mo, &model) != EMBER_OK) {
        fprintf(stderr, "cannot load %s: %s\n", argv[1], ember_last_error());
        return 1;
    }
    CHECK(progress == 1.0f);
    test_tokens(model);
    test_token_loop(model);
    test_generate(model, argv[2]);
    test_chat_template(model);
    test_extras(model, argv[1]);
    ember_model_free(model);
    printf("%d checks, %d failed\n", g_checks, g_failures);
    return g_failures == 0 ? 0 : 1;
}

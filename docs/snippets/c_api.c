/* A C program on ember's C API: streams a greedy continuation of a prompt.
 *   cc -std=c11 app.c $(pkg-config --cflags --libs ember-c) -o app && ./app model.gguf */
#include <stdio.h>
#include <string.h>

#include <ember/ember.h>

static bool print_piece(ember_token token, const char* text, size_t len, void* user_data) {
    (void)token, (void)user_data;
    fwrite(text, 1, len, stdout);
    fflush(stdout);
    return true; /* false stops generation */
}

int main(int argc, char** argv) {
    ember_model* model = NULL;
    ember_session* session = NULL;
    ember_sampler* sampler = NULL;
    ember_token prompt[64];
    size_t n_prompt = 0;
    const char* text = "Once upon a time";
    ember_sampler_options so = ember_sampler_options_default();
    ember_generate_options go = ember_generate_options_default();
    int rc = 1;

    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL.gguf\n", argv[0]);
        return 2;
    }
    so.temperature = 0.0f; /* greedy */
    go.max_tokens = 32;
    go.on_token = print_piece;
    if (ember_model_load(argv[1], NULL, &model) == EMBER_OK &&
        ember_session_create(model, NULL, &session) == EMBER_OK &&
        ember_sampler_create(&so, &sampler) == EMBER_OK &&
        ember_tokenize(model, text, strlen(text), true, false, prompt, 64, &n_prompt) == EMBER_OK &&
        ember_session_prefill(session, prompt, n_prompt) == EMBER_OK) {
        printf("%s", text);
        if (ember_session_generate(session, sampler, &go, NULL) == EMBER_OK) rc = 0;
        printf("\n");
    }
    if (rc != 0) fprintf(stderr, "error: %s\n", ember_last_error());
    ember_sampler_free(sampler);
    ember_session_free(session);
    ember_model_free(model);
    return rc;
}

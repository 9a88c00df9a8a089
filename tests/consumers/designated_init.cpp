// Every public option and value struct initialised the documented way, naming only some
// members: compiled by the consumer test with -Wall -Wextra -Werror, so that g++'s
// -Wmissing-field-initializers never fires on code written as the docs show.
#include <ember/ember.hpp>

void designated_initializers() {
    [[maybe_unused]] ember::ModelOptions mo{.threads = 2};
    [[maybe_unused]] ember::TokenizeOptions to{.parse_special = true};
    [[maybe_unused]] ember::ModelInfo info{.name = "x"};
    [[maybe_unused]] ember::ChatMessage cm{.role = "user"};
    [[maybe_unused]] ember::SessionOptions so{.context = 64};
    [[maybe_unused]] ember::Metrics m{.prompt_tokens = 1};
    [[maybe_unused]] ember::GenerateOptions go{.max_tokens = 8};
    [[maybe_unused]] ember::GenerateResult gr{.status = ember::Status::ok};
    [[maybe_unused]] ember::SamplerOptions sa{.temperature = 0.0f};
    [[maybe_unused]] ember::SampleInfo si{.token = 1};
    [[maybe_unused]] ember::SampleCandidate sc{.logit = 1.0f};
}

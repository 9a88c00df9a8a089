// ember-server's request bodies (/v1/chat/completions when the first byte is odd, else
// /v1/completions): parsing and every field's validation. A bad body must be a RequestError
// (answered with its 4xx status), never another exception or a crash. Built against
// ember_server_core (examples/server), so it has its own replay executable (tests/fuzz.cmake).
#include "ember/error.hpp"
#include "fuzz_target.hpp"
#include "openai_request.hpp"

EMBER_FUZZ_TARGET(server_request) {
    if (size == 0) return;
    ember_server::Limits limits;
    limits.n_vocab = 512;
    try {
        (void)ember_server::parse_completion_request(ember_fuzz::as_text(data + 1, size - 1), (data[0] & 1) != 0, limits);
    } catch (const ember_server::RequestError&) {
    } catch (const ember::Error&) {
    }
}

#include "runtime/fail.hpp"

#include "ember/text.hpp"

namespace ember {

// Messages quote file contents (metadata strings, token text, template output): printable()
// keeps every message one printable line, whatever bytes it quotes.
void fail(const std::string& message) { throw Error(printable(message)); }

void fail_naming(const std::string& name, const Error& e) {
    const std::string_view message = e.what();
    if (message.substr(0, name.size()) == name || message.substr(0, printable(name).size()) == printable(name)) {
        throw e;
    }
    fail(name + ": " + std::string(message));
}

void assert_fail(const char* expr, const char* file, int line) noexcept {
    std::fprintf(stderr, "ember: internal error: %s (%s:%d)\n", expr, file, line);
    std::abort();
}

}  // namespace ember

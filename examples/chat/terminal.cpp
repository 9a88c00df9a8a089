#include "terminal.hpp"

#include <csignal>
#include <cstdlib>
#include <unistd.h>

namespace ember_chat {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;
volatile std::sig_atomic_t g_generating = 0;

extern "C" void on_sigint(int) {
    if (!g_generating) _exit(130);
    g_interrupted = 1;
}

}  // namespace

bool use_colour() {
    const char* no_colour = std::getenv("NO_COLOR");
    return isatty(STDOUT_FILENO) && !(no_colour && *no_colour);
}

Palette Palette::detect() {
    Palette p;
    if (use_colour()) {
        p.prompt = "\033[32m";
        p.reset = "\033[0m";
    }
    return p;
}

ProgressBar::ProgressBar(bool enabled)
    : enabled_(enabled), start_(std::chrono::steady_clock::now()) {}

void ProgressBar::update(float fraction) {
    if (!enabled_) return;
    const auto elapsed = std::chrono::steady_clock::now() - start_;
    if (!shown_ && elapsed < std::chrono::milliseconds(500)) return;
    const int percent = static_cast<int>(fraction * 100.0f + 0.5f);
    if (percent == last_percent_) return;
    shown_ = true;
    last_percent_ = percent;
    const int width = 30, filled = percent * width / 100;
    std::fprintf(stderr, "\rloading [%s%s] %3d%%", std::string(filled, '#').c_str(),
                 std::string(width - filled, ' ').c_str(), percent);
    std::fflush(stderr);
}

void ProgressBar::finish() {
    if (shown_) std::fputs("\n", stderr);
    shown_ = false;
}

void install_interrupt_handler() {
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
}

bool interrupted() { return g_interrupted != 0; }
void clear_interrupt() { g_interrupted = 0; }
void set_generating(bool generating) { g_generating = generating ? 1 : 0; }

}  // namespace ember_chat

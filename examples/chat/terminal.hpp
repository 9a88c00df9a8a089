// Terminal concerns of ember-chat: colour, the load progress bar, Ctrl-C.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace ember_chat {

/// Colour only when stdout is a terminal and NO_COLOR is not set.
bool use_colour();

/// ANSI sequences, or "" when colour is off.
struct Palette {
    const char* prompt = "";
    const char* reset = "";
    static Palette detect();
};

/// A progress bar on stderr that appears only once loading has taken more than half a second.
class ProgressBar {
public:
    explicit ProgressBar(bool enabled);
    void update(float fraction);
    void finish();

private:
    bool enabled_;
    bool shown_ = false;
    int last_percent_ = -1;
    std::chrono::steady_clock::time_point start_;
};

/// Ctrl-C handling: the first Ctrl-C during an answer sets the interrupt flag (the answer stops,
/// the program goes on); Ctrl-C while waiting for input exits.
void install_interrupt_handler();
bool interrupted();
void clear_interrupt();
void set_generating(bool generating);

}  // namespace ember_chat

// Stop strings over streamed text, with llama.cpp server semantics: text that could be the
// start of a stop string is held back until it is known not to be one, and a stop string (with
// anything after it) is never released.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ember::detail {

class StopStrings {
public:
    /// Empty stop strings are ignored.
    explicit StopStrings(const std::vector<std::string>& stops);

    struct Step {
        std::string_view released;  ///< Text now safe to emit (valid until the next call).
        int matched = -1;           ///< Index (into the constructor's list) of the stop string found.
    };

    /// Appends `text` and returns what can be released. After a match, nothing more is released.
    Step push(std::string_view text);
    /// Releases everything held back (generation ended without a stop string).
    std::string_view finish();

    /// Bytes held back now.
    std::size_t held() const noexcept { return text_.size() - n_sent_; }

private:
    std::vector<std::string> stops_;
    std::vector<int> index_;  // stops_[i] is the constructor's stops[index_[i]]
    std::string text_;        // everything pushed
    std::size_t n_sent_ = 0;  // released prefix of text_
    bool matched_ = false;
};

}  // namespace ember::detail

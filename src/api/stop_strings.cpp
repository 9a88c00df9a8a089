#include "api/stop_strings.hpp"

#include <algorithm>

namespace ember::detail {

StopStrings::StopStrings(const std::vector<std::string>& stops) {
    for (std::size_t i = 0; i < stops.size(); ++i) {
        if (stops[i].empty()) continue;
        stops_.push_back(stops[i]);
        index_.push_back(static_cast<int>(i));
    }
}

StopStrings::Step StopStrings::push(std::string_view text) {
    if (matched_) return {};
    text_.append(text);
    const std::string_view all(text_);
    // A stop string cannot start inside released text: it would have been held back (its start
    // was a suffix that is a prefix of the stop string). So search only the unreleased text.
    std::size_t best = std::string_view::npos;
    int best_i = -1;
    for (std::size_t i = 0; i < stops_.size(); ++i) {
        const std::size_t at = all.find(stops_[i], n_sent_);
        if (at < best) {
            best = at;
            best_i = static_cast<int>(i);
        }
    }
    if (best_i >= 0) {
        matched_ = true;
        const std::string_view out = all.substr(n_sent_, best - n_sent_);
        n_sent_ = text_.size();
        return {out, index_[static_cast<std::size_t>(best_i)]};
    }
    // Hold back the longest unreleased suffix that is a (proper) prefix of a stop string.
    const std::size_t avail = text_.size() - n_sent_;
    std::size_t hold = 0;
    for (const std::string& s : stops_) {
        for (std::size_t len = std::min(s.size() - 1, avail); len > hold; --len) {
            if (all.substr(text_.size() - len) == std::string_view(s).substr(0, len)) {
                hold = len;
                break;
            }
        }
    }
    const std::size_t end = text_.size() - hold;
    const std::string_view out = all.substr(n_sent_, end - n_sent_);
    n_sent_ = end;
    return {out, -1};
}

std::string_view StopStrings::finish() {
    if (matched_) return {};
    const std::string_view out = std::string_view(text_).substr(n_sent_);
    n_sent_ = text_.size();
    return out;
}

}  // namespace ember::detail

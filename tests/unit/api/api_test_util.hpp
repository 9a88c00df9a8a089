// What the API tests share: the stories260K file and rewriting it with edits.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "gguf/gguf_file.hpp"
#include "gguf/gguf_writer.hpp"
#include "support/shared_data.hpp"

namespace api_test {

inline constexpr const char* kStories = "models/stories260K.gguf";

/// stories260K with `edit` applied to a Writer holding its metadata; tensors are added by `edit`.
template <class Edit>
std::vector<std::uint8_t> rewrite_stories(Edit edit) {
    const auto file = ember::gguf::File::open(ember_test::shared_file(kStories).string());
    ember::gguf::Writer w;
    w.copy_metadata(file);
    edit(w, file);
    return w.write_to_bytes();
}

/// Adds every tensor of `file` to `w` except the one named `skip`.
inline void add_all_tensors(ember::gguf::Writer& w, const ember::gguf::File& file, std::string_view skip = {}) {
    for (const auto& t : file.tensors()) {
        if (t.name == skip) continue;
        std::vector<std::int64_t> dims(t.ne, t.ne + t.n_dims);
        w.add_tensor_view(t.name, t.type, dims, {t.data, t.n_bytes});
    }
}

inline float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
    REQUIRE(a.size() == b.size());
    float m = 0.0f;
    for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
    return m;
}

}  // namespace api_test

// Mutation test: thousands of corrupted copies of stories260K must each either load or throw
// ember::Error (no other exception, no crash, no out-of-bounds read under ASan). Corruptions
// target the parsed fields (counts, lengths, types, dims, offsets) located by a tiny walker.
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ember/error.hpp"
#include "gguf/gguf_file.hpp"
#include "support/shared_data.hpp"

using ember::gguf::File;

namespace {

std::vector<std::uint8_t> read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A header field that belongs to one named key or tensor.
struct NamedField {
    std::string owner;  // "key 'x'" or "tensor 'y'", as the reader's errors name them
    std::size_t at;     // byte offset
    std::size_t size;   // 4 or 8
    const char* what;   // "value type", "tensor type", "dim", "offset"
};

// Byte positions of the header fields of a valid file.
struct Fields {
    std::vector<std::size_t> u64s;  // counts, lengths, dims, offsets
    std::vector<std::size_t> u32s;  // value types, element types, n_dims, tensor types
    std::vector<NamedField> named;  // value types of keys; types, dims and offsets of tensors
    std::size_t header_end = 0;
};

// Walks a known-good file (no validation: the input is trusted here).
class Walker {
public:
    explicit Walker(const std::vector<std::uint8_t>& b) : b_(b) {}

    Fields walk() {
        pos_ = 8;
        const auto n_tensors = u64();
        const auto n_kv = u64();
        for (std::uint64_t i = 0; i < n_kv; ++i) {
            const std::string owner = "key '" + string() + "'";
            f_.named.push_back({owner, pos_, 4, "value type"});
            value(u32());
        }
        for (std::uint64_t i = 0; i < n_tensors; ++i) {
            const std::string owner = "tensor '" + string() + "'";
            const auto n_dims = u32();
            for (std::uint32_t d = 0; d < n_dims; ++d) {
                f_.named.push_back({owner, pos_, 8, "dim"});
                u64();
            }
            f_.named.push_back({owner, pos_, 4, "tensor type"});
            u32();
            f_.named.push_back({owner, pos_, 8, "offset"});
            u64();
        }
        f_.header_end = pos_;
        return f_;
    }

private:
    std::uint64_t u64() {
        f_.u64s.push_back(pos_);
        std::uint64_t v;
        std::memcpy(&v, &b_[pos_], 8);
        pos_ += 8;
        return v;
    }
    std::uint32_t u32() {
        f_.u32s.push_back(pos_);
        std::uint32_t v;
        std::memcpy(&v, &b_[pos_], 4);
        pos_ += 4;
        return v;
    }
    void skip_string() { pos_ += static_cast<std::size_t>(u64()); }
    std::string string() {
        const auto n = static_cast<std::size_t>(u64());
        std::string out(reinterpret_cast<const char*>(&b_[pos_]), n);
        pos_ += n;
        return out;
    }
    void value(std::uint32_t type) {
        static const std::size_t sizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
        if (type == 8) {
            skip_string();
        } else if (type == 9) {
            const auto elem = u32();
            const auto n = u64();
            for (std::uint64_t i = 0; i < n; ++i) value(elem);
        } else {
            pos_ += sizes[type];
        }
    }

    const std::vector<std::uint8_t>& b_;
    std::size_t pos_ = 0;
    Fields f_;
};

std::uint64_t interesting_u64(std::mt19937& rng, std::uint64_t original, std::uint64_t file_size) {
    std::uniform_int_distribution<int> pick(0, 15);
    std::uniform_int_distribution<std::uint64_t> any;
    switch (pick(rng)) {
        case 0: return 0;
        case 1: return 1;
        case 2: return original - 1;
        case 3: return original + 1;
        case 4: return original * 2;
        case 5: return std::numeric_limits<std::uint64_t>::max();
        case 6: return std::numeric_limits<std::uint64_t>::max() - original;
        case 7: return 1ull << 63;
        case 8: return (1ull << 63) - 1;
        case 9: return file_size;
        case 10: return file_size - original;
        case 11: return any(rng) % 1000;
        case 12: return 1ull << 32;
        case 13: return original ^ (1ull << (any(rng) % 64));
        case 14: return original + 32 * (any(rng) % 64);
        default: return any(rng);
    }
}

std::uint32_t interesting_u32(std::mt19937& rng, std::uint32_t original) {
    static const std::uint32_t values[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 30, 31, 39, 100,
                                           0xffffffffu, 0x80000000u};
    std::uniform_int_distribution<std::size_t> pick(0, std::size(values));
    const std::size_t i = pick(rng);
    return i < std::size(values) ? values[i] : original ^ (1u << (rng() % 32));
}

// Reads every tensor's first and last byte and every metadata value; returns a checksum so
// the compiler keeps the reads.
std::uint64_t touch_value(const ember::gguf::Value& v) {
    std::uint64_t sum = static_cast<std::uint64_t>(v.type);
    if (const auto* s = std::get_if<std::string_view>(&v.data)) {
        if (!s->empty()) sum += static_cast<unsigned char>(s->front()) + static_cast<unsigned char>(s->back());
    } else if (const auto* a = std::get_if<std::shared_ptr<const ember::gguf::Array>>(&v.data)) {
        if (*a == nullptr) FAIL("null array");
        for (const auto& item : (*a)->items) {
            if (item.type != (*a)->element_type) FAIL("array item type differs from the element type");
            sum += touch_value(item);
        }
    } else if (v.is_integer()) {
        sum += v.type == ember::gguf::ValueType::i8 || v.type == ember::gguf::ValueType::i16 ||
                       v.type == ember::gguf::ValueType::i32 || v.type == ember::gguf::ValueType::i64
                   ? static_cast<std::uint64_t>(v.as_i64(""))
                   : v.as_u64("");
    } else if (v.is_float()) {
        sum += static_cast<std::uint64_t>(std::get<double>(v.data) != 0.0);
    } else {
        sum += v.as_bool("");
    }
    return sum;
}

std::uint64_t touch(const File& f) {
    std::uint64_t sum = 0;
    for (const auto& kv : f.metadata()) sum += kv.key.size() + touch_value(kv.value);
    const std::uint8_t* begin = f.bytes().data();
    const std::uint8_t* end = begin + f.bytes().size();
    for (const auto& t : f.tensors()) {
        if (t.n_bytes == 0 || t.data < begin + f.data_offset() || t.data + t.n_bytes > end ||
            f.find_tensor(t.name) != &t) {
            FAIL("tensor " << std::string(t.name) << " escapes the data section or is not findable");
        }
        sum += t.data[0] + t.data[t.n_bytes - 1] + t.name.size();
    }
    return sum;
}

struct Outcome {
    int loaded = 0;
    int rejected = 0;
};

Outcome run_mutations(const std::vector<std::uint8_t>& original, int iterations, std::uint32_t seed) {
    const Fields fields = Walker(original).walk();
    REQUIRE(fields.header_end < original.size());
    std::mt19937 rng(seed);
    Outcome out;
    std::uint64_t checksum = 0;
    // One working copy; each iteration's edits are undone afterwards (cheaper than recopying).
    std::vector<std::uint8_t> buf = original;
    std::vector<std::pair<std::size_t, std::size_t>> edited;  // (offset, length)
    auto save = [&](std::size_t at, std::size_t len) { edited.emplace_back(at, len); };
    for (int it = 0; it < iterations; ++it) {
        for (const auto& [at, len] : edited) std::memcpy(&buf[at], &original[at], len);
        edited.clear();
        std::size_t size = buf.size();
        const int kind = static_cast<int>(rng() % 6);
        const int n_edits = 1 + static_cast<int>(rng() % 3);
        for (int e = 0; e < n_edits; ++e) {
            switch (kind) {
                case 0: {  // flip bytes in the header (plus a little of the data)
                    const std::size_t at = rng() % (fields.header_end + 64);
                    save(at, 1);
                    buf[at] ^= static_cast<std::uint8_t>(1 + rng() % 255);
                    break;
                }
                case 1: {  // flip bits anywhere
                    const std::size_t at = rng() % buf.size();
                    save(at, 1);
                    buf[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
                    break;
                }
                case 2:  // truncate, mostly inside the header
                    size = rng() % 2 ? rng() % (fields.header_end + 64) : rng() % buf.size();
                    break;
                case 3:
                case 4: {  // patch a u64 field
                    const std::size_t at = fields.u64s[rng() % fields.u64s.size()];
                    save(at, 8);
                    std::uint64_t v;
                    std::memcpy(&v, &buf[at], 8);
                    v = interesting_u64(rng, v, buf.size());
                    std::memcpy(&buf[at], &v, 8);
                    break;
                }
                default: {  // patch a u32 field
                    const std::size_t at = fields.u32s[rng() % fields.u32s.size()];
                    save(at, 4);
                    std::uint32_t v;
                    std::memcpy(&v, &buf[at], 4);
                    v = interesting_u32(rng, v);
                    std::memcpy(&buf[at], &v, 4);
                    break;
                }
            }
        }
        try {
            const File f = File::from_copy(buf.data(), size, "mutant.gguf");
            checksum += touch(f);
            ++out.loaded;
        } catch (const ember::Error& e) {
            const std::string msg = e.what();
            if (msg.rfind("mutant.gguf: ", 0) != 0) FAIL("message lacks the file name: " << msg);
            ++out.rejected;
        } catch (const std::exception& e) {
            FAIL("iteration " << it << " (kind " << kind << "): non-ember exception: " << e.what());
        } catch (...) {
            FAIL("iteration " << it << " (kind " << kind << "): unknown exception");
        }
    }
    CHECK(checksum != 0);
    return out;
}

}  // namespace

TEST_CASE("corrupted copies of stories260K load or throw ember::Error", "[gguf][mutation]") {
    EMBER_REQUIRE_SHARED("models/stories260K.gguf");
    const auto original = read_all(ember_test::shared_file("models/stories260K.gguf").string());
    REQUIRE(original.size() == 1185376);
    const Outcome o = run_mutations(original, 2500, 12345u);
    INFO("stories260K mutants: " << o.loaded << " loaded, " << o.rejected << " rejected");
    CHECK(o.loaded > 200);    // value/data corruptions that stay well-formed
    CHECK(o.rejected > 1200); // structural corruptions
}

TEST_CASE("corrupted copies of stories260K-Q4_0 load or throw ember::Error", "[gguf][mutation]") {
    EMBER_REQUIRE_SHARED("models/stories260K-Q4_0.gguf");
    const auto original = read_all(ember_test::shared_file("models/stories260K-Q4_0.gguf").string());
    const Outcome o = run_mutations(original, 1500, 777u);
    INFO("stories260K-Q4_0 mutants: " << o.loaded << " loaded, " << o.rejected << " rejected");
    CHECK(o.loaded > 100);
    CHECK(o.rejected > 600);
}

TEST_CASE("a corrupted key or tensor info is named in the error", "[gguf][mutation]") {
    EMBER_REQUIRE_SHARED("models/stories260K-Q4_0.gguf");
    const auto original = read_all(ember_test::shared_file("models/stories260K-Q4_0.gguf").string());
    const Fields fields = Walker(original).walk();
    REQUIRE(fields.named.size() > 100);
    for (const NamedField& f : fields.named) {
        // A value type or tensor type no GGUF defines; a dimension or offset far past the file.
        const std::uint64_t bad = f.size == 4 ? 1000u : (std::uint64_t{1} << 62) + 7;
        auto buf = original;
        std::memcpy(&buf[f.at], &bad, f.size);
        INFO(f.owner << ": " << f.what << " at byte " << f.at << " set to " << bad);
        try {
            (void)File::from_copy(buf.data(), buf.size(), "mutant.gguf");
            FAIL("the corrupted file loaded");
        } catch (const ember::Error& e) {
            CHECK_THAT(e.what(), Catch::StartsWith("mutant.gguf: ") && Catch::Contains(f.owner));
        }
    }
}

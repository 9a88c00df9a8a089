// Saved states are fully checked (issue #16): every byte of a small saved state flipped is
// detected before anything changes; a model file with the same header and other weights is
// "another model" (#17 item 10); state files must be regular files, errors name them, and
// save_state_file never replaces a directory, FIFO or device.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <sys/stat.h>
#include <unistd.h>

#include "gguf/gguf_file.hpp"
#include "gguf/gguf_writer.hpp"
#include "runtime/hash.hpp"
#include "session_test_util.hpp"

using ember::Session;
using ember::Status;
using session_test::gopts;
using session_test::seeded;
using session_test::sopts;
using session_test::stories;

namespace {

namespace fs = std::filesystem;

fs::path scratch_dir() {
    const auto dir = fs::temp_directory_path() / ("ember_state_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    return dir;
}

}  // namespace

TEST_CASE("hash64 is xxHash64 (the published test values); the block hash ignores the thread count", "[state]") {
    const auto h = [](std::string_view s, std::uint64_t seed = 0) {
        return ember::hash64({reinterpret_cast<const std::uint8_t*>(s.data()), s.size()}, seed);
    };
    CHECK(h("") == 0xEF46DB3751D8E999ull);
    CHECK(h("a") == 0xD24EC4F1A98C6E5Bull);
    CHECK(h("abc") == 0x44BC2CF5AD770999ull);
    CHECK(h("Nobody inspects the spammish repetition") == 0xFBCEA83C8A378BF1ull);
    std::vector<std::uint8_t> big(9u << 20);
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i * 2654435761u >> 13);
    const std::uint64_t one = ember::hash64_blocks(big, 1);
    CHECK(ember::hash64_blocks(big, 2) == one);
    CHECK(ember::hash64_blocks(big, 3) == one);
    big[7u << 20] ^= 1;
    CHECK(ember::hash64_blocks(big, 2) != one);
}

TEST_CASE("state mutation: every flipped byte of a saved state is detected, nothing changes", "[state]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    Session a(model, sopts(32));
    auto sa = seeded(7);
    REQUIRE(a.prefill(model.tokenize("Once upon a time")) == Status::ok);
    a.generate(sa, gopts(3));
    const auto state = a.save_state(&sa, "a chat history");

    Session target(model, sopts(32));
    REQUIRE(target.prefill(model.tokenize("The dog")) == Status::ok);
    auto sampler = seeded(3);
    std::string user = "unchanged";
    const auto before = target.save_state(&sampler);
    std::size_t n_flips = 0, n_detected = 0;
    for (const std::uint8_t mask : {0x01, 0x80, 0xFF}) {
        for (std::size_t i = 0; i < state.size(); ++i) {
            auto bad = state;
            bad[i] ^= mask;
            ++n_flips;
            try {
                target.restore_state(bad, &sampler, &user);
            } catch (const ember::Error&) {
                ++n_detected;
            }
        }
    }
    INFO(state.size() << "-byte state");
    CHECK(n_detected == n_flips);
    CHECK(n_flips == 3 * state.size());
    CHECK(target.save_state(&sampler) == before);  // session and sampler unchanged
    CHECK(user == "unchanged");
    // The intact state restores, user data included.
    target.restore_state(state, &sampler, &user);
    CHECK(target.tokens() == a.tokens());
    CHECK(user == "a chat history");
}

TEST_CASE("state: a model file with the same header and other weights is another model", "[state]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    // stories260K with one weight changed: same header, metadata and shapes.
    const auto file = ember::gguf::File::open(ember_test::shared_file(session_test::kModel).string());
    std::vector<std::uint8_t> changed;
    ember::gguf::Writer w;
    w.copy_metadata(file);
    for (const auto& t : file.tensors()) {
        std::span<const std::uint8_t> data(t.data, static_cast<std::size_t>(t.n_bytes));
        if (t.name == "output_norm.weight") {
            changed.assign(data.begin(), data.end());
            changed[0] ^= 0x01;  // the lowest mantissa bit of the first norm weight
            data = changed;
        }
        w.add_tensor_view(t.name, t.type, std::vector<std::int64_t>(t.ne, t.ne + t.n_dims), data);
    }
    const auto bytes = w.write_to_bytes();
    REQUIRE(bytes.size() == file.bytes().size());
    REQUIRE(std::equal(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(file.data_offset()),
                       file.bytes().begin()));  // the header and metadata are the same
    ember::ModelOptions mo;
    mo.threads = 1;
    const auto other = ember::Model::load_from_memory(bytes.data(), bytes.size(), mo);

    Session a(model, sopts(32));
    REQUIRE(a.prefill(model.tokenize("Once upon a time")) == Status::ok);
    Session b(other, sopts(32));
    CHECK_THROWS_WITH(b.restore_state(a.save_state()), Catch::Contains("another model"));
    CHECK(b.n_past() == 0);
    REQUIRE(b.prefill(other.tokenize("Once")) == Status::ok);
    CHECK_THROWS_WITH(a.restore_state(b.save_state()), Catch::Contains("another model"));
    // The same bytes loaded again are the same model.
    const auto same = ember::Model::load_from_memory(file.bytes().data(), file.bytes().size(), mo);
    Session c(same, sopts(32));
    c.restore_state(a.save_state());
    CHECK(c.tokens() == a.tokens());
}

TEST_CASE("state files: regular files only, errors name the file, non-regular targets are kept", "[state]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    const auto dir = scratch_dir();
    Session s(model, sopts(32));
    REQUIRE(s.prefill(model.tokenize("Once upon a time")) == Status::ok);
    const auto tokens = s.tokens();

    const std::string fifo = (dir / "fifo").string(), link = (dir / "null_link").string();
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    fs::create_symlink("/dev/null", link);
    for (const std::string& target : {dir.string(), fifo, link}) {
        CHECK_THROWS_WITH(s.save_state_file(target), Catch::Contains(target) && Catch::Contains("only a regular file"));
    }
    CHECK(fs::is_fifo(fifo));
    CHECK(fs::is_symlink(link));
    CHECK_THROWS_WITH(s.save_state_file((dir / "no_dir" / "x").string()), Catch::Contains("no_dir"));
    for (const std::string& source : {dir.string(), fifo, std::string("/dev/zero")}) {
        CHECK_THROWS_WITH(s.restore_state_file(source), Catch::Contains(source) && Catch::Contains("not a session state"));
    }
    // A file larger than any state of this session is refused before it is read.
    const std::string big = (dir / "big.bin").string();
    { std::ofstream(big, std::ios::binary).seekp((std::int64_t{1} << 30) - 1) << 'x'; }  // sparse 1 GiB
    CHECK_THROWS_WITH(s.restore_state_file(big), Catch::Contains(big) && Catch::Contains("more than a session state"));

    // A corrupt file names the file, not <memory>; the session is unchanged.
    const std::string good = (dir / "good.state").string();
    s.save_state_file(good);
    std::vector<char> bytes;
    {
        std::ifstream in(good, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    bytes[bytes.size() / 2] ^= 0x10;
    const std::string bad = (dir / "bad.state").string();
    std::ofstream(bad, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    Session t(model, sopts(32));
    CHECK_THROWS_WITH(t.restore_state_file(bad), Catch::Contains(bad) && Catch::Contains("checksum"));
    CHECK(t.n_past() == 0);
    t.restore_state_file(good);
    CHECK(t.tokens() == tokens);
    // Saving over an existing regular file replaces it and leaves no temporary file.
    s.save_state_file(bad);
    std::size_t n_files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n_files;
    CHECK(n_files == 5);  // fifo, null_link, big.bin, good.state, bad.state
    fs::remove_all(dir);
}

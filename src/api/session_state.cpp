// Session::save_state / restore_state: the session as versioned little-endian bytes.
//
// Layout, version 3 (integers little-endian, floats IEEE-754 binary32 little-endian):
//   char[8] magic "EMBERSES"   u32 version (3)          u32 flags (bit 0: logits present)
//   u64 n_layer   u64 n_embd_kv   u64 n_vocab   u64 model fingerprint (hash of every byte of the
//   model file: header, metadata and tensor data)   u64 n_ctx of the saving session
//   u64 n_past   u64 sampler state bytes (0: none)   u64 user data bytes
//   i32 tokens[n_past]   f32 logits[n_vocab] (flag)   u8 sampler state[...]   u8 user data[...]
//   per layer: u64 prefix_end, u64 tail_begin: the layer holds positions [0, prefix_end) and
//     [tail_begin, n_past) (all of them except in sliding-window layers; model/kv_cache.hpp)
//   per layer: f32 keys[held][n_embd_kv], f32 values[held][n_embd_kv] (held positions in order)
//   u64 xxHash64 of every byte before it
// Restoring checks the checksum over every byte before any field is trusted, then the header
// against this model and session, and only then changes the session and the sampler. Versions
// 1 and 2 carried a fingerprint of the metadata only; they are refused (make the state again).
#include <bit>
#include <cstring>
#include <limits>

#include "api/session_impl.hpp"
#include "model/kv_type.hpp"
#include "ember/sampler.hpp"
#include "runtime/fail.hpp"
#include "runtime/file_io.hpp"
#include "runtime/hash.hpp"
#include "runtime/memory.hpp"

namespace ember {
namespace {

static_assert(std::endian::native == std::endian::little, "session state assumes a little-endian host");

constexpr char kMagic[8] = {'E', 'M', 'B', 'E', 'R', 'S', 'E', 'S'};
constexpr std::uint32_t kStateVersion = 3;
constexpr std::uint32_t kFlagLogits = 1;
constexpr std::size_t kHeaderBytes = 8 + 4 + 4 + 8 * 8;
constexpr std::size_t kChecksumBytes = 8;
// A bound on Sampler::save_state's output (a full penalty window takes 4 MiB), for the size of
// state files read whole.
constexpr std::uint64_t kMaxSamplerState = std::uint64_t{64} << 20;

class Writer {
public:
    explicit Writer(std::size_t reserve) { out_.reserve(reserve); }
    void bytes(const void* p, std::size_t n) {
        const auto* b = static_cast<const std::uint8_t*>(p);
        out_.insert(out_.end(), b, b + n);
    }
    void u32(std::uint32_t v) { bytes(&v, sizeof v); }
    void u64(std::uint64_t v) { bytes(&v, sizeof v); }
    std::vector<std::uint8_t> take() { return std::move(out_); }
    std::span<const std::uint8_t> view() const { return out_; }

private:
    std::vector<std::uint8_t> out_;
};

class Reader {
public:
    Reader(std::span<const std::uint8_t> in, const std::string& name) : in_(in), name_(name) {}
    const std::uint8_t* take(std::size_t n, const char* what) {
        if (n > in_.size() - pos_) {
            fail(name_ + ": session state truncated at byte " + std::to_string(pos_) + " reading " +
                 what + " (" + std::to_string(in_.size()) + " bytes)");
        }
        const std::uint8_t* p = in_.data() + pos_;
        pos_ += n;
        return p;
    }
    std::uint32_t u32(const char* what) {
        std::uint32_t v;
        std::memcpy(&v, take(sizeof v, what), sizeof v);
        return v;
    }
    std::uint64_t u64(const char* what) {
        std::uint64_t v;
        std::memcpy(&v, take(sizeof v, what), sizeof v);
        return v;
    }

private:
    std::span<const std::uint8_t> in_;
    const std::string& name_;
    std::size_t pos_ = 0;
};

void expect_equal(const std::string& name, const char* what, std::uint64_t saved, std::uint64_t here) {
    if (saved != here) {
        fail(name + ": session state is from another model: " + what + " " + std::to_string(saved) +
             ", this model has " + std::to_string(here));
    }
}

// Bytes before the sampler state: header, tokens, logits (saturating: n_past is not trusted yet).
std::uint64_t before_sampler_bytes(const model::ModelConfig& c, std::uint64_t n_past, bool has_logits) {
    std::uint64_t n = saturating_add(kHeaderBytes, saturating_mul(n_past, sizeof(Token)));
    return has_logits ? saturating_add(n, static_cast<std::uint64_t>(c.n_vocab) * sizeof(float)) : n;
}

}  // namespace

std::vector<std::uint8_t> Session::save_state(const Sampler* sampler, std::string_view user_data) const {
    const Impl& s = *impl_;
    const auto& c = s.model_impl->config;
    if (user_data.size() > kMaxStateUserData) {
        fail("Session::save_state: user data of " + std::to_string(user_data.size()) + " bytes is over the limit of " +
             std::to_string(kMaxStateUserData));
    }
    const std::vector<std::uint8_t> sampler_state = sampler ? sampler->save_state() : std::vector<std::uint8_t>{};
    const auto n_past = static_cast<std::size_t>(s.n_past);
    const auto row_bytes = static_cast<std::size_t>(c.n_embd_kv()) * sizeof(float);
    std::vector<model::KvCache::Held> held;
    std::size_t kv_rows = 0;
    for (std::int64_t il = 0; il < c.n_layer; ++il) {
        held.push_back(s.cache.held(il, s.n_past));
        kv_rows += static_cast<std::size_t>(held.back().prefix_end + s.n_past - held.back().tail_begin);
    }
    Writer w(static_cast<std::size_t>(before_sampler_bytes(c, n_past, s.has_logits)) + sampler_state.size() +
             user_data.size() + 16 * held.size() + 2 * kv_rows * row_bytes + kChecksumBytes);
    w.bytes(kMagic, sizeof kMagic);
    w.u32(kStateVersion);
    w.u32(s.has_logits ? kFlagLogits : 0);
    w.u64(static_cast<std::uint64_t>(c.n_layer));
    w.u64(static_cast<std::uint64_t>(c.n_embd_kv()));
    w.u64(static_cast<std::uint64_t>(c.n_vocab));
    w.u64(s.model_impl->fingerprint());
    w.u64(static_cast<std::uint64_t>(s.n_ctx));
    w.u64(n_past);
    w.u64(sampler_state.size());
    w.u64(user_data.size());
    w.bytes(s.tokens.data(), n_past * sizeof(Token));
    if (s.has_logits) w.bytes(s.logits.data(), s.logits.size() * sizeof(float));
    w.bytes(sampler_state.data(), sampler_state.size());
    w.bytes(user_data.data(), user_data.size());
    for (const auto& h : held) {
        w.u64(static_cast<std::uint64_t>(h.prefix_end));
        w.u64(static_cast<std::uint64_t>(h.tail_begin));
    }
    // Rows as F32 whatever the cache stores (F16 and Q8_0 rows come back exactly when restored
    // into a cache of the same type), keys of the held positions, then values.
    std::vector<float> row(static_cast<std::size_t>(c.n_embd_kv()));
    for (std::int64_t il = 0; il < c.n_layer; ++il) {
        const auto& h = held[static_cast<std::size_t>(il)];
        for (const bool keys : {true, false}) {
            const auto put = [&](std::int64_t first, std::int64_t end) {
                for (std::int64_t p = first; p < end; ++p) {
                    if (keys) {
                        s.cache.load_keys(il, p, row.data());
                    } else {
                        s.cache.load_values(il, p, row.data());
                    }
                    w.bytes(row.data(), row_bytes);
                }
            };
            put(0, h.prefix_end);
            put(h.tail_begin, s.n_past);
        }
    }
    w.u64(hash64(w.view()));
    return w.take();
}

void Session::restore_state(std::span<const std::uint8_t> bytes, Sampler* sampler, std::string* user_data) {
    restore_from(bytes, sampler, user_data, "<memory>");
}

void Session::restore_from(std::span<const std::uint8_t> bytes, Sampler* sampler, std::string* user_data,
                           const std::string& name) {
    Impl& s = *impl_;
    const auto& c = s.model_impl->config;
    Reader r(bytes, name);
    if (std::memcmp(r.take(sizeof kMagic, "the magic"), kMagic, sizeof kMagic) != 0) {
        fail(name + ": not an ember session state (bad magic at byte 0)");
    }
    const std::uint32_t version = r.u32("the version");
    if (version != kStateVersion) {
        fail(name + ": session state version " + std::to_string(version) + " is not supported (expected " +
             std::to_string(kStateVersion) + "; save the state again with this version)");
    }
    // Every byte is checked before any field is trusted.
    if (bytes.size() < kHeaderBytes + kChecksumBytes) {
        fail(name + ": session state truncated: " + std::to_string(bytes.size()) + " bytes, a header needs " +
             std::to_string(kHeaderBytes + kChecksumBytes));
    }
    std::uint64_t checksum;
    std::memcpy(&checksum, bytes.data() + bytes.size() - kChecksumBytes, kChecksumBytes);
    if (checksum != hash64(bytes.first(bytes.size() - kChecksumBytes))) {
        fail(name + ": session state checksum mismatch (corrupt or truncated)");
    }
    const std::uint32_t flags = r.u32("the flags");
    if ((flags & ~kFlagLogits) != 0) fail(name + ": session state has unknown flags " + std::to_string(flags));
    const bool has_logits = (flags & kFlagLogits) != 0;
    expect_equal(name, "n_layer", r.u64("n_layer"), static_cast<std::uint64_t>(c.n_layer));
    expect_equal(name, "n_embd_kv", r.u64("n_embd_kv"), static_cast<std::uint64_t>(c.n_embd_kv()));
    expect_equal(name, "n_vocab", r.u64("n_vocab"), static_cast<std::uint64_t>(c.n_vocab));
    expect_equal(name, "fingerprint (a hash of the model file)", r.u64("the model fingerprint"),
                 s.model_impl->fingerprint());
    const std::uint64_t saved_ctx = r.u64("n_ctx");
    const std::uint64_t n_past = r.u64("n_past");
    const std::uint64_t n_sampler = r.u64("the sampler state size");
    const std::uint64_t n_user = r.u64("the user data size");
    if (n_past > static_cast<std::uint64_t>(s.n_ctx)) {
        fail(name + ": session state holds " + std::to_string(n_past) + " tokens (saved with context " +
             std::to_string(saved_ctx) + "), more than this session's context of " + std::to_string(s.n_ctx));
    }
    if (has_logits == (n_past == 0)) fail(name + ": session state has inconsistent logits flag");
    // The exact size follows from the header and the layer table (saturating sums: the sizes
    // are compared with the bytes there are before anything is read at an offset from them).
    const auto n_layer = static_cast<std::size_t>(c.n_layer);
    const std::size_t row_bytes = static_cast<std::size_t>(c.n_embd_kv()) * sizeof(float);
    const std::uint64_t table_at =
        saturating_add(before_sampler_bytes(c, n_past, has_logits), saturating_add(n_sampler, n_user));
    const std::uint64_t table_bytes = 16 * static_cast<std::uint64_t>(n_layer);
    if (saturating_add(table_at, table_bytes + kChecksumBytes) > bytes.size()) {
        fail(name + ": session state has " + std::to_string(bytes.size()) + " bytes, fewer than its header says (corrupt)");
    }
    std::vector<model::KvCache::Held> held(n_layer);
    std::size_t kv_rows = 0;
    for (std::size_t il = 0; il < n_layer; ++il) {
        const std::uint8_t* entry = bytes.data() + table_at + 16 * il;
        std::uint64_t a, b;
        std::memcpy(&a, entry, 8);
        std::memcpy(&b, entry + 8, 8);
        if (a > b || b > n_past) {
            fail(name + ": session state layer " + std::to_string(il) + " holds positions [0, " + std::to_string(a) +
                 ") and [" + std::to_string(b) + ", " + std::to_string(n_past) + "): not a valid layout");
        }
        held[il] = {static_cast<std::int64_t>(a), static_cast<std::int64_t>(b)};
        kv_rows += static_cast<std::size_t>(a + n_past - b);
    }
    const std::uint64_t expected = table_at + table_bytes + 2 * kv_rows * row_bytes + kChecksumBytes;
    if (bytes.size() != expected) {
        fail(name + ": session state has " + std::to_string(bytes.size()) + " bytes, its header says " +
             std::to_string(expected) + " (corrupt)");
    }
    const std::uint8_t* token_bytes = r.take(static_cast<std::size_t>(n_past) * sizeof(Token), "the tokens");
    for (std::uint64_t i = 0; i < n_past; ++i) {
        Token t;
        std::memcpy(&t, token_bytes + i * sizeof(Token), sizeof t);
        if (!s.valid_token(t)) {
            fail(name + ": session state token " + std::to_string(i) + " has id " + std::to_string(t) +
                 " outside the vocabulary");
        }
    }
    const std::uint8_t* logit_bytes =
        has_logits ? r.take(static_cast<std::size_t>(c.n_vocab) * sizeof(float), "the logits") : nullptr;
    const std::span<const std::uint8_t> sampler_state(r.take(static_cast<std::size_t>(n_sampler), "the sampler state"),
                                                      static_cast<std::size_t>(n_sampler));
    const std::uint8_t* user_bytes = r.take(static_cast<std::size_t>(n_user), "the user data");
    r.take(static_cast<std::size_t>(table_bytes), "the layer table");
    const std::uint8_t* kv_bytes = r.take(2 * kv_rows * row_bytes, "the KV cache");
    s.cache.check_restorable(held, static_cast<std::int64_t>(n_past), name);

    // Everything is checked; the sampler validates its own bytes and stays unchanged on error.
    if (sampler) {
        if (n_sampler == 0) fail(name + ": session state holds no sampler state to restore");
        try {
            sampler->restore_state(sampler_state);
        } catch (const Error& e) {
            fail_naming(name, e);
        }
    }
    if (user_data) user_data->assign(reinterpret_cast<const char*>(user_bytes), static_cast<std::size_t>(n_user));
    s.tokens.assign(reinterpret_cast<const Token*>(token_bytes),
                    reinterpret_cast<const Token*>(token_bytes) + n_past);
    s.n_past = static_cast<int>(n_past);
    s.n_logit_rows = 0;
    s.rows_kept = false;
    s.has_logits = has_logits;
    if (has_logits) std::memcpy(s.logits.data(), logit_bytes, s.logits.size() * sizeof(float));
    s.cache.clear();
    const bool room = s.cache.prepare_restore(static_cast<std::int64_t>(n_past));
    EMBER_ASSERT(room);  // a session's own pool holds its context
    std::vector<float> row(static_cast<std::size_t>(c.n_embd_kv())), values(row.size());
    for (std::int64_t il = 0; il < c.n_layer; ++il) {
        // Keys of the held positions, then values; rows this cache does not keep are skipped.
        const auto& h = held[static_cast<std::size_t>(il)];
        const std::int64_t n_rows = h.prefix_end + static_cast<std::int64_t>(n_past) - h.tail_begin;
        std::int64_t at = 0;
        const auto copy_range = [&](std::int64_t first, std::int64_t end) {
            for (std::int64_t p = first; p < end; ++p, ++at) {
                if (!s.cache.holds(il, p)) continue;
                const std::uint8_t* src = kv_bytes + static_cast<std::size_t>(at) * row_bytes;
                std::memcpy(row.data(), src, row_bytes);
                std::memcpy(values.data(), src + static_cast<std::size_t>(n_rows) * row_bytes, row_bytes);
                s.cache.store(il, p, row.data(), values.data());
            }
        };
        copy_range(0, h.prefix_end);
        copy_range(h.tail_begin, static_cast<std::int64_t>(n_past));
        kv_bytes += 2 * static_cast<std::size_t>(n_rows) * row_bytes;
    }
    s.stream->reset();
}

void Session::save_state_file(const std::string& path, const Sampler* sampler, std::string_view user_data) const {
    const std::vector<std::uint8_t> bytes = save_state(sampler, user_data);
    OutputFile out(path);  // refuses a device, FIFO or directory; replaces the file only at commit
    out.write(bytes.data(), bytes.size());
    out.commit();
}

void Session::restore_state_file(const std::string& path, Sampler* sampler, std::string* user_data) {
    // The largest state this session can hold (every layer holding every position) bounds what
    // is read.
    const auto& c = impl_->model_impl->config;
    const auto n_ctx = static_cast<std::uint64_t>(impl_->n_ctx);
    const std::uint64_t kv = saturating_mul(saturating_mul(2 * static_cast<std::uint64_t>(c.n_layer), n_ctx),
                                            static_cast<std::uint64_t>(c.n_embd_kv()) * sizeof(float));
    std::uint64_t limit = saturating_add(before_sampler_bytes(c, n_ctx, true), kv);
    limit = saturating_add(limit, 16 * static_cast<std::uint64_t>(c.n_layer) + kChecksumBytes);
    limit = saturating_add(limit, kMaxSamplerState + kMaxStateUserData);
    const std::vector<std::uint8_t> bytes = read_regular_file(path, limit, "session state");
    restore_from(bytes, sampler, user_data, path);
}

}  // namespace ember

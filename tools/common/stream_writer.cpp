#include "common/stream_writer.hpp"

#include <cstring>

#include "runtime/fail.hpp"
#include "runtime/memory.hpp"

namespace ember::tools {
namespace {

template <class T>
void append(std::string& out, T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out.append(b, sizeof(T));
}

void append_string(std::string& out, std::string_view s) {
    append<std::uint64_t>(out, s.size());
    out.append(s);
}

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

void StreamWriter::set(std::string_view key, gguf::MetaValue value) {
    if (file_ != nullptr) fail("StreamWriter: metadata " + std::string(key) + " set after begin()");
    if (key.empty()) fail("StreamWriter: empty metadata key");
    for (Entry& e : kvs_) {
        if (e.key == key) {
            e.value = std::move(value);
            return;
        }
    }
    kvs_.push_back({std::string(key), std::move(value)});
}

void StreamWriter::set_last(std::string_view key, gguf::MetaValue value) {
    remove(key);
    set(key, std::move(value));
}

bool StreamWriter::remove(std::string_view key) {
    for (auto it = kvs_.begin(); it != kvs_.end(); ++it) {
        if (it->key == key) {
            kvs_.erase(it);
            return true;
        }
    }
    return false;
}

bool StreamWriter::has(std::string_view key) const noexcept {
    for (const Entry& e : kvs_) {
        if (e.key == key) return true;
    }
    return false;
}

void StreamWriter::copy_metadata(const gguf::File& file) {
    for (const gguf::KeyValue& kv : file.metadata()) set(kv.key, gguf::MetaValue::from(kv.value));
}

void StreamWriter::add_tensor(std::string_view name, TensorType type,
                              const std::vector<std::int64_t>& dims) {
    if (file_ != nullptr) fail("StreamWriter: tensor " + std::string(name) + " added after begin()");
    if (name.empty()) fail("StreamWriter: empty tensor name");
    for (const Tensor& t : tensors_) {
        if (t.name == name) fail("StreamWriter: duplicate tensor " + std::string(name));
    }
    const auto traits = tensor_type_traits(static_cast<std::uint32_t>(type));
    if (!traits) fail("StreamWriter: tensor " + std::string(name) + " has an unknown type");
    if (dims.empty() || dims.size() > 4) fail("StreamWriter: tensor " + std::string(name) + " needs 1 to 4 dims");
    std::uint64_t n = 1;
    for (std::int64_t d : dims) {
        if (d <= 0) fail("StreamWriter: tensor " + std::string(name) + " has a dimension <= 0");
        n *= static_cast<std::uint64_t>(d);
    }
    if (dims[0] % traits->block_size != 0) {
        fail("StreamWriter: tensor " + std::string(name) + ": row of " + std::to_string(dims[0]) +
             " is not a multiple of the " + std::string(traits->name) + " block size");
    }
    const std::uint64_t n_bytes =
        n / static_cast<std::uint64_t>(traits->block_size) * static_cast<std::uint64_t>(traits->block_bytes);
    tensors_.push_back({std::string(name), type, dims, n_bytes});
}

std::uint64_t StreamWriter::alignment() const {
    for (const Entry& e : kvs_) {
        if (e.key == "general.alignment") {
            if (e.value.type() != gguf::ValueType::u32) fail("StreamWriter: general.alignment must be u32");
            std::uint32_t a = 0;
            std::memcpy(&a, e.value.payload().data(), sizeof a);
            if (a == 0 || (a & (a - 1)) != 0) fail("StreamWriter: general.alignment must be a power of two");
            return a;
        }
    }
    return 32;
}

std::uint64_t StreamWriter::file_bytes() const {
    const std::uint64_t a = alignment();
    std::uint64_t n = header().size();
    for (const Tensor& t : tensors_) n = saturating_add(n, align_up(t.n_bytes, a));
    return n;
}

void StreamWriter::begin(const std::string& path) {
    if (file_ != nullptr || finished_) fail("StreamWriter: begin() called twice");
    alignment_ = alignment();
    const std::string h = header();
    check_output_target(path);
    const std::uint64_t need = file_bytes(), free = free_disk_bytes(path);
    if (need > free) {
        fail(path + ": the file needs " + format_bytes(need) + ", more than the " + format_bytes(free) +
             " free on its file system");
    }
    file_ = std::make_unique<OutputFile>(path);
    file_->write(h.data(), h.size());
    current_ = 0;
    current_done_ = 0;
}

std::string StreamWriter::header() const {
    const std::uint64_t a = alignment();
    std::string h;
    append<std::uint32_t>(h, 0x46554747u);  // "GGUF"
    append<std::uint32_t>(h, 3);
    append<std::uint64_t>(h, tensors_.size());
    append<std::uint64_t>(h, kvs_.size());
    for (const Entry& e : kvs_) {
        append_string(h, e.key);
        append<std::uint32_t>(h, static_cast<std::uint32_t>(e.value.type()));
        h += e.value.payload();
    }
    std::uint64_t offset = 0;
    for (const Tensor& t : tensors_) {
        append_string(h, t.name);
        append<std::uint32_t>(h, static_cast<std::uint32_t>(t.dims.size()));
        for (std::int64_t d : t.dims) append<std::uint64_t>(h, static_cast<std::uint64_t>(d));
        append<std::uint32_t>(h, static_cast<std::uint32_t>(t.type));
        append<std::uint64_t>(h, offset);
        offset = align_up(offset + t.n_bytes, a);
    }
    h.resize(align_up(h.size(), a), '\0');
    return h;
}

void StreamWriter::pad_current() {
    const std::uint64_t n = tensors_[current_].n_bytes;
    const std::uint64_t pad = align_up(n, alignment_) - n;
    static const char zeros[256] = {};
    for (std::uint64_t left = pad; left > 0;) {
        const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(left, sizeof zeros));
        file_->write(zeros, k);
        left -= k;
    }
}

void StreamWriter::write(const void* data, std::size_t n) {
    if (file_ == nullptr) fail("StreamWriter: write() before begin()");
    const auto* p = static_cast<const std::uint8_t*>(data);
    while (n > 0) {
        if (current_ >= tensors_.size()) fail(file_->path() + ": more tensor data than the tensors declared");
        const std::uint64_t room = tensors_[current_].n_bytes - current_done_;
        const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(room, n));
        file_->write(p, k);
        p += k;
        n -= k;
        current_done_ += k;
        if (current_done_ == tensors_[current_].n_bytes) {
            pad_current();
            ++current_;
            current_done_ = 0;
        }
    }
}

void StreamWriter::finish() {
    if (file_ == nullptr) fail("StreamWriter: finish() before begin()");
    if (current_ != tensors_.size()) {
        fail(file_->path() + ": tensor " + tensors_[current_].name + " got " + std::to_string(current_done_) +
             " of its " + std::to_string(tensors_[current_].n_bytes) + " bytes");
    }
    file_->commit();
    file_.reset();
    finished_ = true;
}

}  // namespace ember::tools

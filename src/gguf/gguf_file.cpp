// GGUF parsing and validation. Every count, length and offset read from the file is checked
// against the bytes that remain before anything is allocated or dereferenced.
#include "gguf/gguf_file.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "ember/text.hpp"
#include "gguf/mapped_file.hpp"
#include "runtime/fail.hpp"

namespace ember::gguf {

static_assert(std::endian::native == std::endian::little, "GGUF parsing assumes a little-endian host");

namespace {

// Smallest encodings, used to bound counts before allocating.
constexpr std::uint64_t kMinKvBytes = 8 + 4 + 1;              // key length, type, 1-byte value
constexpr std::uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;  // name len, n_dims, ne0, type, off

bool known_value_type(std::uint32_t t) noexcept { return t <= 12; }

// Bytes of a fixed-size value, 0 for string and array.
std::uint64_t fixed_size(ValueType t) noexcept {
    switch (t) {
        case ValueType::u8: case ValueType::i8: case ValueType::boolean: return 1;
        case ValueType::u16: case ValueType::i16: return 2;
        case ValueType::u32: case ValueType::i32: case ValueType::f32: return 4;
        case ValueType::u64: case ValueType::i64: case ValueType::f64: return 8;
        case ValueType::string: case ValueType::array: return 0;
    }
    return 0;
}

// Smallest possible encoding of one array element of type t.
std::uint64_t min_element_size(ValueType t) noexcept {
    if (t == ValueType::string) return 8;
    if (t == ValueType::array) return 4 + 8;
    return fixed_size(t);
}

// Names come from untrusted bytes: keep messages one printable line.
std::string in_quotes(std::string_view s) {
    std::string q(1, '\'');
    q += printable(s, 200);
    q += '\'';
    return q;
}

// Reads little-endian fields with bounds checks; errors carry the file name and a context
// ("key 'x' (entry at byte N)") plus the byte offset of the failing field.
class Reader {
public:
    Reader(const std::uint8_t* data, std::size_t size, const std::string& name)
        : data_(data), size_(size), name_(name) {}

    std::size_t pos() const noexcept { return pos_; }
    std::size_t remaining() const noexcept { return size_ - pos_; }
    void set_context(std::string context) { context_ = std::move(context); }

    [[noreturn]] void error_at(std::uint64_t at, const std::string& what) const {
        std::string msg = name_ + ": ";
        if (!context_.empty()) msg += context_ + ": ";
        msg += what + " (at byte " + std::to_string(at) + ")";
        fail(msg);
    }

    void need(std::uint64_t n, const char* what) const {
        if (n > remaining()) {
            error_at(pos_, std::string("truncated file: ") + what + " needs " + std::to_string(n) +
                               " bytes but only " + std::to_string(remaining()) + " remain (file has " +
                               std::to_string(size_) + " bytes)");
        }
    }

    template <class T>
    T read(const char* what) {
        need(sizeof(T), what);
        T v;
        std::memcpy(&v, data_ + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }

    std::string_view read_string(const char* what) {
        const std::size_t at = pos_;
        const auto len = read<std::uint64_t>(what);
        if (len > remaining()) {
            error_at(at, std::string(what) + " length " + std::to_string(len) + " runs past the end of the file (" +
                             std::to_string(remaining()) + " bytes remain)");
        }
        std::string_view s(reinterpret_cast<const char*>(data_ + pos_), static_cast<std::size_t>(len));
        pos_ += static_cast<std::size_t>(len);
        return s;
    }

private:
    const std::uint8_t* data_;
    std::size_t size_;
    std::size_t pos_ = 0;
    const std::string& name_;
    std::string context_;
};

Value parse_value(Reader& r, ValueType type, int depth);

Value parse_array(Reader& r, int depth) {
    const std::size_t at = r.pos();
    const auto elem_raw = r.read<std::uint32_t>("array element type");
    if (!known_value_type(elem_raw)) r.error_at(at, "unknown array element type " + std::to_string(elem_raw));
    const auto elem = static_cast<ValueType>(elem_raw);
    if (elem == ValueType::array && depth + 1 >= kMaxArrayDepth) {
        r.error_at(at, "arrays nested deeper than " + std::to_string(kMaxArrayDepth) + " levels");
    }
    const std::size_t count_at = r.pos();
    const auto count = r.read<std::uint64_t>("array length");
    const std::uint64_t min_size = min_element_size(elem);
    if (count > r.remaining() / min_size) {
        r.error_at(count_at, "array length " + std::to_string(count) + " of " + std::string(value_type_name(elem)) +
                                 " needs at least " + std::to_string(min_size) + " bytes each, only " +
                                 std::to_string(r.remaining()) + " bytes remain");
    }
    auto array = std::make_shared<Array>();
    array->element_type = elem;
    auto& items = array->items;
    items.resize(static_cast<std::size_t>(count));
    // Fast paths for the common large arrays (vocabularies, scores, token types): the count
    // check above already guarantees the bytes are there.
    if (elem == ValueType::string) {
        for (Value& item : items) {
            item.type = elem;
            item.data.emplace<std::string_view>(r.read_string("string"));
        }
    } else if (elem == ValueType::f32) {
        for (Value& item : items) {
            item.type = elem;
            item.data.emplace<double>(r.read<float>("f32 value"));
        }
    } else if (elem == ValueType::i32) {
        for (Value& item : items) {
            item.type = elem;
            item.data.emplace<std::int64_t>(r.read<std::int32_t>("i32 value"));
        }
    } else {
        for (Value& item : items) item = parse_value(r, elem, depth + 1);
    }
    Value v;
    v.type = ValueType::array;
    v.data = std::shared_ptr<const Array>(std::move(array));
    return v;
}

Value parse_value(Reader& r, ValueType type, int depth) {
    Value v;
    v.type = type;
    switch (type) {
        case ValueType::u8: v.data = std::uint64_t{r.read<std::uint8_t>("u8 value")}; break;
        case ValueType::u16: v.data = std::uint64_t{r.read<std::uint16_t>("u16 value")}; break;
        case ValueType::u32: v.data = std::uint64_t{r.read<std::uint32_t>("u32 value")}; break;
        case ValueType::u64: v.data = r.read<std::uint64_t>("u64 value"); break;
        case ValueType::i8: v.data = std::int64_t{r.read<std::int8_t>("i8 value")}; break;
        case ValueType::i16: v.data = std::int64_t{r.read<std::int16_t>("i16 value")}; break;
        case ValueType::i32: v.data = std::int64_t{r.read<std::int32_t>("i32 value")}; break;
        case ValueType::i64: v.data = r.read<std::int64_t>("i64 value"); break;
        case ValueType::f32: v.data = double{r.read<float>("f32 value")}; break;
        case ValueType::f64: v.data = r.read<double>("f64 value"); break;
        case ValueType::boolean: {
            const std::size_t at = r.pos();
            const auto b = r.read<std::uint8_t>("bool value");
            if (b > 1) r.error_at(at, "bool value " + std::to_string(b) + " is neither 0 nor 1");
            v.data = b != 0;
            break;
        }
        case ValueType::string: v.data = r.read_string("string"); break;
        case ValueType::array: return parse_array(r, depth);
    }
    return v;
}

std::string type_desc(const Value& v) {
    std::string s(value_type_name(v.type));
    if (v.type == ValueType::array) {
        if (const auto* a = std::get_if<std::shared_ptr<const Array>>(&v.data); a && *a) {
            s += " of " + std::string(value_type_name((*a)->element_type));
        }
    }
    return s;
}

[[noreturn]] void mismatch(std::string_view key, const Value& v, const char* wanted) {
    fail("key " + in_quotes(key) + ": expected " + wanted + ", found " + type_desc(v));
}

[[noreturn]] void out_of_range(std::string_view key, const Value& v, const std::string& shown, const char* wanted) {
    fail("key " + in_quotes(key) + ": " + type_desc(v) + " value " + shown + " does not fit in " + wanted);
}

std::string shown_int(const Value& v) {
    if (const auto* u = std::get_if<std::uint64_t>(&v.data)) return std::to_string(*u);
    if (const auto* i = std::get_if<std::int64_t>(&v.data)) return std::to_string(*i);
    return "?";
}

}  // namespace

std::string_view value_type_name(ValueType t) noexcept {
    switch (t) {
        case ValueType::u8: return "u8";
        case ValueType::i8: return "i8";
        case ValueType::u16: return "u16";
        case ValueType::i16: return "i16";
        case ValueType::u32: return "u32";
        case ValueType::i32: return "i32";
        case ValueType::f32: return "f32";
        case ValueType::boolean: return "bool";
        case ValueType::string: return "string";
        case ValueType::array: return "array";
        case ValueType::u64: return "u64";
        case ValueType::i64: return "i64";
        case ValueType::f64: return "f64";
    }
    return "unknown";
}

// ---- Value ----------------------------------------------------------------------------------

bool Value::is_integer() const noexcept {
    return std::holds_alternative<std::uint64_t>(data) || std::holds_alternative<std::int64_t>(data);
}

bool Value::is_float() const noexcept { return std::holds_alternative<double>(data); }

std::uint64_t Value::as_u64(std::string_view key) const {
    if (const auto* u = std::get_if<std::uint64_t>(&data)) return *u;
    if (const auto* i = std::get_if<std::int64_t>(&data)) {
        if (*i < 0) out_of_range(key, *this, shown_int(*this), "u64");
        return static_cast<std::uint64_t>(*i);
    }
    mismatch(key, *this, "an integer");
}

std::uint32_t Value::as_u32(std::string_view key) const {
    if (!is_integer()) mismatch(key, *this, "an integer");
    if (const auto* i = std::get_if<std::int64_t>(&data); i && *i < 0) {
        out_of_range(key, *this, shown_int(*this), "u32");
    }
    const std::uint64_t u = as_u64(key);
    if (u > std::numeric_limits<std::uint32_t>::max()) out_of_range(key, *this, shown_int(*this), "u32");
    return static_cast<std::uint32_t>(u);
}

std::int64_t Value::as_i64(std::string_view key) const {
    if (const auto* i = std::get_if<std::int64_t>(&data)) return *i;
    if (const auto* u = std::get_if<std::uint64_t>(&data)) {
        if (*u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
            out_of_range(key, *this, shown_int(*this), "i64");
        }
        return static_cast<std::int64_t>(*u);
    }
    mismatch(key, *this, "an integer");
}

float Value::as_f32(std::string_view key) const {
    if (const auto* d = std::get_if<double>(&data)) {
        // A finite double beyond float range would be undefined to cast.
        if (std::isfinite(*d) && std::fabs(*d) > static_cast<double>(std::numeric_limits<float>::max())) {
            out_of_range(key, *this, std::to_string(*d), "f32");
        }
        return static_cast<float>(*d);
    }
    if (const auto* u = std::get_if<std::uint64_t>(&data)) return static_cast<float>(*u);
    if (const auto* i = std::get_if<std::int64_t>(&data)) return static_cast<float>(*i);
    mismatch(key, *this, "a number");
}

bool Value::as_bool(std::string_view key) const {
    if (const auto* b = std::get_if<bool>(&data)) return *b;
    mismatch(key, *this, "bool");
}

std::string_view Value::as_string(std::string_view key) const {
    if (const auto* s = std::get_if<std::string_view>(&data)) return *s;
    mismatch(key, *this, "string");
}

const Array& Value::as_array(std::string_view key) const {
    if (const auto* a = std::get_if<std::shared_ptr<const Array>>(&data); a && *a) return **a;
    mismatch(key, *this, "array");
}

// ---- File -----------------------------------------------------------------------------------

struct File::Impl {
    std::string name;
    MappedFile map;                  // set by open()
    std::vector<std::uint8_t> copy;  // set by from_copy()
    std::span<const std::uint8_t> bytes;
    std::uint32_t version = 0;
    std::uint64_t alignment = kDefaultAlignment;
    std::uint64_t data_offset = 0;
    std::vector<KeyValue> metadata;
    std::unordered_map<std::string_view, std::size_t> key_index;
    std::vector<TensorInfo> tensors;
    std::unordered_map<std::string_view, std::size_t> tensor_index;

    void parse();
    const KeyValue* find_kv(std::string_view key) const noexcept {
        const auto it = key_index.find(key);
        return it == key_index.end() ? nullptr : &metadata[it->second];
    }
    const KeyValue& require(std::string_view key) const {
        const KeyValue* kv = find_kv(key);
        if (kv == nullptr) {
            fail(name + ": key " + in_quotes(key) + " not found in the metadata (" + std::to_string(metadata.size()) +
                 " keys)");
        }
        return *kv;
    }
    // Runs a Value conversion and prefixes its error with the file name and entry offset.
    template <class F>
    auto convert(const KeyValue& kv, F&& f) const -> decltype(f(kv.value)) {
        try {
            return f(kv.value);
        } catch (const Error& e) {
            fail(name + ": " + e.what() + " (entry at byte " + std::to_string(kv.offset) + ")");
        }
    }
};

void File::Impl::parse() {
    Reader r(bytes.data(), bytes.size(), name);
    r.set_context("header");

    const auto magic = r.read<std::uint32_t>("magic");
    if (magic != kMagic) {
        std::string shown;
        for (int i = 0; i < 4; ++i) shown += static_cast<char>((magic >> (8 * i)) & 0xff);
        r.error_at(0, "not a GGUF file: magic is " + in_quotes(shown) + ", expected 'GGUF'");
    }
    version = r.read<std::uint32_t>("version");
    if (version == 1) {
        r.error_at(4, "GGUF version 1 is not supported (it used 32-bit counts); convert the model again with a "
                      "current llama.cpp");
    }
    if (version != 2 && version != 3) {
        const bool swapped = (version & 0xffff) == 0 && (version >> 16) != 0;
        r.error_at(4, "unsupported GGUF version " + std::to_string(version) +
                          (swapped ? " (a big-endian file? only little-endian GGUF is supported)"
                                   : " (supported: 2 and 3)"));
    }
    const std::size_t n_tensors_at = r.pos();
    const auto n_tensors = r.read<std::uint64_t>("tensor count");
    const std::size_t n_kv_at = r.pos();
    const auto n_kv = r.read<std::uint64_t>("metadata count");
    if (n_kv > r.remaining() / kMinKvBytes) {
        r.error_at(n_kv_at, "metadata count " + std::to_string(n_kv) + " is impossible: each entry needs at least " +
                                std::to_string(kMinKvBytes) + " bytes, only " + std::to_string(r.remaining()) +
                                " remain");
    }
    if (n_tensors > r.remaining() / kMinTensorInfoBytes) {
        r.error_at(n_tensors_at, "tensor count " + std::to_string(n_tensors) +
                                     " is impossible: each tensor info needs at least " +
                                     std::to_string(kMinTensorInfoBytes) + " bytes, only " +
                                     std::to_string(r.remaining()) + " remain");
    }

    // Metadata.
    metadata.reserve(static_cast<std::size_t>(n_kv));
    key_index.reserve(static_cast<std::size_t>(n_kv));
    for (std::uint64_t i = 0; i < n_kv; ++i) {
        const std::size_t at = r.pos();
        r.set_context("metadata entry " + std::to_string(i) + " (at byte " + std::to_string(at) + ")");
        KeyValue kv;
        kv.offset = at;
        kv.key = r.read_string("key");
        r.set_context("key " + in_quotes(kv.key) + " (entry at byte " + std::to_string(at) + ")");
        const std::size_t type_at = r.pos();
        const auto type_raw = r.read<std::uint32_t>("value type");
        if (!known_value_type(type_raw)) r.error_at(type_at, "unknown value type " + std::to_string(type_raw));
        kv.value = parse_value(r, static_cast<ValueType>(type_raw), 0);
        if (!key_index.emplace(kv.key, metadata.size()).second) {
            r.error_at(at, "duplicate key (first entry at byte " + std::to_string(metadata[key_index[kv.key]].offset) +
                               ")");
        }
        metadata.push_back(std::move(kv));
    }

    // Alignment.
    if (const KeyValue* kv = find_kv("general.alignment")) {
        r.set_context("key 'general.alignment' (entry at byte " + std::to_string(kv->offset) + ")");
        if (kv->value.type != ValueType::u32) {
            r.error_at(kv->offset, "must be a u32, found " + type_desc(kv->value));
        }
        const std::uint64_t a = std::get<std::uint64_t>(kv->value.data);
        if (a == 0 || !std::has_single_bit(a)) {
            r.error_at(kv->offset, "alignment " + std::to_string(a) + " is not a non-zero power of two");
        }
        alignment = a;
    }

    // Tensor infos.
    if (n_tensors > r.remaining() / kMinTensorInfoBytes) {
        r.set_context("header");
        r.error_at(n_tensors_at, "tensor count " + std::to_string(n_tensors) +
                                     " is impossible: each tensor info needs at least " +
                                     std::to_string(kMinTensorInfoBytes) + " bytes, only " +
                                     std::to_string(r.remaining()) + " remain after the metadata");
    }
    tensors.reserve(static_cast<std::size_t>(n_tensors));
    tensor_index.reserve(static_cast<std::size_t>(n_tensors));
    for (std::uint64_t i = 0; i < n_tensors; ++i) {
        const std::size_t at = r.pos();
        r.set_context("tensor info " + std::to_string(i) + " (at byte " + std::to_string(at) + ")");
        TensorInfo t;
        t.info_offset = at;
        t.name = r.read_string("tensor name");
        r.set_context("tensor " + in_quotes(t.name) + " (info at byte " + std::to_string(at) + ")");
        if (t.name.empty()) r.error_at(at, "empty tensor name");
        const std::size_t dims_at = r.pos();
        t.n_dims = r.read<std::uint32_t>("n_dims");
        if (t.n_dims < 1 || t.n_dims > 4) r.error_at(dims_at, "n_dims " + std::to_string(t.n_dims) + " is not in 1..4");
        for (std::uint32_t d = 0; d < t.n_dims; ++d) {
            const std::size_t ne_at = r.pos();
            const auto ne = r.read<std::uint64_t>("dimension");
            if (ne == 0 || ne > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
                r.error_at(ne_at, "dimension " + std::to_string(d) + " is " +
                                      (ne == 0 ? std::string("0") : std::to_string(ne) + " (too large)"));
            }
            t.ne[d] = static_cast<std::int64_t>(ne);
        }
        const std::size_t type_at = r.pos();
        const auto type_raw = r.read<std::uint32_t>("tensor type");
        const auto traits = tensor_type_traits(type_raw);
        if (!traits) r.error_at(type_at, "unknown tensor type " + std::to_string(type_raw));
        t.type = traits->type;
        const std::size_t off_at = r.pos();
        t.offset = r.read<std::uint64_t>("tensor data offset");

        std::int64_t n = 1;
        for (int d = 0; d < 4; ++d) {
            if (__builtin_mul_overflow(n, t.ne[d], &n)) {
                r.error_at(dims_at, "element count overflows (dims " + std::to_string(t.ne[0]) + " x " +
                                        std::to_string(t.ne[1]) + " x " + std::to_string(t.ne[2]) + " x " +
                                        std::to_string(t.ne[3]) + ")");
            }
        }
        t.n_elements = n;
        if (t.ne[0] % traits->block_size != 0) {
            r.error_at(dims_at, "ne[0] = " + std::to_string(t.ne[0]) + " is not a multiple of the " +
                                    std::string(traits->name) + " block size " + std::to_string(traits->block_size));
        }
        std::uint64_t n_bytes = 0;
        const auto n_blocks = static_cast<std::uint64_t>(n / traits->block_size);
        if (__builtin_mul_overflow(n_blocks, static_cast<std::uint64_t>(traits->block_bytes), &n_bytes)) {
            r.error_at(dims_at, "byte size overflows (" + std::to_string(n) + " elements of " +
                                    std::string(traits->name) + ")");
        }
        t.n_bytes = n_bytes;
        if (t.offset % alignment != 0) {
            r.error_at(off_at, "data offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
                                   std::to_string(alignment));
        }
        if (!tensor_index.emplace(t.name, tensors.size()).second) {
            r.error_at(at, "duplicate tensor name (first info at byte " +
                               std::to_string(tensors[tensor_index[t.name]].info_offset) + ")");
        }
        tensors.push_back(t);
    }

    // Data section: starts at the aligned end of the header.
    const std::uint64_t header_end = r.pos();
    const std::uint64_t aligned = (header_end + alignment - 1) / alignment * alignment;  // header_end < 2^63
    const std::uint64_t file_size = bytes.size();
    if (aligned > file_size) {
        if (!tensors.empty()) {
            r.set_context("header");
            r.error_at(header_end, "data section would start at byte " + std::to_string(aligned) +
                                       " (alignment " + std::to_string(alignment) + ") past the end of the file (" +
                                       std::to_string(file_size) + " bytes)");
        }
        data_offset = file_size;  // no tensors: an empty data section
    } else {
        data_offset = aligned;
    }
    const std::uint64_t data_size = file_size - data_offset;
    for (TensorInfo& t : tensors) {
        if (t.offset > data_size || t.n_bytes > data_size - t.offset) {
            fail(name + ": tensor " + in_quotes(t.name) + " (info at byte " + std::to_string(t.info_offset) +
                 "): data [" + std::to_string(t.offset) + ", " + std::to_string(t.offset) + " + " +
                 std::to_string(t.n_bytes) + ") runs past the end of the data section (" + std::to_string(data_size) +
                 " bytes starting at byte " + std::to_string(data_offset) + ")");
        }
        t.data = bytes.data() + data_offset + t.offset;
    }

    // Tensors must not overlap.
    std::vector<const TensorInfo*> order;
    order.reserve(tensors.size());
    for (const TensorInfo& t : tensors) order.push_back(&t);
    std::sort(order.begin(), order.end(), [](const TensorInfo* a, const TensorInfo* b) {
        return a->offset < b->offset;
    });
    for (std::size_t i = 1; i < order.size(); ++i) {
        const TensorInfo& prev = *order[i - 1];
        const TensorInfo& cur = *order[i];
        if (prev.offset + prev.n_bytes > cur.offset) {  // both in range: no overflow
            fail(name + ": tensor " + in_quotes(cur.name) + " (info at byte " + std::to_string(cur.info_offset) +
                 "): data [" + std::to_string(cur.offset) + ", " + std::to_string(cur.offset + cur.n_bytes) +
                 ") overlaps tensor " + in_quotes(prev.name) + " [" + std::to_string(prev.offset) + ", " +
                 std::to_string(prev.offset + prev.n_bytes) + ") (data offsets, section at byte " +
                 std::to_string(data_offset) + ")");
        }
    }
}

File::File(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
File::File(File&&) noexcept = default;
File& File::operator=(File&&) noexcept = default;
File::~File() = default;

File File::open(const std::string& path, bool use_mmap) {
    auto impl = std::make_unique<Impl>();
    impl->name = path;
    impl->map = MappedFile::open(path, use_mmap);
    impl->bytes = impl->map.bytes();
    impl->parse();
    return File(std::move(impl));
}

File File::from_memory(const void* data, std::size_t size, std::string name) {
    auto impl = std::make_unique<Impl>();
    impl->name = std::move(name);
    if (data == nullptr && size != 0) fail(impl->name + ": null data pointer with size " + std::to_string(size));
    impl->bytes = {static_cast<const std::uint8_t*>(data), size};
    impl->parse();
    return File(std::move(impl));
}

File File::from_copy(const void* data, std::size_t size, std::string name) {
    auto impl = std::make_unique<Impl>();
    impl->name = std::move(name);
    if (data == nullptr && size != 0) fail(impl->name + ": null data pointer with size " + std::to_string(size));
    if (size != 0) {
        const auto* p = static_cast<const std::uint8_t*>(data);
        impl->copy.assign(p, p + size);
    }
    impl->bytes = {impl->copy.data(), impl->copy.size()};
    impl->parse();
    return File(std::move(impl));
}

const std::string& File::name() const noexcept { return impl_->name; }
std::uint32_t File::version() const noexcept { return impl_->version; }
std::uint64_t File::alignment() const noexcept { return impl_->alignment; }
std::uint64_t File::data_offset() const noexcept { return impl_->data_offset; }
std::span<const std::uint8_t> File::bytes() const noexcept { return impl_->bytes; }
const std::vector<KeyValue>& File::metadata() const noexcept { return impl_->metadata; }
const std::vector<TensorInfo>& File::tensors() const noexcept { return impl_->tensors; }

void File::release(const TensorInfo& tensor) const noexcept {
    if (tensor.data != nullptr) impl_->map.release({tensor.data, static_cast<std::size_t>(tensor.n_bytes)});
}

void File::copy(const TensorInfo& tensor, std::size_t offset, std::size_t n, std::uint8_t* dst) const noexcept {
    impl_->map.copy({tensor.data + offset, n}, dst);
}

void File::lock() const { impl_->map.lock(); }

void File::read_into_memory() const { impl_->map.read_into_memory(); }

const Value* File::find(std::string_view key) const noexcept {
    const KeyValue* kv = impl_->find_kv(key);
    return kv ? &kv->value : nullptr;
}

const TensorInfo* File::find_tensor(std::string_view name) const noexcept {
    const auto it = impl_->tensor_index.find(name);
    return it == impl_->tensor_index.end() ? nullptr : &impl_->tensors[it->second];
}

std::uint32_t File::get_u32(std::string_view key) const {
    const KeyValue& kv = impl_->require(key);
    return impl_->convert(kv, [&](const Value& v) { return v.as_u32(key); });
}

float File::get_f32(std::string_view key) const {
    const KeyValue& kv = impl_->require(key);
    return impl_->convert(kv, [&](const Value& v) { return v.as_f32(key); });
}

std::string_view File::get_string(std::string_view key) const {
    const KeyValue& kv = impl_->require(key);
    return impl_->convert(kv, [&](const Value& v) { return v.as_string(key); });
}

const Array& File::get_array(std::string_view key) const {
    const KeyValue& kv = impl_->require(key);
    return impl_->convert(kv, [&](const Value& v) -> const Array& { return v.as_array(key); });
}

std::uint32_t File::get_u32_or(std::string_view key, std::uint32_t fallback) const {
    const KeyValue* kv = impl_->find_kv(key);
    return kv ? impl_->convert(*kv, [&](const Value& v) { return v.as_u32(key); }) : fallback;
}

float File::get_f32_or(std::string_view key, float fallback) const {
    const KeyValue* kv = impl_->find_kv(key);
    return kv ? impl_->convert(*kv, [&](const Value& v) { return v.as_f32(key); }) : fallback;
}

bool File::get_bool_or(std::string_view key, bool fallback) const {
    const KeyValue* kv = impl_->find_kv(key);
    return kv ? impl_->convert(*kv, [&](const Value& v) { return v.as_bool(key); }) : fallback;
}

std::string_view File::get_string_or(std::string_view key, std::string_view fallback) const {
    const KeyValue* kv = impl_->find_kv(key);
    return kv ? impl_->convert(*kv, [&](const Value& v) { return v.as_string(key); }) : fallback;
}

}  // namespace ember::gguf

// Writes a GGUF file whose tensor data is produced piece by piece (quantized row chunks), so a
// multi-gigabyte model never has to sit in memory. Same layout as gguf::Writer: metadata in
// insertion order, tensor data in the order declared, each tensor aligned to the alignment.
//
//   StreamWriter w;
//   w.set("general.architecture", MetaValue::string("llama"));
//   w.add_tensor("token_embd.weight", TensorType::Q4_0, {2048, 32000});
//   w.begin("out.gguf");                 // writes the header to a temporary file next to it
//   w.write(bytes, n); ...               // the tensors' bytes, in declaration order
//   w.finish();                          // checks every byte arrived, renames to out.gguf
// An existing out.gguf must be a regular file (ember::OutputFile); a device, FIFO or directory
// there is refused before anything is written.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf_file.hpp"
#include "gguf/gguf_writer.hpp"
#include "runtime/file_io.hpp"

namespace ember::tools {

class StreamWriter {
public:
    StreamWriter() = default;
    StreamWriter(const StreamWriter&) = delete;
    StreamWriter& operator=(const StreamWriter&) = delete;

    /// Sets `key`, replacing an existing value in place.
    void set(std::string_view key, gguf::MetaValue value);
    /// Removes `key` if present, then appends it (llama.cpp's gguf_set_* behaviour).
    void set_last(std::string_view key, gguf::MetaValue value);
    bool remove(std::string_view key);
    bool has(std::string_view key) const noexcept;
    /// Copies every metadata entry of `file` in file order.
    void copy_metadata(const gguf::File& file);

    /// Declares the next tensor (dims: ne[0] first). Throws ember::Error for a bad shape.
    void add_tensor(std::string_view name, TensorType type, const std::vector<std::int64_t>& dims);
    std::size_t n_tensors() const noexcept { return tensors_.size(); }
    std::uint64_t tensor_bytes(std::size_t i) const noexcept { return tensors_[i].n_bytes; }

    /// Bytes of the whole file (header, tensors, padding) as declared so far.
    std::uint64_t file_bytes() const;
    /// Opens a temporary file next to `path` and writes the header. No metadata or tensor may
    /// be added afterwards.
    void begin(const std::string& path);
    /// Appends tensor data; pieces may span tensors in declaration order.
    void write(const void* data, std::size_t n);
    /// Checks that every tensor got exactly its bytes, closes and renames the file.
    void finish();

private:
    struct Entry {
        std::string key;
        gguf::MetaValue value;
    };
    struct Tensor {
        std::string name;
        TensorType type;
        std::vector<std::int64_t> dims;
        std::uint64_t n_bytes = 0;
    };
    void pad_current();
    std::string header() const;  // everything before the tensor data, padded
    std::uint64_t alignment() const;

    std::vector<Entry> kvs_;
    std::vector<Tensor> tensors_;
    std::unique_ptr<OutputFile> file_;
    std::uint64_t alignment_ = 32;
    std::size_t current_ = 0;         // tensor being written
    std::uint64_t current_done_ = 0;  // its bytes written so far
    bool finished_ = false;
};

}  // namespace ember::tools

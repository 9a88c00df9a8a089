#include "common/quantize_model.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "common/stream_writer.hpp"
#include "ember/text.hpp"
#include "gguf/gguf_file.hpp"
#include "gguf/gguf_writer.hpp"
#include "runtime/fail.hpp"
#include "runtime/file_io.hpp"
#include "runtime/memory.hpp"
#include "runtime/parallel.hpp"

namespace ember::tools {
namespace {

constexpr std::uint32_t kQuantizationVersion = 2;  // GGML_QNT_VERSION
constexpr std::int64_t kChunkElements = std::int64_t{1} << 22;  // floats converted per step

std::string shape_of(const gguf::TensorInfo& t) {
    std::string s;
    for (std::uint32_t d = 0; d < t.n_dims; ++d) {
        if (d) s += " x ";
        s += std::to_string(t.ne[d]);
    }
    return s;
}

bool is_float_type(TensorType t) {
    return t == TensorType::F32 || t == TensorType::F16 || t == TensorType::BF16;
}

}  // namespace

QuantizeSummary quantize_model(const std::string& in_path, const std::string& out_path,
                               const FileType& type, const QuantizeOptions& options) {
    check_output_target(out_path);  // a device or FIFO is refused before the input is read
    const gguf::File in = gguf::File::open(in_path);
    const std::string arch(in.get_string("general.architecture"));
    const int n_layer = static_cast<int>(in.get_u32(arch + ".block_count"));
    const int n_threads = resolve_threads(options.threads);
    check_threads(n_threads, "threads");

    std::vector<std::string> names;
    for (const auto& t : in.tensors()) names.emplace_back(t.name);
    const std::vector<std::size_t> order = llama_tensor_order(names);

    int n_attn_v = 0;
    bool has_output = false;
    for (const auto& n : names) {
        if (n.find("attn_v.weight") != std::string::npos || n.find("attn_qkv.weight") != std::string::npos) ++n_attn_v;
        if (n == "output.weight") has_output = true;
    }

    StreamWriter out;
    out.copy_metadata(in);
    out.set_last("general.quantization_version", gguf::MetaValue::u32(kQuantizationVersion));
    out.set_last("general.file_type", gguf::MetaValue::u32(type.ftype));

    TypeChooser chooser(type, n_layer, n_attn_v, has_output);
    std::vector<TensorType> types(names.size());
    for (std::size_t i : order) {
        const gguf::TensorInfo& t = in.tensors()[i];
        TensorType nt = t.type;
        if (is_quantizable(t.name, t.n_dims)) nt = chooser.choose(t.name, t.ne[0]);
        if (nt != t.type && !can_write(nt)) {
            fail(in_path + ": tensor " + names[i] + ": ember cannot write type " + std::string(tensor_type_name(nt)));
        }
        types[i] = nt;
        std::vector<std::int64_t> dims(t.ne, t.ne + t.n_dims);
        out.add_tensor(t.name, nt, dims);
    }

    QuantizeSummary sum;
    sum.n_fallback = chooser.n_fallback();
    out.begin(out_path);
    std::vector<float> f32;
    std::vector<std::uint8_t> q;
    bool warned_requant = false;
    int idx = 0;
    for (std::size_t i : order) {
        const gguf::TensorInfo& t = in.tensors()[i];
        const TensorType nt = types[i];
        const std::uint64_t out_bytes = out.tensor_bytes(static_cast<std::size_t>(idx));
        ++idx;
        sum.bytes_in += t.n_bytes;
        sum.bytes_out += out_bytes;
        ++sum.n_tensors;
        if (options.verbose) {
            std::fprintf(stderr, "[%4d/%4zu] %-32s [%s] %-5s -> %-5s %9.3f MiB -> %9.3f MiB\n", idx,
                         order.size(), printable(names[i]).c_str(), shape_of(t).c_str(),
                         std::string(tensor_type_name(t.type)).c_str(), std::string(tensor_type_name(nt)).c_str(),
                         static_cast<double>(t.n_bytes) / (1 << 20), static_cast<double>(out_bytes) / (1 << 20));
        }
        if (nt == t.type) {
            out.write(t.data, static_cast<std::size_t>(t.n_bytes));
            continue;
        }
        ++sum.n_quantized;
        if (!is_float_type(t.type) && !warned_requant) {
            std::fprintf(stderr, "warning: %s: tensor %s is already %s: dequantizing and requantizing loses accuracy\n",
                         printable(in_path).c_str(), printable(names[i]).c_str(),
                         std::string(tensor_type_name(t.type)).c_str());
            warned_requant = true;
        }
        const std::int64_t n_cols = t.ne[0], n_rows = t.n_rows();
        const std::uint64_t rb = row_bytes(nt, n_cols);
        const std::int64_t rows_per_chunk = std::max<std::int64_t>(1, kChunkElements / n_cols);
        for (std::int64_t r0 = 0; r0 < n_rows; r0 += rows_per_chunk) {
            const std::int64_t nr = std::min(rows_per_chunk, n_rows - r0);
            f32.resize(static_cast<std::size_t>(nr * n_cols));
            q.resize(static_cast<std::size_t>(nr) * rb);
            parallel_for(nr, n_threads, 1, [&](std::int64_t b, std::int64_t e, int) {
                dequantize_rows(t, r0 + b, e - b, f32.data() + b * n_cols);
                quantize_rows(nt, f32.data() + b * n_cols, q.data() + static_cast<std::uint64_t>(b) * rb, e - b, n_cols);
            });
            out.write(q.data(), q.size());
        }
    }
    out.finish();
    if (options.verbose) {
        std::fprintf(stderr, "%s: %d tensors, %d converted to %s (%d fallbacks): %.2f MiB -> %.2f MiB\n",
                     printable(out_path).c_str(), sum.n_tensors, sum.n_quantized, std::string(type.name).c_str(),
                     sum.n_fallback, static_cast<double>(sum.bytes_in) / (1 << 20),
                     static_cast<double>(sum.bytes_out) / (1 << 20));
    }
    return sum;
}

}  // namespace ember::tools

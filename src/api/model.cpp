#include "ember/model.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <future>
#include <map>
#include <new>
#include <system_error>

#include "api/chat_messages.hpp"
#include "api/model_impl.hpp"
#include "kernels/packed_isa.hpp"
#include "runtime/fail.hpp"
#include "runtime/hash.hpp"
#include "runtime/parallel.hpp"

namespace ember {
namespace detail {
namespace {

ModelInfo make_info(const gguf::File& file, const model::ModelConfig& c) {
    ModelInfo info;
    info.name = std::string(file.get_string_or(
        "general.name", std::filesystem::path(file.name()).filename().string()));
    info.architecture = c.architecture;
    info.n_ctx_train = c.n_ctx_train;
    info.n_embd = c.n_embd;
    info.n_layer = c.n_layer;
    info.n_head = c.n_head;
    info.n_head_kv = c.n_head_kv;
    info.n_ff = c.n_ff;
    std::map<std::string, std::int64_t> bytes_by_type;
    for (const auto& t : file.tensors()) {
        info.n_params += t.n_elements;
        info.weight_bytes += static_cast<std::int64_t>(t.n_bytes);
        bytes_by_type[std::string(tensor_type_name(t.type))] += static_cast<std::int64_t>(t.n_bytes);
    }
    const auto top = std::max_element(bytes_by_type.begin(), bytes_by_type.end(),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
    if (top != bytes_by_type.end()) info.file_type = top->first;
    return info;
}

/// The weights, with the tokenizer built meanwhile on a thread of its own into `tokenizer` (for
/// a 32k vocabulary that takes ~50 ms, a sixth of loading a 1B model). Errors in the weights are
/// reported first, as when the two were built one after the other.
model::ModelWeights load_weights_and_tokenizer(const gguf::File& file, const model::ModelConfig& config,
                                               const ModelOptions& options,
                                               std::unique_ptr<tokenizer::Tokenizer>& tokenizer) {
    const auto build = [&file] { return tokenizer::Tokenizer::from_gguf(file); };
    std::future<std::unique_ptr<tokenizer::Tokenizer>> pending;
    try {
        pending = std::async(std::launch::async, build);
    } catch (const std::system_error&) {  // no thread to be had: build it afterwards
        pending = std::async(std::launch::deferred, build);
    }
    model::ModelWeights weights = model::ModelWeights::from_gguf(file, config, options.on_progress);
    tokenizer = pending.get();
    // use_mmap = false: what is still read from the file (tensors not repacked, the vocabulary)
    // moves into memory of its own now, after the tokenizer's thread stopped reading it.
    file.read_into_memory();
    return weights;
}

}  // namespace

ModelImpl::ModelImpl(gguf::File file_in, ModelOptions options_in)
    : file(std::move(file_in)),
      options(options_in),
      config(model::ModelConfig::from_gguf(file)),
      weights(load_weights_and_tokenizer(file, config, options, tokenizer)),
      forward(config, weights) {
    if (tokenizer->n_vocab() != weights.output.n_rows()) {
        fail(file.name() + ": the vocabulary has " + std::to_string(tokenizer->n_vocab()) +
             " tokens but the output layer has " + std::to_string(weights.output.n_rows()) + " rows");
    }
    config.n_vocab = tokenizer->n_vocab();
    info = make_info(file, config);
    info.n_vocab = config.n_vocab;
    if (options.mlock) lock_weights();
    chat_template = std::string(file.get_string_or("tokenizer.chat_template", ""));
    try {
        parsed_template = std::make_shared<const chat::ChatTemplate>(
            chat_template.empty() ? std::string_view(chat::kDefaultChatMlTemplate) : chat_template);
    } catch (const Error& e) {
        chat_template_error = e.what();  // reported when the template is used
    }
}

std::uint64_t ModelImpl::fingerprint() const {
    std::call_once(fingerprint_once_, [this] { fingerprint_ = hash64_blocks(file.bytes(), resolve_threads(options.threads)); });
    return fingerprint_;
}

ModelImpl::~ModelImpl() {
    for (const auto r : locked) ::munlock(r.data(), r.size());
}

// mlock: the file's bytes still in use, and every repacked copy.
void ModelImpl::lock_weights() {
    file.lock();
    for (const auto* m : weights.matrices()) {
        if (!m->packed()) continue;
        const std::size_t n_groups = static_cast<std::size_t>((m->n_rows() + kernels::kPackRows - 1) / kernels::kPackRows);
        const std::span<const std::uint8_t> r(m->data(), m->group_bytes() * n_groups);
        if (::mlock(r.data(), r.size()) != 0) {
            const int err = errno;
            for (const auto l : locked) ::munlock(l.data(), l.size());
            locked.clear();
            fail(file.name() + ": cannot lock the repacked weights in memory (mlock: " + std::strerror(err) +
                 "; raise RLIMIT_MEMLOCK with 'ulimit -l' or run without mlock)");
        }
        locked.push_back(r);
    }
}

}  // namespace detail

Model::Model(std::shared_ptr<const detail::ModelImpl> impl) : impl_(std::move(impl)) {}

namespace {

// Loads through `open` (which names the file itself); every error below it (configuration,
// weights, tokenizer) is made to name the file too, and running out of memory is an Error.
template <class Open>
std::shared_ptr<const detail::ModelImpl> load_impl(const std::string& name, ModelOptions options, Open&& open) {
    if (options.threads < 0 || options.threads > kMaxThreads) {
        fail(name + ": ModelOptions::threads must be in [0, " + std::to_string(kMaxThreads) + "], got " +
             std::to_string(options.threads));
    }
    try {
        return std::make_shared<const detail::ModelImpl>(open(), std::move(options));
    } catch (const Error& e) {
        fail_naming(name, e);
    } catch (const std::bad_alloc&) {
        fail(name + ": out of memory while loading the model");
    }
}

}  // namespace

Model Model::load(const std::string& path, ModelOptions options) {
    const bool use_mmap = options.use_mmap;
    return Model(load_impl(path, std::move(options), [&] { return gguf::File::open(path, use_mmap); }));
}

Model Model::load_from_memory(const void* data, std::size_t size, ModelOptions options) {
    return Model(load_impl("<memory>", std::move(options), [&] { return gguf::File::from_copy(data, size, "<memory>"); }));
}

const ModelInfo& Model::info() const noexcept { return impl_->info; }
const ModelOptions& Model::options() const noexcept { return impl_->options; }

std::vector<Token> Model::tokenize(std::string_view text, TokenizeOptions options) const {
    const auto& tok = *impl_->tokenizer;
    return tok.encode(text, options.add_bos && tok.add_bos_default(), options.parse_special);
}

std::string Model::detokenize(const std::vector<Token>& tokens) const {
    return impl_->tokenizer->decode(tokens);
}

std::string Model::token_to_piece(Token token) const { return impl_->tokenizer->token_to_piece(token); }

std::int64_t Model::n_vocab() const noexcept { return impl_->config.n_vocab; }
Token Model::bos() const noexcept { return impl_->tokenizer->bos(); }
Token Model::eos() const noexcept { return impl_->tokenizer->eos(); }
bool Model::is_end_of_generation(Token token) const noexcept {
    return impl_->tokenizer->is_end_of_generation(token);
}

const std::string& Model::chat_template() const noexcept { return impl_->chat_template; }

std::string Model::apply_chat_template(const std::vector<ChatMessage>& messages,
                                       bool add_generation_prompt,
                                       std::string_view template_override) const {
    ChatTemplateOptions options;
    options.add_generation_prompt = add_generation_prompt;
    options.template_override = std::string(template_override);
    return apply_chat_template(messages, options);
}

std::string Model::apply_chat_template(const std::vector<ChatMessage>& messages,
                                       const ChatTemplateOptions& options) const {
    const detail::ModelImpl& m = *impl_;
    chat::ChatTemplateInput input = detail::chat_template_input(messages, options);
    const auto special_text = [&](Token t) {
        return t >= 0 ? m.tokenizer->token_text(t) : std::string();
    };
    input.bos_token = special_text(m.tokenizer->bos());
    input.eos_token = special_text(m.tokenizer->eos());
    if (!options.template_override.empty()) return chat::ChatTemplate(options.template_override).render(input);
    if (!m.parsed_template) fail(m.file.name() + ": tokenizer.chat_template: " + m.chat_template_error);
    try {
        return m.parsed_template->render(input);
    } catch (const Error& e) {
        fail_naming(m.file.name() + ": tokenizer.chat_template", e);
    }
}

}  // namespace ember

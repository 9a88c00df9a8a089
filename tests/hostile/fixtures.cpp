#include "hostile/fixtures.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "gguf/gguf_file.hpp"
#include "gguf/gguf_writer.hpp"
#include "runtime/utf8.hpp"
#include "support/shared_data.hpp"

namespace ember_test {
namespace {

namespace fs = std::filesystem;

void write_file(const fs::path& p, const std::string& bytes) {
    std::ofstream out(p, std::ios::binary);
    out << bytes;
}

// stories260K with `edit` applied to its metadata.
template <class Edit>
std::string evil_copy(const std::string& model, const fs::path& path, Edit edit) {
    const auto file = ember::gguf::File::open(model);
    ember::gguf::Writer w;
    w.copy_metadata(file);
    edit(w);
    for (const auto& t : file.tensors()) {
        w.add_tensor_view(t.name, t.type, std::vector<std::int64_t>(t.ne, t.ne + t.n_dims),
                          std::span(t.data, static_cast<std::size_t>(t.n_bytes)));
    }
    w.write_to_file(path.string());
    return path.string();
}

struct Owner {
    Hostile h;
    ~Owner() {
        std::error_code ec;
        fs::remove_all(h.dir, ec);
    }
};

Hostile make() {
    Hostile h;
    h.dir = fs::temp_directory_path() / ("ember_hostile_" + std::to_string(::getpid()));
    fs::remove_all(h.dir);
    fs::create_directories(h.dir / "subdir");
    h.subdir = (h.dir / "subdir").string();
    h.fifo = (h.dir / "fifo").string();
    h.fifo_out = (h.dir / "fifo_out").string();
    ::mkfifo(h.fifo.c_str(), 0600);
    ::mkfifo(h.fifo_out.c_str(), 0600);
    h.dev_link = (h.dir / "dev_link").string();
    fs::create_symlink("/dev/null", h.dev_link);
    const fs::path node = h.dir / "dev_node";
    if (::mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) h.dev_node = node.string();
    h.missing = (h.dir / "no_such_file").string();
    h.out = (h.dir / "out.bin").string();
    h.text = (h.dir / "text.txt").string();
    write_file(h.text, "Once upon a time, there was a little girl named Lily.\n");
    h.template_file = (h.dir / "t.jinja").string();
    write_file(h.template_file, "{% for m in messages %}{{ m.content }}{% endfor %}");
    h.evil_template_file = (h.dir / "evil.jinja").string();
    write_file(h.evil_template_file, "{{ raise_exception('\x1b[2J\x1b]0;pwned\x07 cleared') }}");
    h.messages = (h.dir / "m.json").string();
    write_file(h.messages, R"([{"role": "user", "content": "hi"}])");
    h.bad_json = (h.dir / "bad.json").string();
    write_file(h.bad_json, "[{\"role\": \xff\x1b[31m}]");
    if (has_shared_file("models/stories260K.gguf")) {
        h.model = shared_file("models/stories260K.gguf").string();
        using ember::gguf::MetaValue;
        h.evil_arch = evil_copy(h.model, h.dir / "evil_arch.gguf", [](ember::gguf::Writer& w) {
            w.set("general.architecture", MetaValue::string(std::string("\x1b[31mllama\0tail\xff", 16)));
        });
        h.evil_rope = evil_copy(h.model, h.dir / "evil_rope.gguf", [](ember::gguf::Writer& w) {
            w.set("llama.rope.scaling.type", MetaValue::f32(1.0f));
        });
        h.evil_tokenizer = evil_copy(h.model, h.dir / "evil_tokenizer.gguf", [](ember::gguf::Writer& w) {
            w.set("tokenizer.ggml.model", MetaValue::string("\x1b]0;pwned\x07"));
        });
        h.evil_template = evil_copy(h.model, h.dir / "evil_template.gguf", [](ember::gguf::Writer& w) {
            w.set("tokenizer.chat_template", MetaValue::string("{{ raise_exception('\x1b[2Jgone') }}"));
        });
    }
    return h;
}

}  // namespace

const Hostile& hostile() {
    static Owner owner{make()};
    return owner.h;
}

std::string Hostile::expand(const std::string& arg) const {
    const std::map<std::string, std::string> vars = {
        {"{model}", model},         {"{text}", text},
        {"{dir}", subdir},          {"{fifo}", fifo},
        {"{fifo_out}", fifo_out},   {"{dev_link}", dev_link},
        {"{dev_node}", dev_node},   {"{missing}", missing},
        {"{out}", out},             {"{evil_arch}", evil_arch},
        {"{evil_rope}", evil_rope}, {"{evil_tokenizer}", evil_tokenizer},
        {"{evil_template}", evil_template}, {"{template}", template_file},
        {"{evil_template_file}", evil_template_file}, {"{messages}", messages},
        {"{bad_json}", bad_json},
    };
    std::string s = arg;
    for (const auto& [key, value] : vars) {
        for (std::size_t at; (at = s.find(key)) != std::string::npos;) s.replace(at, key.size(), value);
    }
    return s;
}

std::vector<std::string> Hostile::leftovers() const {
    static const std::vector<std::string> kKnown = {
        "subdir", "fifo", "fifo_out", "dev_link", "dev_node", "text.txt", "t.jinja", "evil.jinja",
        "m.json", "bad.json", "evil_arch.gguf", "evil_rope.gguf", "evil_tokenizer.gguf", "evil_template.gguf"};
    std::vector<std::string> extra;
    for (const auto& e : fs::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        if (std::find(kKnown.begin(), kKnown.end(), name) == kKnown.end()) extra.push_back(name);
    }
    return extra;
}

std::string program(const std::string& name) { return (fs::path(EMBER_BINARY_DIR) / "bin" / name).string(); }

bool is_one_printable_line(const std::string& s) {
    if (s.empty() || s.back() != '\n') return false;
    const std::string_view body(s.data(), s.size() - 1);
    for (std::size_t i = 0; i < body.size();) {
        const std::size_t len = ember::utf8_valid_length(body, i);
        if (len == 0) return false;
        const auto c = static_cast<unsigned char>(body[i]);
        if (len == 1 && (c < 0x20 || c == 0x7f)) return false;
        if (len == 2 && c == 0xC2 && static_cast<unsigned char>(body[i + 1]) < 0xA0) return false;  // C1
        i += len;
    }
    return true;
}

}  // namespace ember_test

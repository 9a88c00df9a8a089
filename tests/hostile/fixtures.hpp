// Hostile inputs for the CLI tests, made once per test process in a temporary folder: a
// directory, FIFOs, output targets that are devices, and copies of stories260K whose metadata
// carries escape sequences, NUL and 0xFF bytes, or a mistyped key.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ember_test {

struct Hostile {
    std::filesystem::path dir;   ///< The temporary folder (removed at exit).
    std::string model;           ///< ../shared/models/stories260K.gguf ("" when absent).
    std::string text;            ///< A small regular text file.
    std::string subdir;          ///< A directory given where a file is expected.
    std::string fifo;            ///< A FIFO nobody writes to (as an input).
    std::string fifo_out;        ///< A FIFO as an output target.
    std::string dev_link;        ///< A symlink to /dev/null as an output target.
    std::string dev_node;        ///< A character device made with mknod ("" without permission).
    std::string missing;         ///< A path that does not exist.
    std::string out;             ///< A regular output path (never created by a failing tool).
    std::string evil_arch;       ///< general.architecture = ESC sequence, NUL, 0xFF.
    std::string evil_rope;       ///< llama.rope.scaling.type is an f32.
    std::string evil_tokenizer;  ///< tokenizer.ggml.model = an OSC escape sequence.
    std::string evil_template;   ///< tokenizer.chat_template raises an exception with ESC bytes.
    std::string template_file;   ///< A valid chat template.
    std::string evil_template_file;  ///< A template raising an exception with ESC bytes.
    std::string messages;        ///< A valid messages JSON file.
    std::string bad_json;        ///< JSON with a raw 0xFF byte.

    /// Replaces {model}, {dir}, {fifo}, ... in an argument.
    std::string expand(const std::string& arg) const;
    /// Files in dir() that a tool left behind (temporary files), for "no partial output" checks.
    std::vector<std::string> leftovers() const;
};

/// The fixtures, created on first use.
const Hostile& hostile();

/// Path of a built program (build/bin/NAME).
std::string program(const std::string& name);

/// True when `s` is one line of printable UTF-8 ending with '\n' (no control bytes, no C1
/// controls, no bytes that are not UTF-8, no NUL).
bool is_one_printable_line(const std::string& s);

}  // namespace ember_test

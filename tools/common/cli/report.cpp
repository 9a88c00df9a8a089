#include "cli/report.hpp"

#include <cstdio>
#include <exception>
#include <new>

#include "cli/args.hpp"
#include "ember/text.hpp"

namespace ember::cli {

void print_error(std::string_view tool, std::string_view message) {
    std::string line = printable(tool);
    line += ": error: ";
    line += printable(message);
    line += '\n';
    std::fflush(stdout);
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
}

int run_tool(std::string_view tool, const std::function<int()>& body) {
    try {
        return body();
    } catch (const UsageError& e) {
        print_error(tool, std::string(e.what()) + " (see --help)");
        return 2;
    } catch (const std::bad_alloc&) {
        print_error(tool, "out of memory");
        return 1;
    } catch (const std::exception& e) {
        print_error(tool, e.what());
        return 1;
    }
}

std::string format_bytes(std::uint64_t bytes) {
    char b[48];
    const double v = static_cast<double>(bytes);
    if (bytes < 1024) std::snprintf(b, sizeof b, "%llu B", static_cast<unsigned long long>(bytes));
    else if (bytes < (1u << 20)) std::snprintf(b, sizeof b, "%.1f KiB", v / 1024);
    else if (bytes < (1u << 30)) std::snprintf(b, sizeof b, "%.1f MiB", v / (1 << 20));
    else std::snprintf(b, sizeof b, "%.2f GiB", v / (1 << 30));
    return b;
}

}  // namespace ember::cli

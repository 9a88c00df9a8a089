#include "hostile/process.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ember_test {
namespace {

constexpr std::size_t kCaptureLimit = 1 << 20;

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

}  // namespace

std::string RunResult::describe() const {
    char b[160];
    if (timed_out) std::snprintf(b, sizeof b, "killed after %.1f s (time limit)", seconds);
    else if (signal != 0) std::snprintf(b, sizeof b, "signal %d (%s) after %.2f s", signal, strsignal(signal), seconds);
    else std::snprintf(b, sizeof b, "exit %d in %.2f s, max RSS %.1f MiB", exit_code, seconds,
                       static_cast<double>(max_rss_bytes) / (1 << 20));
    return b;
}

RunResult run_process(const std::vector<std::string>& argv, const RunOptions& o) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int out_pipe[2], err_pipe[2], in_pipe[2] = {-1, -1};
    if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) return {};
    const bool feed = !o.stdin_data.empty();
    if (feed && ::pipe2(in_pipe, O_CLOEXEC) != 0) return {};

    const auto t0 = std::chrono::steady_clock::now();
    const pid_t pid = ::fork();
    if (pid == 0) {  // child: only async-signal-safe calls until exec
        if (o.address_limit > 0) {
            struct rlimit rl {o.address_limit, o.address_limit};
            ::setrlimit(RLIMIT_AS, &rl);
        }
        if (!o.working_dir.empty() && ::chdir(o.working_dir.c_str()) != 0) ::_exit(125);
        const int in = feed ? in_pipe[0] : ::open(o.stdin_path.c_str(), O_RDONLY);
        if (in < 0) ::_exit(126);
        ::dup2(in, 0);
        ::dup2(out_pipe[1], 1);
        ::dup2(err_pipe[1], 2);
        ::execv(args[0], args.data());
        ::_exit(127);
    }
    RunResult r;
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    if (feed) ::close(in_pipe[0]);
    if (pid < 0) return r;
    set_nonblocking(out_pipe[0]);
    set_nonblocking(err_pipe[0]);
    std::size_t fed = 0;
    int in_fd = feed ? in_pipe[1] : -1;
    if (in_fd >= 0) set_nonblocking(in_fd);
    ::signal(SIGPIPE, SIG_IGN);
    int open_fds = 2;
    const auto deadline = t0 + std::chrono::duration<double>(o.timeout_seconds);
    while (open_fds > 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            r.timed_out = true;
            ::kill(pid, SIGKILL);
            break;
        }
        pollfd fds[3] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}, {in_fd, POLLOUT, 0}};
        const int n = ::poll(fds, in_fd >= 0 ? 3 : 2, static_cast<int>(std::min<long long>(left.count(), 100)));
        if (n < 0 && errno != EINTR) break;
        for (int k = 0; k < 2; ++k) {
            if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            char buf[65536];
            const ssize_t got = ::read(fds[k].fd, buf, sizeof buf);
            if (got > 0) {
                std::string& dst = k == 0 ? r.out : r.err;
                dst.append(buf, static_cast<std::size_t>(std::min<ssize_t>(got, static_cast<ssize_t>(kCaptureLimit - std::min(dst.size(), kCaptureLimit)))));
            } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
                ::close(fds[k].fd);
                (k == 0 ? out_pipe[0] : err_pipe[0]) = -1;
                --open_fds;
            }
        }
        if (in_fd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
            const ssize_t put = ::write(in_fd, o.stdin_data.data() + fed, o.stdin_data.size() - fed);
            if (put > 0) fed += static_cast<std::size_t>(put);
            if (put < 0 && errno != EAGAIN && errno != EINTR) fed = o.stdin_data.size();
            if (fed == o.stdin_data.size()) {
                ::close(in_fd);
                in_fd = -1;
            }
        }
    }
    if (in_fd >= 0) ::close(in_fd);
    if (out_pipe[0] >= 0) ::close(out_pipe[0]);
    if (err_pipe[0] >= 0) ::close(err_pipe[0]);
    int status = 0;
    struct rusage ru {};
    for (;;) {  // the pipes may close before the child ends: keep the time limit
        const pid_t w = ::wait4(pid, &status, WNOHANG, &ru);
        if (w == pid || (w < 0 && errno != EINTR)) break;
        if (std::chrono::steady_clock::now() > deadline && !r.timed_out) {
            r.timed_out = true;
            ::kill(pid, SIGKILL);
        }
        ::usleep(1000);
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.max_rss_bytes = static_cast<std::uint64_t>(ru.ru_maxrss) * 1024;
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    return r;
}

}  // namespace ember_test

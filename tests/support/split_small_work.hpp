// For tests that compare thread counts on tiny models: while one of these lives, every loop
// splits over the threads it is given, however little work it holds (runtime/parallel.hpp
// would otherwise keep stories260K on one thread, and the comparison would prove nothing).
#pragma once

#include <cstdint>

#include "runtime/parallel.hpp"

namespace ember_test {

class SplitSmallWork {
public:
    SplitSmallWork() : saved_(ember::min_parallel_bytes()) { ember::set_min_parallel_bytes(0); }
    ~SplitSmallWork() { ember::set_min_parallel_bytes(saved_); }
    SplitSmallWork(const SplitSmallWork&) = delete;
    SplitSmallWork& operator=(const SplitSmallWork&) = delete;

private:
    std::int64_t saved_;
};

}  // namespace ember_test

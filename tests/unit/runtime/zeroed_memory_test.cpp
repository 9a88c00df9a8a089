// Zeroed memory from the kernel: allocate_zeroed_pages (repacked weights) and ZeroedVector (the
// forward pass's scratch) hand out zeros without writing them, in the alignment promised.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "runtime/zeroed_memory.hpp"

namespace {

bool all_zero(const std::uint8_t* p, std::size_t n) {
    return std::all_of(p, p + n, [](std::uint8_t b) { return b == 0; });
}

}  // namespace

TEST_CASE("allocate_zeroed_pages: zeroed, writable, 64-byte aligned, 2 MiB aligned when large", "[memory]") {
    for (const std::size_t n : {std::size_t{1}, std::size_t{4096}, std::size_t{100000},
                                (std::size_t{2} << 20) + 3, std::size_t{9} << 20}) {
        CAPTURE(n);
        const auto buf = ember::allocate_zeroed_pages(n, "test");
        const auto addr = reinterpret_cast<std::uintptr_t>(buf.get());
        CHECK(addr % 64 == 0);
        if (n >= (std::size_t{2} << 20)) CHECK(addr % (std::size_t{2} << 20) == 0);
        CHECK(all_zero(buf.get(), n));
        buf.get()[0] = 1;
        buf.get()[n - 1] = 2;  // the last byte is ours
        CHECK(buf.get()[n - 1] == 2);
    }
    CHECK_THROWS_WITH(ember::allocate_zeroed_pages(SIZE_MAX - 100, "repacking x"), Catch::Contains("repacking x"));
}

TEST_CASE("ZeroedVector: grows to zeros, keeps its elements, small and large alike", "[memory]") {
    for (const std::size_t n : {std::size_t{10}, std::size_t{1} << 20}) {  // below and above the mapping threshold
        CAPTURE(n);
        ember::ZeroedVector<float> v;
        v.resize(n);
        CHECK(std::all_of(v.begin(), v.end(), [](float x) { return x == 0.0f; }));
        for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i + 1);
        v.resize(3 * n);  // reallocates: the old elements move, the new ones are zero
        bool kept = true, zero = true;
        for (std::size_t i = 0; i < n; ++i) kept = kept && v[i] == static_cast<float>(i + 1);
        for (std::size_t i = n; i < 3 * n; ++i) zero = zero && v[i] == 0.0f;
        CHECK(kept);
        CHECK(zero);
        ember::ZeroedVector<std::byte> b(n);
        CHECK(all_zero(reinterpret_cast<const std::uint8_t*>(b.data()), n));
    }
    const std::size_t before = ember::detail::mapped_zeroed_bytes();
    {
        const ember::ZeroedVector<float> big(std::size_t{1} << 20);
        const std::size_t held = ember::detail::mapped_zeroed_bytes() - before;  // counted while held
        if (ember::detail::kMapThreshold == SIZE_MAX) {
            CHECK(held == 0);  // AddressSanitizer: operator new instead
        } else {
            CHECK(held >= (std::size_t{4} << 20));
        }
    }
    CHECK(ember::detail::mapped_zeroed_bytes() == before);
    if (ember::detail::kMapThreshold != SIZE_MAX) {  // AddressSanitizer aborts on such sizes itself
        ember::ZeroedVector<float> v;
        CHECK_THROWS_AS(v.resize(SIZE_MAX / 8), std::exception);  // too large: an exception, not a crash
    }
}

TEST_CASE("ZeroedArena: zeroed pieces in order, null when full, the unused tail returned", "[memory]") {
    const std::size_t mib = std::size_t{1} << 20;
    const std::size_t before = ember::detail::mapped_zeroed_bytes();
    std::shared_ptr<std::uint8_t> a, b;
    {
        ember::ZeroedArena arena(64 * mib);
        a = arena.take(3 * mib + 5);
        if (ember::detail::kMapThreshold == SIZE_MAX) {  // AddressSanitizer: callers allocate alone
            CHECK(a == nullptr);
            return;
        }
        REQUIRE(a != nullptr);
        b = arena.take(1000);
        REQUIRE(b != nullptr);
        CHECK(reinterpret_cast<std::uintptr_t>(a.get()) % (2 * mib) == 0);  // huge-page aligned start
        CHECK(b.get() == a.get() + (3 * mib + 64));                          // next 64-byte boundary
        CHECK(all_zero(a.get(), 3 * mib + 5));
        CHECK(all_zero(b.get(), 1000));
        a.get()[3 * mib + 4] = 1;
        b.get()[999] = 2;
        CHECK(arena.take(61 * mib) == nullptr);  // does not fit what is left
        CHECK(ember::detail::mapped_zeroed_bytes() - before >= 64 * mib);
        arena.finish();
        // The tail went back from the first huge page not in use: a huge page partly unmapped
        // is split into 4 KiB pages (and its bytes in use read slower).
        CHECK(ember::detail::mapped_zeroed_bytes() - before == 4 * mib);
        CHECK(arena.take(1) == nullptr);
    }
    CHECK(b.get()[999] == 2);  // the pieces outlive the arena object
    a.reset();
    b.reset();
    CHECK(ember::detail::mapped_zeroed_bytes() == before);
    ember::ZeroedArena none(0);
    CHECK(none.take(1) == nullptr);
}

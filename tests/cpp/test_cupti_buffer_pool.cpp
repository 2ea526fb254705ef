#include <catch2/catch.hpp>

#include <cstdint>
#include <set>
#include <thread>
#include <vector>

#include "cupti/buffer_pool.hpp"

using fpgaprof::cupti::BufferPool;

TEST_CASE("buffers are 8-byte aligned and sized as configured (rounded up to 8)", "[cupti][pool]") {
  BufferPool pool;
  pool.configure(10001, 0);
  size_t size = 0;
  uint8_t* b = pool.acquire(&size);
  REQUIRE(b != nullptr);
  CHECK(size == 10008);  // next multiple of 8 above 10001
  CHECK(reinterpret_cast<std::uintptr_t>(b) % 8 == 0);
  b[size - 1] = 1;  // the whole size is usable (ASan checks)
  pool.release(b, size);
}

TEST_CASE("a warm pool reuses its buffers and allocates nothing more", "[cupti][pool]") {
  BufferPool pool;
  pool.configure(4096, 0);
  std::vector<std::pair<uint8_t*, size_t>> held;
  for (int i = 0; i < 3; ++i) {
    size_t s = 0;
    uint8_t* b = pool.acquire(&s);
    held.emplace_back(b, s);
  }
  std::set<uint8_t*> first;
  for (auto& [b, s] : held) {
    first.insert(b);
    pool.release(b, s);
  }
  CHECK(pool.buffers_created() == 3);
  for (int round = 0; round < 1000; ++round) {
    held.clear();
    for (int i = 0; i < 3; ++i) {
      size_t s = 0;
      uint8_t* b = pool.acquire(&s);
      CHECK(first.count(b) == 1);
      held.emplace_back(b, s);
    }
    for (auto& [b, s] : held) pool.release(b, s);
  }
  CHECK(pool.buffers_created() == 3);
  CHECK(pool.buffers_owned() == 3);
  CHECK(pool.buffers_idle() == 3);
}

TEST_CASE("max_buffers refuses requests instead of growing", "[cupti][pool]") {
  BufferPool pool;
  pool.configure(4096, 2);
  size_t s1 = 0, s2 = 0, s3 = 99;
  uint8_t* a = pool.acquire(&s1);
  uint8_t* b = pool.acquire(&s2);
  CHECK(pool.acquire(&s3) == nullptr);
  CHECK(s3 == 0);
  CHECK(pool.requests_refused() == 1);
  pool.release(a, s1);
  size_t s4 = 0;
  CHECK(pool.acquire(&s4) == a);
  pool.release(a, s4);
  pool.release(b, s2);
}

TEST_CASE("changing the size frees idle buffers and retires returning old ones", "[cupti][pool]") {
  BufferPool pool;
  pool.configure(4096, 0);
  size_t s_old = 0, s_idle = 0;
  uint8_t* in_flight = pool.acquire(&s_old);
  uint8_t* idle = pool.acquire(&s_idle);
  pool.release(idle, s_idle);
  CHECK(pool.buffers_owned() == 2);
  pool.configure(8192, 0);
  CHECK(pool.buffers_owned() == 1);  // the idle 4 KiB buffer is gone
  pool.release(in_flight, s_old);    // comes back at the old size: freed
  CHECK(pool.buffers_owned() == 0);
  size_t s = 0;
  uint8_t* fresh = pool.acquire(&s);
  CHECK(s == 8192);
  pool.release(fresh, s);
}

TEST_CASE("the pool is safe under concurrent acquire/release", "[cupti][pool]") {
  BufferPool pool;
  pool.configure(4096, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&pool] {
      for (int i = 0; i < 2000; ++i) {
        size_t s = 0;
        uint8_t* b = pool.acquire(&s);
        b[0] = static_cast<uint8_t>(i);
        pool.release(b, s);
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(pool.buffers_created() <= 4);  // never more than in flight at once
  CHECK(pool.buffers_idle() == pool.buffers_owned());
}

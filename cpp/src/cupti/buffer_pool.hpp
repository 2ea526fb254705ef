// BufferPool: the activity buffers handed to CUPTI, reused across requests and sessions.
//
// acquire() returns a free buffer or allocates a new one (8-byte aligned, buffer_bytes long)
// while fewer than max_buffers exist (0 = no limit); release() puts it back. Once the pool
// holds as many buffers as are ever in flight at once, acquire/release allocate nothing: the
// free list's capacity is reserved whenever a buffer is created. Changing the buffer size
// frees the idle buffers of the old size; in-flight ones of the old size are freed when they
// come back. Thread-safe (CUPTI requests and completes buffers on its own threads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace fpgaprof::cupti {

class BufferPool {
 public:
  BufferPool() = default;
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // Sets the size of the buffers handed out from now on (rounded up to a multiple of 8,
  // at least 4 KiB) and the limit on buffers in existence (0 = none).
  void configure(std::size_t buffer_bytes, std::size_t max_buffers);

  // A buffer of buffer_bytes() bytes, or nullptr when max_buffers are all in flight (CUPTI
  // then drops records and counts them). *size receives the buffer's size (0 with nullptr).
  uint8_t* acquire(std::size_t* size);
  // Returns a buffer from acquire(); size is the size acquire() reported for it.
  void release(uint8_t* buffer, std::size_t size);

  std::size_t buffer_bytes() const;
  std::size_t buffers_created() const;  // allocations since construction
  std::size_t buffers_owned() const;    // buffers existing now (idle + in flight)
  std::size_t buffers_idle() const;
  std::size_t requests_refused() const;  // acquire() calls answered with nullptr

 private:
  static uint8_t* allocate(std::size_t bytes);
  static void deallocate(uint8_t* buffer);

  mutable std::mutex mutex_;
  std::size_t buffer_bytes_ = 8u << 20;
  std::size_t max_buffers_ = 0;
  std::vector<uint8_t*> free_;
  std::size_t owned_ = 0;
  std::size_t created_ = 0;
  std::size_t refused_ = 0;
};

}  // namespace fpgaprof::cupti

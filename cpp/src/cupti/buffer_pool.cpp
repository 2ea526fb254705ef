#include "cupti/buffer_pool.hpp"

#include <new>

namespace fpgaprof::cupti {
namespace {
constexpr std::size_t kAlignment = 8;
constexpr std::size_t kMinBytes = 4096;
}  // namespace

BufferPool::~BufferPool() {
  for (uint8_t* b : free_) deallocate(b);
}

uint8_t* BufferPool::allocate(std::size_t bytes) {
  return static_cast<uint8_t*>(::operator new(bytes, std::align_val_t(kAlignment)));
}

void BufferPool::deallocate(uint8_t* buffer) { ::operator delete(buffer, std::align_val_t(kAlignment)); }

void BufferPool::configure(std::size_t buffer_bytes, std::size_t max_buffers) {
  std::size_t bytes = buffer_bytes < kMinBytes ? kMinBytes : buffer_bytes;
  bytes = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  std::lock_guard<std::mutex> lock(mutex_);
  if (bytes != buffer_bytes_) {
    for (uint8_t* b : free_) deallocate(b);
    owned_ -= free_.size();
    free_.clear();
    buffer_bytes_ = bytes;
  }
  max_buffers_ = max_buffers;
}

uint8_t* BufferPool::acquire(std::size_t* size) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!free_.empty()) {
    uint8_t* b = free_.back();
    free_.pop_back();
    *size = buffer_bytes_;
    return b;
  }
  if (max_buffers_ != 0 && owned_ >= max_buffers_) {
    ++refused_;
    *size = 0;
    return nullptr;
  }
  // Reserve the free-list slot now so that release() never allocates.
  free_.reserve(owned_ + 1);
  uint8_t* b = allocate(buffer_bytes_);
  ++owned_;
  ++created_;
  *size = buffer_bytes_;
  return b;
}

void BufferPool::release(uint8_t* buffer, std::size_t size) {
  if (buffer == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (size != buffer_bytes_ || (max_buffers_ != 0 && owned_ > max_buffers_)) {
    deallocate(buffer);
    --owned_;
    return;
  }
  free_.push_back(buffer);
}

std::size_t BufferPool::buffer_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return buffer_bytes_;
}
std::size_t BufferPool::buffers_created() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return created_;
}
std::size_t BufferPool::buffers_owned() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return owned_;
}
std::size_t BufferPool::buffers_idle() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return free_.size();
}
std::size_t BufferPool::requests_refused() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return refused_;
}

}  // namespace fpgaprof::cupti

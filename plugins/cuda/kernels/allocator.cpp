#include "allocator.hpp"

#include <axon/plugin.hpp>

#include <algorithm>

namespace axon::cuda {

namespace {

size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

const char* mode_name(axon_memory_mode m) {
  switch (m) {
    case AXON_MEMORY_RESERVE: return "reserve";
    case AXON_MEMORY_GROWTH: return "growth";
    case AXON_MEMORY_LIMIT: return "limit";
  }
  return "?";
}

}  // namespace

std::string CachingAllocator::human(uint64_t b) {
  const double x = static_cast<double>(b);
  if (b >= (1ull << 30)) return sdk::format("%.2f GiB", x / (1ull << 30));
  if (b >= (1ull << 20)) return sdk::format("%.2f MiB", x / (1ull << 20));
  if (b >= (1ull << 10)) return sdk::format("%.2f KiB", x / (1ull << 10));
  return sdk::format("%llu B", static_cast<unsigned long long>(b));
}

CachingAllocator::CachingAllocator(SegmentSource& source, axon_memory_mode mode, uint64_t limit, uint64_t total,
                                   std::string label)
    : source_(source), mode_(mode), limit_(limit), total_(total), label_(std::move(label)) {}

CachingAllocator::~CachingAllocator() {
  for (auto& [ptr, b] : blocks_) delete b;
  for (Segment* s : segments_) {
    source_.release(s->base);
    delete s;
  }
}

void CachingAllocator::reserve(size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  bytes = round_up(bytes, kSegmentGranule);
  if (add_segment(bytes) == nullptr)
    sdk::fail(AXON_OUT_OF_MEMORY, sdk::format("%s: could not reserve %s (%llu bytes) of device memory", label_.c_str(),
                                              human(bytes).c_str(), static_cast<unsigned long long>(bytes)));
}

void CachingAllocator::insert_free(Block* b) { free_.emplace(b->size, b->ptr); }
void CachingAllocator::erase_free(Block* b) { free_.erase({b->size, b->ptr}); }

CachingAllocator::Block* CachingAllocator::take_free(size_t size) {
  auto it = free_.lower_bound({size, nullptr});
  if (it == free_.end()) return nullptr;
  Block* b = blocks_.at(it->second);
  free_.erase(it);
  if (b->size - size >= kAlignment) {  // split; the tail stays free
    Block* tail = new Block{b->ptr + size, b->size - size, true, b->segment, b, b->next};
    if (b->next) b->next->prev = tail;
    b->next = tail;
    b->size = size;
    blocks_[tail->ptr] = tail;
    insert_free(tail);
  }
  b->free = false;
  return b;
}

CachingAllocator::Block* CachingAllocator::add_segment(size_t size) {
  void* p = source_.acquire(size);
  if (p == nullptr) return nullptr;
  auto* s = new Segment{static_cast<char*>(p), size, nullptr};
  auto* b = new Block{s->base, size, true, s, nullptr, nullptr};
  s->first = b;
  segments_.push_back(s);
  blocks_[b->ptr] = b;
  insert_free(b);
  reserved_ += size;
  return b;
}

void CachingAllocator::release_segment_if_empty(Segment* s) {
  Block* b = s->first;
  if (!b->free || b->next != nullptr) return;
  erase_free(b);
  blocks_.erase(b->ptr);
  delete b;
  source_.release(s->base);
  reserved_ -= s->size;
  segments_.erase(std::find(segments_.begin(), segments_.end(), s));
  delete s;
}

void CachingAllocator::release_cached() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Segment*> all = segments_;
  for (Segment* s : all) release_segment_if_empty(s);
}

void* CachingAllocator::allocate(size_t bytes) {
  if (bytes == 0) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  const size_t size = round_up(bytes, kAlignment);
  Block* b = take_free(size);
  if (b == nullptr && mode_ != AXON_MEMORY_RESERVE) {
    size_t seg = round_up(size, kSegmentGranule);
    auto fits = [&](size_t n) { return mode_ != AXON_MEMORY_LIMIT || reserved_ + n <= limit_; };
    auto grow = [&]() -> bool {
      if (fits(seg) && add_segment(seg)) return true;
      if (seg != size && fits(size) && add_segment(size)) return true;  // exact size when the granule does not fit
      return false;
    };
    if (!grow()) {
      // Give cached, empty segments back and try once more (fragmentation).
      std::vector<Segment*> all = segments_;
      for (Segment* s : all) release_segment_if_empty(s);
      grow();
    }
    b = take_free(size);
  }
  if (b == nullptr) sdk::fail(AXON_OUT_OF_MEMORY, oom_message(bytes));
  in_use_ += b->size;
  peak_ = std::max(peak_, in_use_);
  return b->ptr;
}

void CachingAllocator::deallocate(void* p) noexcept {
  if (p == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = blocks_.find(static_cast<char*>(p));
  if (it == blocks_.end() || it->second->free) return;  // not ours, or freed twice: ignore rather than corrupt
  Block* b = it->second;
  in_use_ -= b->size;
  b->free = true;
  if (Block* n = b->next; n && n->free) {  // merge the next block into b
    erase_free(n);
    b->size += n->size;
    b->next = n->next;
    if (n->next) n->next->prev = b;
    blocks_.erase(n->ptr);
    delete n;
  }
  if (Block* q = b->prev; q && q->free) {  // merge b into the previous block
    erase_free(q);
    q->size += b->size;
    q->next = b->next;
    if (b->next) b->next->prev = q;
    blocks_.erase(b->ptr);
    delete b;
    b = q;
  }
  insert_free(b);
}

uint64_t CachingAllocator::largest_free() const { return free_.empty() ? 0 : free_.rbegin()->first; }

axon_memory_info CachingAllocator::info() const {
  std::lock_guard<std::mutex> lock(mu_);
  axon_memory_info m{};
  m.struct_size = sizeof m;
  m.in_use = in_use_;
  m.peak_in_use = peak_;
  m.reserved = reserved_;
  m.limit = mode_ == AXON_MEMORY_LIMIT || (mode_ == AXON_MEMORY_RESERVE && limit_ > 0) ? limit_ : 0;
  m.total = total_;
  m.largest_free_block = largest_free();
  return m;
}

std::string CachingAllocator::oom_message(size_t requested) const {
  std::string limit = mode_ == AXON_MEMORY_LIMIT ? human(limit_) : mode_ == AXON_MEMORY_RESERVE ? human(reserved_) + " (reserved at start)" : "none";
  return sdk::format("out of memory on %s: requested %s (%llu bytes); memory mode %s, limit %s, in use %s, reserved %s, "
                     "largest free block %s, device total %s",
                     label_.c_str(), human(requested).c_str(), static_cast<unsigned long long>(requested), mode_name(mode_),
                     limit.c_str(), human(in_use_).c_str(), human(reserved_).c_str(), human(largest_free()).c_str(),
                     human(total_).c_str());
}

}  // namespace axon::cuda

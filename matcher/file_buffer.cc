// SPDX-License-Identifier: Apache-2.0
#include "matcher/file_buffer.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>

namespace faultline {
namespace {

// The mappings the SIGBUS handler may repair. A handler may only touch
// lock-free atomics, so the slots are a fixed array of them.
struct GuardSlot {
  std::atomic<bool> taken{false};
  std::atomic<char*> begin{nullptr};  // published last: the handler reads it first
  std::atomic<std::size_t> size{0};
  std::atomic<std::size_t> shrunk_to{SIZE_MAX};
};
std::array<GuardSlot, 8> g_slots;
std::size_t g_page_size = 4096;
struct sigaction g_previous {};

// A read past the end of a mapped file that shrank: map zeros from the
// faulting page to the mapping's end (the file holds nothing there any
// more) and return, so the read is retried and sees zeros. Not one of
// ours: put the previous action back and return; the retried access faults
// again and gets it.
void OnBusError(int /*signal*/, siginfo_t* info, void* /*context*/) {
  char* const addr = static_cast<char*>(info->si_addr);
  for (GuardSlot& slot : g_slots) {
    char* const begin = slot.begin.load(std::memory_order_acquire);
    const std::size_t size = slot.size.load(std::memory_order_relaxed);
    if (begin == nullptr || addr < begin || addr >= begin + size) continue;
    const std::size_t offset = static_cast<std::size_t>(addr - begin) / g_page_size * g_page_size;
    if (mmap(begin + offset, size - offset, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
             0) == MAP_FAILED) {
      break;
    }
    std::size_t seen = slot.shrunk_to.load(std::memory_order_relaxed);
    while (offset < seen && !slot.shrunk_to.compare_exchange_weak(seen, offset)) {
    }
    return;
  }
  sigaction(SIGBUS, &g_previous, nullptr);
}

// A slot for the mapping [begin, begin + size), with the handler installed
// (once, keeping the previous action); -1 when every slot is taken.
int Guard(char* begin, std::size_t size) {
  static std::once_flag installed;
  std::call_once(installed, [] {
    g_page_size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    struct sigaction action {};
    action.sa_sigaction = &OnBusError;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, &g_previous);
  });
  for (std::size_t i = 0; i < g_slots.size(); ++i) {
    GuardSlot& slot = g_slots[i];
    if (slot.taken.exchange(true)) continue;
    slot.size.store(size, std::memory_order_relaxed);
    slot.shrunk_to.store(SIZE_MAX, std::memory_order_relaxed);
    slot.begin.store(begin, std::memory_order_release);
    return static_cast<int>(i);
  }
  return -1;
}

Status ReadAll(int fd, std::string& out) {
  constexpr std::size_t kBlock = 1 << 20;
  while (true) {
    std::size_t old = out.size();
    out.resize(old + kBlock);
    ssize_t n = read(fd, out.data() + old, kBlock);
    if (n < 0) {
      if (errno == EINTR) {
        out.resize(old);
        continue;
      }
      out.resize(old);
      return DataLossError(std::strerror(errno));
    }
    out.resize(old + static_cast<std::size_t>(n));
    if (n == 0) return OkStatus();
  }
}

}  // namespace

FileBuffer::FileBuffer(FileBuffer&& other) noexcept
    : owned_(std::move(other.owned_)),
      map_(other.map_),
      map_size_(other.map_size_),
      guard_(other.guard_) {
  text_ =
      map_ ? std::string_view(static_cast<const char*>(map_), map_size_) : std::string_view(owned_);
  other.map_ = nullptr;
  other.map_size_ = 0;
  other.guard_ = -1;
  other.text_ = {};
}

FileBuffer::~FileBuffer() {
  if (guard_ >= 0) {
    GuardSlot& slot = g_slots[static_cast<std::size_t>(guard_)];
    slot.begin.store(nullptr);
    slot.taken.store(false);
  }
  if (map_) munmap(map_, map_size_);
}

std::optional<std::size_t> FileBuffer::shrunk_to() const {
  if (guard_ < 0) return std::nullopt;
  const std::size_t at = g_slots[static_cast<std::size_t>(guard_)].shrunk_to.load();
  return at == SIZE_MAX ? std::nullopt : std::optional<std::size_t>(at);
}

Result<FileBuffer> FileBuffer::Open(const std::string& path) {
  FileBuffer b;
  if (path == "-") {
    Status st = ReadAll(STDIN_FILENO, b.owned_);
    if (!st.ok()) return st;
    b.text_ = b.owned_;
    return b;
  }
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NotFoundError(path + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    const auto size = static_cast<std::size_t>(st.st_size);
    void* m = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m != MAP_FAILED && (b.guard_ = Guard(static_cast<char*>(m), size)) < 0) {
      munmap(m, size);  // no slot left to guard it: read it instead
      m = MAP_FAILED;
    }
    if (m != MAP_FAILED) {
      // One sequential pass: ask for aggressive read-ahead.
      madvise(m, static_cast<std::size_t>(st.st_size), MADV_SEQUENTIAL);
      madvise(m, static_cast<std::size_t>(st.st_size), MADV_WILLNEED);
      close(fd);
      b.map_ = m;
      b.map_size_ = static_cast<std::size_t>(st.st_size);
      b.text_ = std::string_view(static_cast<const char*>(m), b.map_size_);
      return b;
    }
  }
  Status rs = ReadAll(fd, b.owned_);
  close(fd);
  if (!rs.ok()) return DataLossError(path + ": " + rs.message());
  b.text_ = b.owned_;
  return b;
}

}  // namespace faultline

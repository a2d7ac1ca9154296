// C11 threads (<threads.h>) over the pthread calls ThreadSanitizer intercepts;
// linked into the test executables of a FL_SANITIZE=thread build only.
//
// Debian 12's librdkafka starts its threads with thrd_create. glibc implements
// it without going through pthread_create, and neither GCC 12's libtsan nor
// clang 14's intercepts it: a librdkafka thread is unknown to TSan and crashes
// it at its first malloc (SIGSEGV in SizeClassAllocator64LocalCache::Allocate,
// every Kafka test). These definitions in the executable interpose glibc's
// (the dynamic linker binds librdkafka's thrd_create@GLIBC_2.34 to an
// unversioned definition in the executable) and forward to pthreads; glibc's
// thrd_t is a pthread_t. librdkafka's mtx_*/cnd_* stay glibc's: its internals
// are outside TSan's view anyway (tests/sanitizers/tsan.supp).
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <threads.h>

namespace {

int FromErrno(int err) {
  switch (err) {
    case 0:
      return thrd_success;
    case ENOMEM:
      return thrd_nomem;
    case ETIMEDOUT:
      return thrd_timedout;
    case EBUSY:
      return thrd_busy;
    default:
      return thrd_error;
  }
}

struct Start {
  thrd_start_t func;
  void* arg;
};

void* Trampoline(void* p) {
  Start start = *static_cast<Start*>(p);
  free(p);
  // thrd_exit is pthread_exit((void*)(uintptr_t)res) in glibc: the same encoding.
  // NOLINTNEXTLINE(performance-no-int-to-ptr): that encoding is the point here.
  return reinterpret_cast<void*>(static_cast<intptr_t>(start.func(start.arg)));
}

}  // namespace

extern "C" {

int thrd_create(thrd_t* thr, thrd_start_t func, void* arg) {
  auto* start = static_cast<Start*>(malloc(sizeof(Start)));
  if (start == nullptr) return thrd_nomem;
  *start = Start{func, arg};
  int err = pthread_create(reinterpret_cast<pthread_t*>(thr), nullptr, Trampoline, start);
  if (err != 0) free(start);
  return FromErrno(err);
}

int thrd_join(thrd_t thr, int* res) {
  void* value = nullptr;
  int err = pthread_join(static_cast<pthread_t>(thr), &value);
  if (err == 0 && res != nullptr) {
    *res = static_cast<int>(reinterpret_cast<intptr_t>(value));
  }
  return FromErrno(err);
}

int thrd_detach(thrd_t thr) { return FromErrno(pthread_detach(static_cast<pthread_t>(thr))); }

}  // extern "C"

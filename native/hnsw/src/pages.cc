// Transparent huge pages for the flat index's memory. Writing rows into memory never touched
// before costs a page fault every 4 KB, and on the virtual machines this project runs on a fault
// costs ~12 µs (3 ms a MB: a fusion's 17,000 new rows mapped in 0.65 s); one fault per 2 MB
// costs a fiftieth of that once the host has the memory (docs/benchmarks.md, "Thirtieth session").
// The advice is only asked where THP is `madvise` (the distributions' default); `always` gives
// huge pages anyway, `never` none.
#include "pages.h"

#include <cstdint>

#ifdef __linux__
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace salon {
namespace {

Napi::Value HugePages(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsTypedArray()) {
    Napi::TypeError::New(env, "hugePages(view: TypedArray)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  // napi_get_typedarray_info gives the data of a view over a SharedArrayBuffer too (scan.cc).
  napi_typedarray_type type;
  size_t length = 0;
  void* data = nullptr;
  if (napi_get_typedarray_info(env, info[0], &type, &length, &data, nullptr, nullptr) != napi_ok || data == nullptr) return Napi::Boolean::New(env, false);
  return Napi::Boolean::New(env, AdviseHugePages(data, info[0].As<Napi::TypedArray>().ByteLength()));
}

}  // namespace

bool AdviseHugePages(void* data, size_t bytes) {
#ifdef __linux__
  if (data == nullptr) return false;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  // Only whole pages of this memory: advice on a neighbour's pages would change them too.
  const uintptr_t from = (reinterpret_cast<uintptr_t>(data) + page - 1) & ~(page - 1);
  const uintptr_t to = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(page - 1);
  if (to <= from) return false;
  return madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE) == 0;
#else
  (void)data;
  (void)bytes;
  return false;
#endif
}

Napi::Object InitPages(Napi::Env env, Napi::Object exports) {
  exports.Set("hugePages", Napi::Function::New(env, HugePages, "hugePages"));
  return exports;
}

}  // namespace salon

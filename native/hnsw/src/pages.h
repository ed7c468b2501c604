// Memory advice for large buffers (pages.cc), registered beside the Graph class.
#pragma once
#include <napi.h>

#include <cstddef>

namespace salon {
/**
 * Adds hugePages(view): asks Linux to back the whole pages of a typed array's memory with
 * transparent huge pages (madvise MADV_HUGEPAGE); true where the advice was taken, false where it
 * is not possible (another OS, a kernel without them).
 */
Napi::Object InitPages(Napi::Env env, Napi::Object exports);

/** The same advice for `bytes` of memory at `data` (whole pages inside it only); false where not taken. */
bool AdviseHugePages(void* data, size_t bytes);
}  // namespace salon

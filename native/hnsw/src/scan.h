// The flat index's native scan kernel (scan.cc), registered beside the Graph class.
#pragma once
#include <napi.h>

namespace salon {
/** Adds scanTop, scanFloor and scanKernel to the module's exports. */
Napi::Object InitScan(Napi::Env env, Napi::Object exports);
}  // namespace salon

// Scheduling of background threads (thread.h).
#include "thread.h"

#ifdef __linux__
#include <sched.h>
#endif

namespace salon {
namespace {

// SCHED_IDLE rather than nice 19: under Linux's EEVDF scheduler a nice-19 thread that is running
// keeps its core for up to a slice (~2–3 ms measured) after the event loop's thread wakes on the
// same core, while a SCHED_IDLE thread is preempted at once by any normal thread. On Linux a policy
// set with pid 0 applies to the calling thread alone, and any thread may lower its own.
Napi::Value BackgroundThread(const Napi::CallbackInfo& info) {
#ifdef __linux__
  sched_param param{};
  param.sched_priority = 0;
  return Napi::Boolean::New(info.Env(), sched_setscheduler(0, SCHED_IDLE, &param) == 0);
#else
  return Napi::Boolean::New(info.Env(), false);
#endif
}

}  // namespace

Napi::Object InitThread(Napi::Env env, Napi::Object exports) {
  exports.Set("backgroundThread", Napi::Function::New(env, BackgroundThread, "backgroundThread"));
  return exports;
}

}  // namespace salon

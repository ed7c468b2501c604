// Scheduling of background threads (thread.h).
#include "thread.h"

#ifdef __linux__
#include <sched.h>
#include <unistd.h>

#include <string>
#endif

namespace salon {
namespace {

#ifdef __linux__
// SCHED_IDLE rather than nice 19: under Linux's EEVDF scheduler a nice-19 thread that is running
// keeps its core for up to a slice (~2–3 ms measured) after the event loop's thread wakes on the
// same core, while a SCHED_IDLE thread is preempted at once by any normal thread. On Linux a policy
// set with id 0 applies to the calling thread alone, and any thread may lower its own.
bool ToIdle(pid_t tid) {
  sched_param param{};
  param.sched_priority = 0;
  return sched_setscheduler(tid, SCHED_IDLE, &param) == 0;
}
#endif

Napi::Value BackgroundThread(const Napi::CallbackInfo& info) {
#ifdef __linux__
  return Napi::Boolean::New(info.Env(), ToIdle(0));
#else
  return Napi::Boolean::New(info.Env(), false);
#endif
}

// Other threads of this process, by thread id: Node's own helpers (V8's platform workers), which it
// starts before any of the app's code runs. An id that is not a thread of this process (one that
// ended, or another process's) is skipped, so the call cannot reach outside the process.
Napi::Value BackgroundThreads(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsArray()) {
    Napi::TypeError::New(env, "backgroundThreads: expected an array of thread ids").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  Napi::Array ids = info[0].As<Napi::Array>();
  uint32_t changed = 0;
#ifdef __linux__
  for (uint32_t i = 0; i < ids.Length(); i++) {
    Napi::Value v = ids[i];
    if (!v.IsNumber()) continue;
    const double id = v.As<Napi::Number>().DoubleValue();
    if (!(id >= 1 && id <= 4194304) || id != static_cast<double>(static_cast<pid_t>(id))) continue;
    const pid_t tid = static_cast<pid_t>(id);
    if (access(("/proc/self/task/" + std::to_string(tid)).c_str(), F_OK) == 0 && ToIdle(tid)) changed++;
  }
#endif
  return Napi::Number::New(env, changed);
}

}  // namespace

bool IdleCallingThread() {
#ifdef __linux__
  return ToIdle(0);
#else
  return false;
#endif
}

Napi::Object InitThread(Napi::Env env, Napi::Object exports) {
  exports.Set("backgroundThread", Napi::Function::New(env, BackgroundThread, "backgroundThread"));
  exports.Set("backgroundThreads", Napi::Function::New(env, BackgroundThreads, "backgroundThreads"));
  return exports;
}

}  // namespace salon

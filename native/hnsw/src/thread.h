// Scheduling of background threads (thread.cc), registered beside the Graph class.
#pragma once
#include <napi.h>

namespace salon {
/**
 * Adds backgroundThread(): puts the calling thread in Linux's SCHED_IDLE class, so that any normal
 * thread waking on its core (the event loop) preempts it at once; false where that is not possible.
 * Adds backgroundThreads(ids): the same for the listed threads of this process (ids of others are
 * skipped); returns how many it changed (0 where that is not possible).
 */
Napi::Object InitThread(Napi::Env env, Napi::Object exports);

/** Puts the calling thread in SCHED_IDLE (as backgroundThread() does); false where that is not possible. */
bool IdleCallingThread();
}  // namespace salon

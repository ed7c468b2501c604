/** What both stores do alike when a sweep fails the unfinished jobs of stopped nodes. */
import type { JobFailure, JobRunner, LiveJobs, Store } from './types.js';

/** Store.failUnfinishedJobs through the store's own settleUnfinishedJobs: each job failed with `failure` at `now`. */
export async function failUnfinished(
  store: Pick<Store, 'settleUnfinishedJobs'>,
  runner: JobRunner,
  failure: JobFailure,
  now: string,
  except: LiveJobs,
): Promise<string[]> {
  const failed = await store.settleUnfinishedJobs(runner, except, (job) => ({
    ...job,
    status: 'failed',
    failures: [...job.failures, failure],
    updatedAt: now,
  }));
  return failed.map((job) => job.id);
}

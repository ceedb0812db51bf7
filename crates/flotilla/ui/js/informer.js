// Live collections: list once, then follow the watch stream, relisting when the watch's
// revision has been compacted (410) and reconnecting when a stream ends. One informer per
// collection path, shared by every view that uses it while the page shows them.

import { ApiError, get, watch } from './api.js';

const RETRY_MS = 2000;
const MAX_RETRY_MS = 30000;
const NOTIFY_MS = 500;

/** The objects of one collection, kept current by watch. */
export class Informer {
  constructor(path) {
    this.path = path;
    this.items = new Map();
    this.synced = false;
    this.error = null;
    this.stopped = false;
    this.listeners = new Set();
    this.users = 0;
    this.abort = new AbortController();
    this.scheduled = false;
    this.notified = -Infinity;
  }

  /** The objects, in no particular order. */
  list() {
    return [...this.items.values()];
  }

  /** Calls `listener` after changes (coalesced to one call per animation frame). */
  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Notifies the listeners of a change: on the next animation frame, and at most once per
   * NOTIFY_MS while events stream in (a thousand members heartbeating must not keep the
   * page re-rendering).
   */
  changed() {
    if (this.scheduled) return;
    this.scheduled = true;
    const wait = Math.max(0, this.notified + NOTIFY_MS - performance.now());
    setTimeout(() => requestAnimationFrame(() => {
      this.scheduled = false;
      this.notified = performance.now();
      for (const listener of this.listeners) listener();
    }), wait);
  }

  async run() {
    const signal = this.abort.signal;
    let retry = RETRY_MS;
    while (!signal.aborted) {
      try {
        const list = await get(this.path, signal);
        this.items = new Map(list.items.map((o) => [keyOf(o), o]));
        this.synced = true;
        this.error = null;
        this.changed();
        let revision = list.metadata.resourceVersion;
        let expired = false;
        while (!signal.aborted && !expired) {
          await watch(this.path, revision, signal, (event) => {
            const object = event.object;
            if (event.type === 'ERROR') {
              expired = object?.code === 410;
              if (!expired) throw new ApiError(object?.code || 500, object);
              return false;
            }
            revision = object.metadata.resourceVersion || revision;
            if (event.type === 'BOOKMARK') return;
            if (event.type === 'DELETED') this.items.delete(keyOf(object));
            else this.items.set(keyOf(object), object);
            this.changed();
            return true;
          });
          this.error = null;
          retry = RETRY_MS;
        }
      } catch (error) {
        if (signal.aborted) return;
        this.error = error;
        // Not allowed, or not there: retrying will not help until something changes.
        this.stopped = error.status === 403 || error.status === 404;
        this.changed();
        if (this.stopped) return;
        await new Promise((resolve) => setTimeout(resolve, retry));
        retry = Math.min(retry * 2, MAX_RETRY_MS);
      }
    }
  }
}

function keyOf(object) {
  const m = object.metadata;
  return m.namespace ? `${m.namespace}/${m.name}` : m.name;
}

const informers = new Map();

/** The shared informer of `path`, started on first use; release it with [`release`]. */
export function acquire(path) {
  let informer = informers.get(path);
  if (!informer) {
    informer = new Informer(path);
    informers.set(path, informer);
    informer.run();
  }
  informer.users += 1;
  return informer;
}

/** Gives back an informer from [`acquire`]; the last user's release stops its watch. */
export function release(informer) {
  informer.users -= 1;
  if (informer.users === 0) {
    informer.abort.abort();
    informers.delete(informer.path);
  }
}

/** Stops every informer (on sign-out). */
export function releaseAll() {
  for (const informer of informers.values()) informer.abort.abort();
  informers.clear();
}

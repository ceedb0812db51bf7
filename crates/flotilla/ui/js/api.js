// The hub's Kubernetes API, as the signed-in user. Every read goes through the hub's gate
// (authentication, RBAC, limits) exactly as kubectl's would: the dashboard holds no data of
// its own and has no privileged path.

const TOKEN_KEY = 'flotilla.token';

/** The bearer token of this tab's session, or null (client certificate, or signed out). */
export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** Remembers `value` as this tab's bearer token (null forgets it). */
export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/** An API failure, carrying the Kubernetes Status the hub answered with. */
export class ApiError extends Error {
  constructor(status, body) {
    super(body?.message || `HTTP ${status}`);
    this.status = status;
    this.reason = body?.reason || '';
  }
}

let unauthorized = () => {};

/** Sets what happens when the hub refuses the session (401): back to the login page. */
export function onUnauthorized(handler) {
  unauthorized = handler;
}

function headers(extra = {}) {
  const h = { Accept: 'application/json', ...extra };
  const t = token();
  if (t) h.Authorization = `Bearer ${t}`;
  return h;
}

async function failure(response) {
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = { message: `${response.status} ${response.statusText}` };
  }
  if (response.status === 401) unauthorized();
  return new ApiError(response.status, body);
}

/** GETs `path` as JSON. */
export async function get(path, signal) {
  const response = await fetch(path, { headers: headers(), cache: 'no-store', signal });
  if (!response.ok) throw await failure(response);
  return response.json();
}

/** Who the hub says the caller is (a SelfSubjectReview): `{username, groups}`. */
export async function whoami() {
  const response = await fetch('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    method: 'POST',
    headers: headers({ 'Content-Type': 'application/json' }),
    body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
  });
  if (!response.ok) throw await failure(response);
  const review = await response.json();
  return review.status?.userInfo || {};
}

/**
 * Streams the watch events of `path` from `resourceVersion`, calling `onEvent` for each
 * (`{type, object}`), until the server ends the stream, `onEvent` returns false, or `signal`
 * aborts.
 */
export async function watch(path, resourceVersion, signal, onEvent) {
  const sep = path.includes('?') ? '&' : '?';
  const url = `${path}${sep}watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(resourceVersion)}`;
  const response = await fetch(url, { headers: headers(), cache: 'no-store', signal });
  if (!response.ok) throw await failure(response);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffered += decoder.decode(value, { stream: !done });
      let newline;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line && onEvent(JSON.parse(line)) === false) return;
      }
      if (done) {
        if (buffered.trim()) onEvent(JSON.parse(buffered));
        return;
      }
    }
  } finally {
    // Whatever ends the stream (its end, an expired revision, an error), close it.
    reader.cancel().catch(() => {});
  }
}

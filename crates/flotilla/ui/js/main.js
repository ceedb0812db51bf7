// The dashboard's shell: sign-in, the navigation bar, and hash routes to the pages
// (#/fleet, #/placements[/NAME], #/staged-runs[/NAME], #/update-runs[/NAME],
// #/nodes[/MEMBER]). Each page mounts into <main> and returns its cleanup.

import { onUnauthorized, setToken, token, whoami } from './api.js';
import * as clock from './clock.js';
import { esc } from './html.js';
import { releaseAll } from './informer.js';
import { mountLogin } from './login.js';
import * as fleet from './fleet.js';
import * as placements from './placements.js';
import * as stagedRuns from './staged_runs.js';
import * as updateRuns from './update_runs.js';
import * as nodes from './nodes.js';

const pages = {
  fleet,
  placements,
  'staged-runs': stagedRuns,
  'update-runs': updateRuns,
  nodes,
};

const view = document.getElementById('view');
const who = document.getElementById('who');
let cleanup = null;
let user = null;

function unmount() {
  if (cleanup) cleanup();
  cleanup = null;
}

function route() {
  if (!user) return;
  const [page, ...rest] = location.hash.replace(/^#\/?/, '').split('/').map(decodeSegment);
  const name = pages[page] ? page : 'fleet';
  for (const link of document.querySelectorAll('#nav a')) {
    link.setAttribute('aria-current', link.dataset.page === name ? 'page' : 'false');
  }
  unmount();
  view.innerHTML = '';
  view.dataset.page = name;
  cleanup = pages[name].mount(view, rest.filter(Boolean));
}

/** A route segment, decoded (kept as typed when it is not valid percent-encoding). */
function decodeSegment(segment) {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function signIn(message) {
  unmount();
  releaseAll();
  clock.stop();
  user = null;
  who.innerHTML = '';
  document.body.classList.add('signed-out');
  view.dataset.page = 'login';
  mountLogin(view, message, (info) => {
    user = info;
    signedIn();
  });
}

function signedIn() {
  document.body.classList.remove('signed-out');
  const groups = (user.groups || []).filter((g) => g !== 'system:authenticated');
  who.innerHTML = `<span id="user" title="${esc(groups.join(', '))}">${esc(user.username || 'anonymous')}</span>
    <span class="muted">read-only</span> <button type="button" id="sign-out">Sign out</button>`;
  who.querySelector('#sign-out').addEventListener('click', () => {
    setToken(null);
    signIn('Signed out.');
  });
  clock.start().then(route);
}

onUnauthorized(() => {
  if (user) {
    setToken(null);
    signIn('The hub no longer accepts this session (401 Unauthorized): sign in again.');
  }
});
window.addEventListener('hashchange', route);

// Resume this tab's session (a stored token, or a client certificate) without asking.
whoami()
  .then((info) => {
    user = info;
    signedIn();
  })
  .catch(() => signIn(token() ? 'Your session has ended: sign in again.' : ''));

// The sign-in page: a bearer token (an admin token from `flotilla up`'s data directory, a
// token from the hub's token file, ...), or the TLS client certificate the browser already
// presents. Either way the hub, not the page, decides: the page asks it who we are.

import { esc } from './html.js';
import { setToken, whoami } from './api.js';

/** Shows the sign-in form in `el`; calls `signedIn(user)` once the hub accepts us. */
export function mountLogin(el, message, signedIn) {
  el.innerHTML = `
    <section class="login">
      <h1>Sign in to the fleet</h1>
      ${message ? `<p class="error" role="alert" id="login-message">${esc(message)}</p>` : ''}
      <form id="login-form">
        <label for="token">Bearer token</label>
        <input id="token" name="token" type="password" autocomplete="off" spellcheck="false"
               placeholder="paste a token">
        <button type="submit" id="sign-in">Sign in with token</button>
      </form>
      <p>or <button type="button" id="use-certificate">Use my client certificate</button></p>
      <p class="muted">The dashboard only reads: it shows what your identity may see, and kubectl
      remains the way to change things. <code>flotilla up</code> keeps an admin token in its
      data directory (<code>.flotilla/token</code>); <code>flotilla kubeconfig --user NAME --group
      fleet:viewers</code> mints a viewer's client certificate.</p>
    </section>`;
  const attempt = async (token) => {
    setToken(token);
    try {
      signedIn(await whoami());
    } catch (error) {
      setToken(null);
      const why = error.status === 401
        ? 'The hub did not accept these credentials (401 Unauthorized).'
        : `Signing in failed: ${error.message}`;
      mountLogin(el, why, signedIn);
    }
  };
  el.querySelector('#login-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const token = el.querySelector('#token').value.trim();
    if (token) attempt(token);
  });
  el.querySelector('#use-certificate').addEventListener('click', () => attempt(null));
}

// The implicit flow, in the browser. The access token comes back in the URL fragment, which the
// browser never sends to a server; so this script starts the flow with a fresh `state`, and on the
// callback page reads the fragment, checks `state` and the granted scope, and calls the API itself.
// No refresh token in this flow (RFC 6749 §4.2.2): when the token expires, the user connects again.

const KEY = 'statusboard.implicit';

const connect = document.getElementById('implicit-connect');
connect?.addEventListener('click', () => {
  const state = Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, '0')).join('');
  const url = new URL(connect.dataset.authorizeUrl);
  url.searchParams.set('state', state);
  sessionStorage.setItem(KEY, JSON.stringify({ state, scope: url.searchParams.get('scope') }));
  location.assign(url);
});

const callback = document.getElementById('implicit-callback');
if (callback) {
  const params = new URLSearchParams(location.hash.slice(1));
  history.replaceState(null, '', location.pathname); // the token leaves the address bar and the history
  const expected = JSON.parse(sessionStorage.getItem(KEY) ?? 'null');
  sessionStorage.removeItem(KEY); // one callback per request

  const status = document.getElementById('implicit-status');
  const output = document.getElementById('implicit-output');
  const show = (text, value) => {
    status.textContent = text;
    output.textContent = JSON.stringify(value, null, 2);
  };

  if (!expected || params.get('state') !== expected.state) {
    // Not the answer to a request this browser made: maybe forged. Use nothing from it.
    show('State mismatch: this response was not requested here, and is ignored.', { state: params.get('state') });
  } else if (params.has('iss') && params.get('iss') !== callback.dataset.issuer) {
    // RFC 9207: the answer comes from another authorization server than the one asked (mix-up).
    show('Unexpected issuer: this response is ignored.', { iss: params.get('iss') });
  } else if (params.has('error')) {
    // In words with the OAuth error code (RFC 6749 §4.2.2.1); textContent, so nothing in it is markup.
    const description = params.get('error_description');
    show(`The authorization did not succeed: Nimbus answered ${params.get('error')}.${description ? ` ${description}` : ''}`, {
      error: params.get('error'),
      error_description: description,
    });
  } else if (params.get('scope') !== expected.scope) {
    show(`Granted scope "${params.get('scope')}" differs from the requested "${expected.scope}": not used.`, {});
  } else {
    const token = params.get('access_token');
    show('Connected in the browser: the token response from the fragment (state checked)', Object.fromEntries(params));
    document.getElementById('implicit-actions').hidden = false;

    const api = document.getElementById('implicit-api');
    const report = async (label, response) => {
      const body = await response.json().catch(() => null);
      const challenge = response.headers.get('www-authenticate');
      api.hidden = false;
      api.textContent = `${label}: ${response.status}\n${JSON.stringify(challenge ? { 'www-authenticate': challenge, body } : body, null, 2)}`;
    };
    document.getElementById('implicit-call').addEventListener('click', async () => {
      report('GET /v2/account', await fetch(callback.dataset.api, { headers: { authorization: `Bearer ${token}` } }));
    });
    document.getElementById('implicit-revoke').addEventListener('click', async () => {
      report('POST /v1/oauth/revoke', await fetch(callback.dataset.revoke, { method: 'POST', body: new URLSearchParams({ token }) }));
    });
  }
}

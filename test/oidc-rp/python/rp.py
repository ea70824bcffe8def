"""A relying party on Authlib's OpenID Connect client (Debian's python3-authlib), for
test/oidc-rp/driver.ts. The protocol (JSON lines) and what is checked are in
test/oidc-rp/README.md. Run with Debian's /usr/bin/python3, which has Authlib and requests."""
import json
import os
import sys
from urllib.parse import parse_qs, urlparse

import authlib
from authlib.integrations.base_client import BaseApp, FrameworkIntegration, OAuth2Mixin, OpenIDMixin
from authlib.integrations.base_client.errors import MismatchingStateError, OAuthError
from authlib.integrations.requests_client import OAuth2Session

ISSUER = os.environ['OIDC_ISSUER']
CLIENT_ID = os.environ['OIDC_CLIENT_ID']
REDIRECT_URI = os.environ['OIDC_REDIRECT_URI']
# Authlib refuses plain http except on "localhost"; a test provider on 127.0.0.1 is plain http.
if urlparse(ISSUER).hostname in ('127.0.0.1', '::1', 'localhost'):
    os.environ['AUTHLIB_INSECURE_TRANSPORT'] = '1'


class RelyingParty(OAuth2Mixin, OpenIDMixin, BaseApp):
    """Authlib's Flask, Django and Starlette clients are this class with a web framework's
    session added: discovery, authorization URL (state, nonce, PKCE), token, ID token, userinfo."""

    client_cls = OAuth2Session


class Stop(Exception):
    pass


def say(line):
    print(json.dumps(line), flush=True)


def step(name, run, show_claims=False):
    """Report one step; the program stops at the first failed one."""
    try:
        value = run()
    except Exception as error:  # the library's own message is the result
        say({'step': name, 'ok': False, 'error': f'{type(error).__name__}: {error}'})
        raise Stop() from error
    say({'step': name, 'ok': True, **({'claims': dict(value)} if show_claims else {})})
    return value


def browse(url):
    say({'browse': url})
    query = {k: v[0] for k, v in parse_qs(urlparse(sys.stdin.readline().strip()).query).items()}
    if 'error' in query:
        raise OAuthError(query['error'], query.get('error_description'))
    return query


def main():
    say({'library': f'Authlib {authlib.__version__} (Debian)'})
    rp = RelyingParty(
        FrameworkIntegration('rp'),
        client_id=CLIENT_ID,
        client_secret=os.environ['OIDC_CLIENT_SECRET'],
        server_metadata_url=ISSUER.rstrip('/') + '/.well-known/openid-configuration',
        client_kwargs={'scope': os.environ['OIDC_SCOPE'], 'code_challenge_method': 'S256'},
    )

    def discover():
        metadata = rp.load_server_metadata()
        # Authlib does not compare the issuer with the URL it came from (Discovery 1.0, 4.3).
        if metadata.get('issuer') != ISSUER:
            raise ValueError(f"issuer {metadata.get('issuer')!r} is not {ISSUER!r}")
        return metadata

    step('discovery', discover)
    request = rp.create_authorization_url(REDIRECT_URI)  # url, state, nonce, code_verifier

    def authorize():
        query = browse(request['url'])
        if query.get('state') != request['state']:
            raise MismatchingStateError()
        return query

    query = step('authorize', authorize)
    token = step('token', lambda: rp.fetch_access_token(REDIRECT_URI, code=query['code'], code_verifier=request['code_verifier']))
    # Signature (JWKS, the announced algorithms), iss, aud, exp, iat, nonce, azp and at_hash. By
    # default Authlib 1.2 checks only iss; aud only through azp, so a token for another client
    # with azp set to ours would pass: the audience is given to its claim checks here.
    expected = {'iss': {'essential': True, 'values': [ISSUER]}, 'aud': {'essential': True, 'values': [CLIENT_ID]}}
    step('id_token', lambda: rp.parse_id_token(token, nonce=request['nonce'], claims_options=expected), True)
    step('userinfo', lambda: rp.userinfo(token=token), True)
    fresh = step('refresh', lambda: rp.fetch_access_token(grant_type='refresh_token', refresh_token=token['refresh_token']))
    # A refreshed ID token carries the original nonce or none (OpenID Connect Core 12.2); with no
    # nonce given Authlib skips that check, so it is made here.
    def refreshed():
        claims = rp.parse_id_token(fresh, nonce=None, claims_options=expected)
        if claims.get('nonce') not in (None, request['nonce']):
            raise ValueError('the refreshed ID token has another nonce')
        return claims

    step('refresh_id_token', refreshed, True)


if __name__ == '__main__':
    try:
        main()
    except Stop:
        pass

# A relying party on the openid_connect gem (Debian's ruby-openid-connect, with rack-oauth2 and
# json-jwt), for test/oidc-rp/driver.ts. The protocol (JSON lines) and what is checked are in
# test/oidc-rp/README.md.
require 'base64'
require 'digest'
require 'json'
require 'openid_connect'
require 'securerandom'

$stdout.sync = true
ISSUER = ENV.fetch('OIDC_ISSUER')
CLIENT_ID = ENV.fetch('OIDC_CLIENT_ID')
# The gem builds discovery URLs as https unless told: a test provider on loopback is plain http.
SWD.url_builder = URI::HTTP if URI(ISSUER).scheme == 'http'

class Stop < StandardError; end

def say(line) = puts(JSON.generate(line))

# Report one step (with the claims it returned, if asked); the program stops at the first failed one.
def step(name, claims: false)
  value = yield
  say({ step: name, ok: true, **(claims ? { claims: value } : {}) })
  value
rescue Stop
  raise
rescue StandardError => e
  say({ step: name, ok: false, error: "#{e.class}: #{e.message}" })
  raise Stop
end

def browse(url)
  say({ browse: url.to_s })
  query = Rack::Utils.parse_query(URI($stdin.gets.to_s.strip).query)
  raise "#{query['error']}: #{query['error_description']}" if query['error']

  query
end

# The gem decodes with the JWKS (signature, key by kid) and verify! checks exp, iss, nonce, aud.
def id_token(config, token, nonce)
  decoded = OpenIDConnect::ResponseObject::IdToken.decode(token.id_token, config.jwks)
  decoded.verify!(issuer: ISSUER, client_id: CLIENT_ID, nonce: nonce)
  decoded.raw_attributes
end

def run
  say({ library: "openid_connect #{OpenIDConnect::VERSION}, rack-oauth2 #{Rack::OAuth2::VERSION} (Debian)" })
  # discover! also checks the issuer is the URL it was asked for.
  config = step('discovery') { OpenIDConnect::Discovery::Provider::Config.discover!(ISSUER) }
  client = OpenIDConnect::Client.new(
    identifier: CLIENT_ID, secret: ENV.fetch('OIDC_CLIENT_SECRET'), redirect_uri: ENV.fetch('OIDC_REDIRECT_URI'),
    authorization_endpoint: config.authorization_endpoint, token_endpoint: config.token_endpoint,
    userinfo_endpoint: config.userinfo_endpoint
  )
  # rack-oauth2 passes PKCE parameters through but makes none: S256 by hand.
  state, nonce, verifier = Array.new(3) { SecureRandom.urlsafe_base64(32) }
  challenge = Base64.urlsafe_encode64(Digest::SHA256.digest(verifier), padding: false)
  url = client.authorization_uri(scope: ENV.fetch('OIDC_SCOPE').split, state: state, nonce: nonce,
                                 code_challenge: challenge, code_challenge_method: 'S256')
  query = step('authorize') do
    browse(url).tap { |q| raise 'state mismatch' unless q['state'] == state }
  end
  client.authorization_code = query['code']
  token = step('token') { client.access_token!(code_verifier: verifier) }
  step('id_token', claims: true) { id_token(config, token, nonce) }
  step('userinfo', claims: true) { token.userinfo!.tap(&:validate!).raw_attributes }
  client.refresh_token = token.refresh_token
  fresh = step('refresh') { client.access_token! }
  step('refresh_id_token', claims: true) do
    # A refreshed ID token carries the original nonce or none (OpenID Connect Core 12.2).
    id_token(config, fresh, JSON::JWT.decode(fresh.id_token, :skip_verification)['nonce'] && nonce)
  end
end

begin
  run
rescue Stop
  nil
end

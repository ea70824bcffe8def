// A relying party on github.com/coreos/go-oidc v2 (Debian's golang-github-coreos-go-oidc-dev)
// and golang.org/x/oauth2, for test/oidc-rp/driver.ts. The protocol (JSON lines) and what is
// checked are in test/oidc-rp/README.md. Built in GOPATH mode from Debian's sources, offline.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/coreos/go-oidc"
	"golang.org/x/oauth2"
)

var (
	out   = json.NewEncoder(os.Stdout)
	stdin = bufio.NewReader(os.Stdin)
)

// step reports one step; the program ends at the first failed one.
func step(name string, err error, claims interface{}) {
	line := map[string]interface{}{"step": name, "ok": err == nil}
	if err != nil {
		line["error"] = err.Error()
		out.Encode(line)
		os.Exit(0)
	} else if claims != nil {
		line["claims"] = claims
	}
	out.Encode(line)
}

// browse asks the driver to take the browser to u, and returns where the provider sent it back.
func browse(u string) (url.Values, error) {
	out.Encode(map[string]string{"browse": u})
	line, readErr := stdin.ReadString('\n')
	back, err := url.Parse(strings.TrimSpace(line))
	if readErr != nil || err != nil {
		return nil, fmt.Errorf("no callback URL from the driver: %v %v", readErr, err)
	}
	return back.Query(), nil
}

func random() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// verify checks a token response's ID token: go-oidc checks signature (JWKS), issuer, audience
// and expiry; v2 leaves the nonce and at_hash to the caller, as its documentation says.
func verify(ctx context.Context, v *oidc.IDTokenVerifier, tok *oauth2.Token, nonce string, refreshed bool) (map[string]interface{}, error) {
	raw, ok := tok.Extra("id_token").(string)
	if !ok {
		return nil, errors.New("no id_token in the token response")
	}
	idToken, err := v.Verify(ctx, raw)
	if err != nil {
		return nil, err
	}
	// A refreshed ID token carries the original nonce or none (OpenID Connect Core 12.2).
	if idToken.Nonce != nonce && !(refreshed && idToken.Nonce == "") {
		return nil, fmt.Errorf("nonce mismatch: got %q", idToken.Nonce)
	}
	if idToken.AccessTokenHash != "" {
		if err := idToken.VerifyAccessToken(tok.AccessToken); err != nil {
			return nil, err
		}
	}
	var claims map[string]interface{}
	return claims, idToken.Claims(&claims)
}

func main() {
	ctx := context.Background()
	out.Encode(map[string]string{"library": "github.com/coreos/go-oidc v2.1 with golang.org/x/oauth2 (Debian)"})
	provider, err := oidc.NewProvider(ctx, os.Getenv("OIDC_ISSUER"))
	step("discovery", err, nil)
	// v2.1 accepts only RS256 unless told: take the algorithms the provider announces.
	var meta struct {
		Algs []string `json:"id_token_signing_alg_values_supported"`
	}
	provider.Claims(&meta)
	verifier := provider.Verifier(&oidc.Config{ClientID: os.Getenv("OIDC_CLIENT_ID"), SupportedSigningAlgs: meta.Algs})
	config := oauth2.Config{
		ClientID: os.Getenv("OIDC_CLIENT_ID"), ClientSecret: os.Getenv("OIDC_CLIENT_SECRET"),
		Endpoint: provider.Endpoint(), RedirectURL: os.Getenv("OIDC_REDIRECT_URI"),
		Scopes: strings.Fields(os.Getenv("OIDC_SCOPE")),
	}

	// x/oauth2 0.3 has no PKCE helper (GenerateVerifier came in 0.13): S256 by hand.
	state, nonce, codeVerifier := random(), random(), random()
	challenge := sha256.Sum256([]byte(codeVerifier))
	query, err := browse(config.AuthCodeURL(state, oidc.Nonce(nonce),
		oauth2.SetAuthURLParam("code_challenge", base64.RawURLEncoding.EncodeToString(challenge[:])),
		oauth2.SetAuthURLParam("code_challenge_method", "S256")))
	if err == nil && query.Get("error") != "" {
		err = fmt.Errorf("%s: %s", query.Get("error"), query.Get("error_description"))
	} else if err == nil && query.Get("state") != state {
		err = errors.New("state mismatch")
	}
	step("authorize", err, nil)
	tok, err := config.Exchange(ctx, query.Get("code"), oauth2.SetAuthURLParam("code_verifier", codeVerifier))
	step("token", err, nil)
	claims, err := verify(ctx, verifier, tok, nonce, false)
	step("id_token", err, claims)
	info, err := provider.UserInfo(ctx, oauth2.StaticTokenSource(tok))
	var infoClaims map[string]interface{}
	if err == nil {
		err = info.Claims(&infoClaims)
	}
	step("userinfo", err, infoClaims)
	// go-oidc has no refresh call: x/oauth2's TokenSource refreshes a token it sees expired.
	tok.Expiry = time.Now().Add(-time.Minute)
	fresh, err := config.TokenSource(ctx, tok).Token()
	if err == nil && fresh.AccessToken == tok.AccessToken {
		err = errors.New("the token source did not refresh")
	}
	step("refresh", err, nil)
	claims, err = verify(ctx, verifier, fresh, nonce, true)
	step("refresh_id_token", err, claims)
}

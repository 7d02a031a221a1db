package main

import (
	"crypto/rand"
	"encoding/base64"
)

// tlsStorageKeyVar seals the zone's certificate keys in its schema
// (services/zoneagent/internal/store.CertStorage). Made once and kept: a new key would leave
// every stored certificate and ACME account unreadable, and every edge of the zone needs the
// same one.
const tlsStorageKeyVar = "ZONE_TLS_STORAGE_KEY"

// ensureTLSStorageKey puts a key in the zone agent's file if it has none.
func ensureTLSStorageKey(file map[string]string) {
	if k, err := base64.StdEncoding.DecodeString(file[tlsStorageKeyVar]); err == nil && len(k) == 32 {
		return
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	file[tlsStorageKeyVar] = base64.StdEncoding.EncodeToString(b)
}

// Package gateway holds what the gateway serves from the repository as it is.
package gateway

import _ "embed"

// OpenAPI is the public API's OpenAPI 3.1.0 description, served at /api/openapi.json byte for
// byte as it is in the repository.
//
//go:embed openapi.json
var OpenAPI []byte

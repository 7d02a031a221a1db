package proxy

import (
	"net/http"
	"strings"

	"github.com/valyala/fasthttp"
)

// hopByHop headers describe one connection, not the message (RFC 9110 section 7.6.1).
var hopByHop = map[string]bool{
	"Connection":          true,
	"Proxy-Connection":    true,
	"Keep-Alive":          true,
	"Proxy-Authenticate":  true,
	"Proxy-Authorization": true,
	"Te":                  true,
	"Trailer":             true,
	"Transfer-Encoding":   true,
	"Upgrade":             true,
}

// Request headers the gateway sets itself or keeps: Host and Content-Length follow the new
// connection, Expect was already answered by the gateway, and the trace headers are replaced
// by the gateway's own span. Authorization and Cookie stop here: the gateway alone checks
// the bearer token and tells the service who the caller is in its signature, so a service
// (or anything that reads its traffic) never holds a credential it could replay.
var ownRequest = map[string]bool{
	"Host":           true,
	"Content-Length": true,
	"Expect":         true,
	"Traceparent":    true,
	"Tracestate":     true,
	"Authorization":  true,
	"Cookie":         true,
}

// Response headers the gateway sets itself: the body length follows the stream, and Date is
// written by the server.
var ownResponse = map[string]bool{
	"Content-Length": true,
	"Date":           true,
}

// Prefixes never forwarded. X-Tori-* is internal in both directions: inbound it could forge a
// caller, outbound it carries signals such as X-Tori-Count-Bucket. The contract has no
// X-RateLimit-* header, and CORS headers come from the gateway alone.
const (
	internalPrefix  = "X-Tori-"
	rateLimitPrefix = "X-Ratelimit-"
	corsPrefix      = "Access-Control-"
)

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// connectionListed reports whether name appears in a Connection header's token list, which
// makes it hop-by-hop too.
func connectionListed(conn, name string) bool {
	if conn == "" {
		return false
	}
	for tok := range strings.SplitSeq(conn, ",") {
		if strings.EqualFold(strings.TrimSpace(tok), name) {
			return true
		}
	}
	return false
}

// copyRequestHeaders copies the client's headers to the upstream request, minus the ones
// above.
func copyRequestHeaders(src *fasthttp.RequestHeader, dst http.Header) {
	conn := string(src.Peek("Connection"))
	src.VisitAll(func(k, v []byte) {
		key := http.CanonicalHeaderKey(string(k))
		if hopByHop[key] || ownRequest[key] || hasPrefixFold(key, internalPrefix) || connectionListed(conn, key) {
			return
		}
		dst[key] = append(dst[key], string(v))
	})
}

// copyResponseHeaders copies the service's headers to the client's response, minus the ones
// above.
func copyResponseHeaders(src http.Header, dst *fasthttp.ResponseHeader) {
	conn := src.Get("Connection")
	for key, vs := range src {
		if hopByHop[key] || ownResponse[key] || connectionListed(conn, key) ||
			hasPrefixFold(key, internalPrefix) || hasPrefixFold(key, rateLimitPrefix) || hasPrefixFold(key, corsPrefix) {
			continue
		}
		for _, v := range vs {
			dst.Add(key, v)
		}
	}
}

package proxy

import (
	"net/http"
	"testing"

	"github.com/valyala/fasthttp"
)

func TestRequestHeaders(t *testing.T) {
	var src fasthttp.RequestHeader
	src.SetMethod("POST")
	src.SetHost("gateway.example")
	for k, v := range map[string]string{
		"Authorization":    "Bearer svc_x",
		"cookie":           "session=abc",
		"Content-Type":     "application/json",
		"X-Request-Id":     "r1",
		"X-Tori-Account":   "forged",
		"x-tori-signature": "forged",
		"Keep-Alive":       "timeout=5",
		"Te":               "trailers",
		"Upgrade":          "h2c",
		"Connection":       "X-Secret-Hop",
		"X-Secret-Hop":     "1",
		"Expect":           "100-continue",
		"Traceparent":      "00-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-bbbbbbbbbbbbbbbb-01",
	} {
		src.Set(k, v)
	}
	dst := http.Header{}
	copyRequestHeaders(&src, dst)
	for _, k := range []string{"Content-Type", "X-Request-Id"} {
		if dst.Get(k) == "" {
			t.Errorf("%s dropped", k)
		}
	}
	for _, k := range []string{"Authorization", "Cookie", "Host", "X-Tori-Account", "X-Tori-Signature", "Keep-Alive", "Te", "Upgrade", "Connection", "X-Secret-Hop", "Expect", "Traceparent"} {
		if v := dst.Values(k); len(v) > 0 {
			t.Errorf("%s forwarded: %v", k, v)
		}
	}
}

func TestResponseHeaders(t *testing.T) {
	src := http.Header{}
	for k, v := range map[string]string{
		"Content-Type":                     "application/json",
		"Location":                         "/api/apps/x",
		"X-Tori-Count-Bucket":              "1",
		"X-Ratelimit-Limit":                "5",
		"X-RateLimit-Reset":                "9",
		"Access-Control-Allow-Origin":      "*",
		"Access-Control-Allow-Credentials": "true",
		"Transfer-Encoding":                "chunked",
		"Connection":                       "close, X-Hop",
		"X-Hop":                            "1",
		"Content-Length":                   "12",
	} {
		src[k] = []string{v} // as sent, not canonicalised: the filter must not depend on case
	}
	src.Add("Set-Cookie", "a=1")
	var dst fasthttp.ResponseHeader
	copyResponseHeaders(src, &dst)
	if string(dst.ContentType()) != "application/json" || string(dst.Peek("Location")) != "/api/apps/x" {
		t.Fatal("kept headers lost")
	}
	for _, k := range []string{"X-Tori-Count-Bucket", "X-Ratelimit-Limit", "X-Ratelimit-Reset", "Access-Control-Allow-Origin",
		"Access-Control-Allow-Credentials", "Transfer-Encoding", "X-Hop"} {
		if v := dst.Peek(k); len(v) > 0 {
			t.Errorf("%s passed through: %s", k, v)
		}
	}
}

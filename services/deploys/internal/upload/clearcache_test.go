package upload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"tori.dev/services/deploys/internal/deploy"
)

// A source deploy's clearCache part: true or false, at most once; absent is false. A static
// upload carrying one is a service's payload (kind_mismatch).
func TestClearCachePart(t *testing.T) {
	tgz := tarball(t, entry{"tori.json", `{"start": "x"}`})
	body := func(values ...string) []byte {
		var b bytes.Buffer
		fmt.Fprintf(&b, "--%s\r\nContent-Disposition: form-data; name=\"source\"; filename=\"app.tar.gz\"\r\n\r\n", boundary)
		b.Write(tgz)
		b.WriteString("\r\n")
		for _, v := range values {
			fmt.Fprintf(&b, "--%s\r\nContent-Disposition: form-data; name=\"clearCache\"\r\n\r\n%s\r\n", boundary, v)
		}
		fmt.Fprintf(&b, "--%s--\r\n", boundary)
		return b.Bytes()
	}
	for _, tc := range []struct {
		name   string
		values []string
		want   bool
		err    error
	}{
		{"absent", nil, false, nil},
		{"true", []string{"true"}, true, nil},
		{"false", []string{"false"}, false, nil},
		{"true with a newline", []string{"true\n"}, true, nil},
		{"yes", []string{"yes"}, false, deploy.ErrInvalidBody},
		{"twice", []string{"true", "false"}, false, deploy.ErrInvalidBody},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parts, err := Source(bytes.NewReader(body(tc.values...)), boundary, io.Discard)
			if !errors.Is(err, tc.err) || (err == nil && tc.err != nil) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if parts.ClearCache != tc.want {
				t.Fatalf("clearCache %v, want %v", parts.ClearCache, tc.want)
			}
		})
	}

	static := fmt.Sprintf("--%s\r\nContent-Disposition: form-data; name=\"clearCache\"\r\n\r\ntrue\r\n--%s--\r\n", boundary, boundary)
	if _, _, err := Static(bytes.NewReader([]byte(static)), boundary, io.Discard); !errors.Is(err, deploy.ErrKindMismatch) {
		t.Fatalf("a static upload with clearCache: %v, want kind_mismatch", err)
	}
}

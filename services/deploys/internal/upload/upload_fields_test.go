package upload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"tori.dev/services/deploys/internal/deploy"
)

// Fields reads the parts a payload does not know; a part it leaves is the payload's, and its
// refusal of a value comes back as it gave it.
func TestStaticWithFields(t *testing.T) {
	const boundary = "b"
	body := func(parts ...string) io.Reader {
		var b strings.Builder
		for _, p := range parts {
			name, content, _ := strings.Cut(p, "=")
			disp := fmt.Sprintf(`form-data; name=%q`, name)
			if name == "files" {
				disp += `; filename="index.html"`
			}
			fmt.Fprintf(&b, "--%s\r\nContent-Disposition: %s\r\n\r\n%s\r\n", boundary, disp, content)
		}
		fmt.Fprintf(&b, "--%s--\r\n", boundary)
		return strings.NewReader(b.String())
	}
	got := map[string]string{}
	fields := func(field string, part io.Reader) (bool, error) {
		if field != "name" && field != "bad" {
			return false, nil
		}
		b, _ := io.ReadAll(part)
		if field == "bad" {
			return true, &deploy.ParamError{Name: "bad", Reason: "multipart words stay a parameter's"}
		}
		got[field] = string(b)
		return true, nil
	}
	var out bytes.Buffer
	if n, _, err := StaticWith(body("name=pr-1", "files=<h1>x</h1>"), boundary, &out, fields); err != nil || n != 1 || got["name"] != "pr-1" {
		t.Fatalf("files %d, fields %v, %v", n, got, err)
	}
	var pe *deploy.ParamError
	if _, _, err := StaticWith(body("files=x", "bad=1"), boundary, &out, fields); !errors.As(err, &pe) || pe.Name != "bad" {
		t.Fatalf("a field's refusal: %v", err)
	}
	if _, _, err := StaticWith(body("files=x", "other=1"), boundary, &out, fields); !errors.Is(err, deploy.ErrInvalidBody) {
		t.Fatalf("a part neither knows: %v", err)
	}
	if _, _, err := StaticWith(body("name=x", "files=y"), boundary, &out, nil); !errors.Is(err, deploy.ErrInvalidBody) {
		t.Fatalf("without fields, a preview's part: %v", err)
	}
}

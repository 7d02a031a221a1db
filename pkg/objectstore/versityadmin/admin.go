// Package versityadmin makes accounts and owned buckets on a Versity S3 gateway through its
// admin API (PATCH requests signed with SigV4 by an admin or the root account). Bootstrap and
// the tests use it; workloads never hold admin credentials.
package versityadmin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"
)

// Client speaks to one gateway's admin API with admin credentials.
type Client struct {
	URL       string // http(s)://host:port of the gateway (its admin routes share the S3 port)
	AccessKey string
	SecretKey string
	Region    string // "us-east-1" unless set
	HTTP      *http.Client
}

// account is the gateway's auth.Account as its admin API reads it (XML, field names).
type account struct {
	XMLName xml.Name `xml:"Account"`
	Access  string   `xml:"Access"`
	Secret  string   `xml:"Secret"`
	Role    string   `xml:"Role"`
}

type mutableProps struct {
	XMLName xml.Name `xml:"MutableProps"`
	Secret  string   `xml:"Secret"`
}

// EnsureUser makes an account of the least role ("user": it may not create buckets and sees
// only the buckets it owns), or sets the secret of an existing one to secret, so running
// bootstrap again converges on the secrets it wrote.
func (c Client) EnsureUser(ctx context.Context, access, secret string) error {
	if access == "" || secret == "" {
		return errors.New("versityadmin: access key and secret are required")
	}
	body, _ := xml.Marshal(account{Access: access, Secret: secret, Role: "user"})
	status, msg, err := c.do(ctx, "/create-user", nil, nil, body)
	if err != nil {
		return err
	}
	if status < 300 {
		return nil
	}
	if !strings.Contains(msg, "UserAlreadyExists") && !strings.Contains(msg, "already exists") {
		return fmt.Errorf("versityadmin: create user %s: %d %s", access, status, code(msg))
	}
	body, _ = xml.Marshal(mutableProps{Secret: secret})
	status, msg, err = c.do(ctx, "/update-user", url.Values{"access": {access}}, nil, body)
	if err != nil {
		return err
	}
	if status >= 300 {
		return fmt.Errorf("versityadmin: update user %s: %d %s", access, status, code(msg))
	}
	return nil
}

// EnsureBucket makes bucket owned by owner, or hands an existing bucket to owner.
func (c Client) EnsureBucket(ctx context.Context, bucket, owner string) error {
	status, msg, err := c.do(ctx, "/"+url.PathEscape(bucket)+"/create", nil, http.Header{"X-Vgw-Owner": {owner}}, nil)
	if err != nil {
		return err
	}
	if status < 300 {
		return nil
	}
	if !strings.Contains(msg, "BucketAlreadyOwnedByYou") && !strings.Contains(msg, "BucketAlreadyExists") {
		return fmt.Errorf("versityadmin: create bucket %s: %d %s", bucket, status, code(msg))
	}
	status, msg, err = c.do(ctx, "/change-bucket-owner", url.Values{"bucket": {bucket}, "owner": {owner}}, nil, nil)
	if err != nil {
		return err
	}
	if status >= 300 {
		return fmt.Errorf("versityadmin: change owner of %s: %d %s", bucket, status, code(msg))
	}
	return nil
}

// do sends one signed PATCH and returns the status and the body (an S3 error document).
func (c Client) do(ctx context.Context, path string, query url.Values, header http.Header, body []byte) (int, string, error) {
	u, err := url.Parse(strings.TrimRight(c.URL, "/") + path)
	if err != nil {
		return 0, "", fmt.Errorf("versityadmin: %w", err)
	}
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, u.String(), bytes.NewReader(body))
	if err != nil {
		return 0, "", fmt.Errorf("versityadmin: %w", err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	sum := sha256.Sum256(body)
	req.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
	req.Header.Set("X-Amz-Date", time.Now().UTC().Format("20060102T150405Z"))
	region := c.Region
	if region == "" {
		region = "us-east-1"
	}
	req = signer.SignV4(*req, c.AccessKey, c.SecretKey, "", region)
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("versityadmin: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, string(msg), nil
}

// code is the <Code> of an S3 error document: enough to say what went wrong, and never the
// request's own secrets.
func code(body string) string {
	var e struct {
		Code string `xml:"Code"`
	}
	if xml.Unmarshal([]byte(body), &e) == nil && e.Code != "" {
		return e.Code
	}
	return "(no error code)"
}

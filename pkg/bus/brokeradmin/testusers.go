package brokeradmin

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"tori.dev/pkg/bus"

	amqp "github.com/rabbitmq/amqp091-go"
)

// TestUsersPassword is the password of the test users on this machine's broker, making them
// first when they cannot log in with it. TEST_AMQP_PASSWORD wins when set; otherwise the
// password is kept in the user's cache folder, under a file lock, so every test process and
// every concurrent test run on the machine agree on one password (two runs each making the
// users with a password of its own would lock each other out).
func TestUsersPassword(ctx context.Context, adminURL string) (string, error) {
	if pw := os.Getenv("TEST_AMQP_PASSWORD"); pw != "" {
		return pw, ensureTestUsersUnless(ctx, adminURL, pw, "")
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir = filepath.Join(dir, "tori")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(dir, "test-amqp.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	pwFile := filepath.Join(dir, "test-amqp-password")
	b, err := os.ReadFile(pwFile)
	pw := strings.TrimSpace(string(b))
	if err != nil || pw == "" {
		raw := make([]byte, 16)
		if _, err := rand.Read(raw); err != nil {
			return "", err
		}
		pw = hex.EncodeToString(raw)
		if err := os.WriteFile(pwFile, []byte(pw+"\n"), 0o600); err != nil {
			return "", err
		}
	}
	return pw, ensureTestUsersUnless(ctx, adminURL, pw, filepath.Join(dir, "test-amqp-users.sum"))
}

// ensureTestUsersUnless makes the test users unless the last of them already logs in with pw
// (then all of them exist with it: they are made in one go, in order) and, where sumFile is
// given, they were made with the permissions and tags the code gives them now: a change to
// a principal's permissions must reach users an older checkout made.
func ensureTestUsersUnless(ctx context.Context, adminURL, pw, sumFile string) error {
	want := usersSum(TestUsers(pw))
	if canLogIn(adminURL, pw) {
		if sumFile == "" {
			return nil
		}
		if b, err := os.ReadFile(sumFile); err == nil && strings.TrimSpace(string(b)) == want {
			return nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := EnsureTestUsers(ctx, pw); err != nil {
		return err
	}
	if sumFile == "" {
		return nil
	}
	return os.WriteFile(sumFile, []byte(want+"\n"), 0o600)
}

// usersSum fingerprints what EnsureTestUsers gives each user, passwords left out.
func usersSum(users []User) string {
	h := sha256.New()
	for _, u := range users {
		p := bus.PermissionsOf(u.Principal)
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\n", u.Name, p.Configure, p.Write, p.Read,
			bus.TopicWrite(u.Principal), bus.TopicRead(u.Principal), strings.Join(bus.TagsOf(u.Principal), ","))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func canLogIn(adminURL, pw string) bool {
	u, err := url.Parse(adminURL)
	if err != nil {
		return false
	}
	users := TestUsers(pw)
	u.User = url.UserPassword(users[len(users)-1].Name, pw)
	c, err := amqp.Dial(u.String())
	if err != nil {
		return false
	}
	c.Close()
	return true
}

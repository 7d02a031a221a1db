// Package brokeradmin makes the broker users of the control plane's principals with
// rabbitmqctl, on the machine that runs the broker (make run, make test). Compose and
// Kubernetes load a definitions file instead (see deployments/).
package brokeradmin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"tori.dev/pkg/bus"
)

// User is one broker user to make: its name, password and principal.
type User struct {
	Name, Password, Principal string
}

// Ctl runs rabbitmqctl.
type Ctl struct {
	// Path of rabbitmqctl; "rabbitmqctl" on PATH when empty (RABBITMQCTL overrides).
	Path string
	// VHost the users are permitted on; "/" when empty.
	VHost string
	// TopicExchanges get topic permissions: each user publishes only the routing keys its
	// principal owns. RabbitMQ names these exchanges exactly, so only known namespaces'
	// events exchanges can be listed ("tori.events" in production).
	TopicExchanges []string
}

func (c Ctl) path() string {
	if c.Path != "" {
		return c.Path
	}
	if p := os.Getenv("RABBITMQCTL"); p != "" {
		return p
	}
	return "rabbitmqctl"
}

func (c Ctl) vhost() string {
	if c.VHost == "" {
		return "/"
	}
	return c.VHost
}

// Ensure makes (or updates) each user: its password, its principal's tags and permissions. Idempotent: run again with the same passwords it changes nothing.
func (c Ctl) Ensure(ctx context.Context, users []User) error {
	existing, err := c.users(ctx)
	if err != nil {
		return err
	}
	for _, u := range users {
		if existing[u.Name] {
			if _, err := c.run(ctx, u.Password, "change_password", "--", u.Name); err != nil {
				return err
			}
		} else if _, err := c.run(ctx, u.Password, "add_user", "--", u.Name); err != nil {
			return err
		}
		// Tags replace what the user had: none for a service, impersonator for the operator.
		if _, err := c.run(ctx, "", append([]string{"set_user_tags", "--", u.Name}, bus.TagsOf(u.Principal)...)...); err != nil {
			return err
		}
		p := bus.PermissionsOf(u.Principal)
		if _, err := c.run(ctx, "", "set_permissions", "-p", c.vhost(), "--", u.Name, p.Configure, p.Write, p.Read); err != nil {
			return err
		}
		for _, x := range c.TopicExchanges {
			if _, err := c.run(ctx, "", "set_topic_permissions", "-p", c.vhost(), "--", u.Name, x, bus.TopicWrite(u.Principal), bus.TopicRead(u.Principal)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c Ctl) users(ctx context.Context) (map[string]bool, error) {
	out, err := c.run(ctx, "", "list_users", "--quiet", "--no-table-headers")
	if err != nil {
		return nil, err
	}
	users := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if name, _, _ := strings.Cut(line, "\t"); strings.TrimSpace(name) != "" {
			users[strings.TrimSpace(name)] = true
		}
	}
	return users, nil
}

// run runs rabbitmqctl with args; a password goes on its standard input, never on the
// command line where ps would show it.
func (c Ctl) run(ctx context.Context, password string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, c.path(), args...)
	if password != "" {
		// rabbitmqctl reads the password from stdin when it is not an argument.
		cmd.Stdin = strings.NewReader(password + "\n")
	}
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) || stderr.Len() > 0 {
			return "", fmt.Errorf("brokeradmin: rabbitmqctl %s: %v: %s", args[0], err, strings.TrimSpace(stderr.String()))
		}
		return "", fmt.Errorf("brokeradmin: rabbitmqctl %s: %w", args[0], err)
	}
	return out.String(), nil
}

// TestPrefix starts the names of the broker users `make test` makes: "test.tori.identity".
const TestPrefix = "test."

// TestZones are the zones whose agents tests run.
var TestZones = []string{"local", "eu-1", "other"}

// TestTopicNamespace is the one test namespace whose events exchange carries topic
// permissions (RabbitMQ names topic-permission exchanges exactly, not by pattern): the broker
// permission tests publish there.
const TestTopicNamespace = "tori_perm."

// TestUsers are the broker users of `make test`, all with password.
func TestUsers(password string) []User {
	var out []User
	for _, p := range bus.Services {
		out = append(out, User{Name: bus.UserName(TestPrefix, p), Password: password, Principal: p})
	}
	for _, z := range TestZones {
		p := bus.ZonePrincipal(z)
		out = append(out, User{Name: bus.UserName(TestPrefix, p), Password: password, Principal: p})
	}
	out = append(out, User{Name: bus.UserName(TestPrefix, bus.PrincipalOperator), Password: password, Principal: bus.PrincipalOperator})
	return out
}

// EnsureTestUsers makes TestUsers with rabbitmqctl.
func EnsureTestUsers(ctx context.Context, password string) error {
	return Ctl{TopicExchanges: []string{TestTopicNamespace + "tori.events"}}.Ensure(ctx, TestUsers(password))
}

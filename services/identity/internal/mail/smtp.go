package mail

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"net/smtp"
	"strings"
	"time"

	"tori.dev/services/identity/internal/usecase"
)

// dialTimeout bounds the whole SMTP conversation when the context has no earlier deadline;
// a hung mail server must not hold a sign-in request forever.
const dialTimeout = 15 * time.Second

// SMTPSender delivers over SMTP. It upgrades with STARTTLS, which every server but one on
// this host must offer, and authenticates (PLAIN) when the URL carries a user.
type SMTPSender struct {
	Addr     string // host:port
	Username string
	Password string
	From     string // the From header; its address is the envelope sender
	Log      *slog.Logger
	Now      func() time.Time
}

// Send delivers m in one SMTP session.
func (s SMTPSender) Send(ctx context.Context, m usecase.Mail) error {
	from, err := mail.ParseAddress(s.From)
	if err != nil {
		return fmt.Errorf("mail: from address: %w", err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, dialTimeout)
		defer cancel()
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("mail: dial %s: %w", s.Addr, err)
	}
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	host, _, _ := net.SplitHostPort(s.Addr)
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		conn.Close()
		return fmt.Errorf("mail: smtp greeting: %w", err)
	}
	defer c.Close()
	if err := s.deliver(c, host, from.Address, m); err != nil {
		return err
	}
	s.Log.InfoContext(ctx, "mail sent over smtp", "server", s.Addr)
	return nil
}

func (s SMTPSender) deliver(c *smtp.Client, host, from string, m usecase.Mail) error {
	if ok, _ := c.Extension("STARTTLS"); ok {
		if err := c.StartTLS(&tls.Config{ServerName: host}); err != nil {
			return fmt.Errorf("mail: starttls: %w", err)
		}
	} else if !mayGoPlain(host) {
		// A sign-in link is a credential: it crosses no network in the clear.
		return fmt.Errorf("mail: %s offers no STARTTLS; only a loopback mail server may be used without TLS", host)
	}
	if s.Username != "" {
		// net/smtp refuses PLAIN over an unencrypted link except to localhost, which is
		// the protection we want.
		if err := c.Auth(smtp.PlainAuth("", s.Username, s.Password, host)); err != nil {
			return fmt.Errorf("mail: auth: %w", err)
		}
	}
	if err := c.Mail(from); err != nil {
		return fmt.Errorf("mail: MAIL FROM: %w", err)
	}
	if err := c.Rcpt(m.To); err != nil {
		return fmt.Errorf("mail: RCPT TO: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("mail: DATA: %w", err)
	}
	if _, err := w.Write(render(s.From, m, s.Now())); err != nil {
		return fmt.Errorf("mail: write body: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("mail: end of data: %w", err)
	}
	return c.Quit()
}

// mayGoPlain says whether a mail server may be spoken to without TLS: only one on this host.
func mayGoPlain(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

package mail_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tori.dev/services/identity/internal/mail"
	"tori.dev/services/identity/internal/mail/mailtest"
	"tori.dev/services/identity/internal/usecase"
)

const from = "Tori <no-reply@tori.localhost>"

var msg = usecase.Mail{To: "ada@example.com", Subject: "Sign in to Tori", Text: "Open this link:\n\nhttp://console/auth/verify?token=SECRET\n.\nend\n"}

func TestSMTPSender(t *testing.T) {
	srv := mailtest.NewServer(t)
	var logs bytes.Buffer
	s := mail.SMTPSender{Addr: srv.Addr, From: from, Log: slog.New(slog.NewJSONHandler(&logs, nil)), Now: time.Now}
	if err := s.Send(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	got := srv.Wait(t, 1)[0]
	if got.From != "no-reply@tori.localhost" || len(got.To) != 1 || got.To[0] != "ada@example.com" {
		t.Fatalf("envelope %q → %v", got.From, got.To)
	}
	for _, want := range []string{"From: " + from, "To: ada@example.com", "Subject: Sign in to Tori",
		"http://console/auth/verify?token=SECRET", "\n.\nend" /* a lone dot survives dot-stuffing */} {
		if !strings.Contains(got.Data, want) {
			t.Errorf("message lacks %q:\n%s", want, got.Data)
		}
	}
	if strings.Contains(logs.String(), "SECRET") || strings.Contains(logs.String(), "ada@") {
		t.Fatalf("log names the link or the recipient: %s", logs.String())
	}
}

func TestSMTPSenderUnreachable(t *testing.T) {
	s := mail.SMTPSender{Addr: "127.0.0.1:1", From: from, Log: slog.New(slog.DiscardHandler), Now: time.Now}
	if err := s.Send(context.Background(), msg); err == nil {
		t.Fatal("sending to a closed port succeeded")
	}
}

func TestFileSender(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mail")
	var logs bytes.Buffer
	s := mail.FileSender{Dir: dir, From: from, Log: slog.New(slog.NewJSONHandler(&logs, nil)), Now: time.Now}
	if err := s.Send(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.eml"))
	if len(files) != 1 {
		t.Fatalf("want one mail file, got %v", files)
	}
	b, _ := os.ReadFile(files[0])
	if !strings.Contains(string(b), "token=SECRET") || !strings.Contains(string(b), "To: ada@example.com") {
		t.Fatalf("mail file lacks the message:\n%s", b)
	}
	if fi, _ := os.Stat(files[0]); fi.Mode().Perm() != 0o600 {
		t.Errorf("mail file mode %v; it holds a live link and must be private", fi.Mode().Perm())
	}
	if !strings.Contains(logs.String(), files[0]) || strings.Contains(logs.String(), "SECRET") {
		t.Fatalf("log must say where, and never the link: %s", logs.String())
	}
}

package mail

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/identity/internal/usecase"
)

// FileSender writes each message to its own file, for development without a mail server.
type FileSender struct {
	Dir  string // DATA_DIR/mail
	From string
	Log  *slog.Logger
	Now  func() time.Time
}

// Send writes m as <time>-<id>.eml, readable only by this user: the file holds a live link.
func (s FileSender) Send(ctx context.Context, m usecase.Mail) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("mail: make %s: %w", s.Dir, err)
	}
	now := s.Now()
	name := filepath.Join(s.Dir, now.UTC().Format("20060102T150405.000Z")+"-"+uuid.NewString()[:8]+".eml")
	if err := os.WriteFile(name, render(s.From, m, now), 0o600); err != nil {
		return fmt.Errorf("mail: write: %w", err)
	}
	s.Log.InfoContext(ctx, "mail written to file", "path", name)
	return nil
}

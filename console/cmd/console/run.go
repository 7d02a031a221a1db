package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"tori.dev/console"
	"tori.dev/console/internal/server"
)

func run(ctx context.Context, getenv func(string) string) error {
	cfg, err := server.LoadConfig(getenv)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("service", "console")
	// The handler's warnings (an unreachable API or session store) go to the same log.
	slog.SetDefault(log)
	h, err := server.New(cfg, console.Files())
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.InfoContext(ctx, "console listening", "addr", ln.Addr().String(), "api", cfg.BaseURL, "built", h.Built(), "sessionStore", cfg.SessionStore)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

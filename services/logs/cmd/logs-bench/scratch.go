package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// scratch is the benchmark's own database.
type scratch struct {
	adminURL string // the server's maintenance database
	url      string // admin URL of the scratch database
	name     string
	keep     bool
	admin    *pgxpool.Pool // superuser connections to the scratch database, for measuring
}

func newScratch(ctx context.Context, adminURL string, keep bool) (*scratch, error) {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "logs_bench_" + hex.EncodeToString(b)
	u, err := url.Parse(adminURL)
	if err != nil {
		return nil, err
	}
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return nil, err
	}
	u.Path = "/" + name
	admin, err := pgxpool.New(ctx, u.String())
	if err != nil {
		return nil, err
	}
	fmt.Printf("scratch database %s\n", name)
	return &scratch{adminURL: adminURL, url: u.String(), name: name, keep: keep, admin: admin}, nil
}

// queryRow runs a measuring query as the superuser.
func (s *scratch) queryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return s.admin.QueryRow(ctx, sql, args...)
}

func (s *scratch) drop() {
	s.admin.Close()
	if s.keep {
		fmt.Printf("kept database %s\n", s.name)
		return
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.adminURL)
	if err != nil {
		fmt.Fprintln(os.Stderr, "drop scratch database:", err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+s.name+" WITH (FORCE)"); err != nil {
		fmt.Fprintln(os.Stderr, "drop scratch database:", err)
	}
}

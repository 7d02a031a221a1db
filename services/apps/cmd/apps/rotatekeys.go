package main

import (
	"context"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgxpool"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/callerid"
	pkgconfig "tori.dev/pkg/config"
	"tori.dev/pkg/pgstore"
	"tori.dev/services/apps/internal/config"
	"tori.dev/services/apps/internal/store"
	"tori.dev/services/apps/internal/usecase"
)

func openDB(ctx context.Context, cfg config.Config) (*pgxpool.Pool, error) {
	return pgstore.Connect(ctx, cfg.DatabaseURL, store.Service("").Schema, pgstore.WithMigrations(bus.Migrations, store.Migrations, callerid.Migrations))
}

// rotateKeys is `apps rotate-keys`: a new primary key, then every stored value re-sealed
// under it. Old keys stay, so deploy snapshots sealed under them still open.
func rotateKeys(ctx context.Context, env map[string]string, out io.Writer) error {
	var cfg config.Config
	if err := pkgconfig.LoadMap(ctx, &cfg, env); err != nil {
		return err
	}
	pool, err := openDB(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	st := store.New(pool)
	kr, err := openKeyring(ctx, cfg, st)
	if err != nil {
		return err
	}
	rep, err := usecase.RotateKeys(ctx, kr, st)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "rotated %s: new primary key %s; re-encrypted %d values\n", kr, rep.Primary, rep.Reencrypted)
	return nil
}

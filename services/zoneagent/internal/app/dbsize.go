package app

import (
	"context"
	"errors"
	"fmt"

	zonebus "tori.dev/proto/tori/zone/v1"
)

// TrackedDatabase is one database the size check watches.
type TrackedDatabase struct {
	Name, DatabaseID, AppID string
	MaxBytes                int64
	ReadOnly                bool
}

// SizeWatch is what the size check needs of the cluster and the pooler.
type SizeWatch interface {
	Size(ctx context.Context, name string) (int64, error)
	// TendCeiling frees the room the recovery needs when the database's hard ceiling is
	// reached, and keeps it back again once there is room.
	TendCeiling(ctx context.Context, name string, capBytes int64) error
	SetReadOnly(ctx context.Context, name string, on bool) error
	Tracked() []TrackedDatabase
	MarkReadOnly(name string, on bool) error
	Reconnect(ctx context.Context, name string) error
}

// SizeAction is what the size check does with one database.
type SizeAction int

const (
	SizeKeep SizeAction = iota
	SizeReadOnly
	SizeWritable
)

// DecideSize is the cap's rule (decisions.md): over the cap, read-only; read-only and under
// 90 % of it, writable again; in between, as it is.
func DecideSize(size, limit int64, readOnly bool) SizeAction {
	switch {
	case !readOnly && size > limit:
		return SizeReadOnly
	case readOnly && size*10 < limit*9:
		return SizeWritable
	}
	return SizeKeep
}

// CheckSizes measures every database against its cap (lowered to CapOverride when that is
// set, for tests) and flips those that crossed it, reporting each flip. One database's
// failure does not keep the others from their check; it is retried next round.
func (d *Databases) CheckSizes(ctx context.Context) (int64, error) {
	if d.Cluster == nil || d.Sizes == nil {
		return 0, nil
	}
	var flipped int64
	var errs []error
	for _, t := range d.Sizes.Tracked() {
		limit := d.Cap(t.MaxBytes)
		if err := d.Sizes.TendCeiling(ctx, t.Name, limit); err != nil {
			errs = append(errs, err)
		}
		size, err := d.Sizes.Size(ctx, t.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		switch DecideSize(size, limit, t.ReadOnly) {
		case SizeReadOnly:
			msg := fmt.Sprintf("The database uses %s, over its cap of %s: writes are refused until it is under 90 %% of the cap (in one transaction: BEGIN; SET TRANSACTION READ WRITE; TRUNCATE …; COMMIT).", megabytes(size), megabytes(limit))
			err = d.flip(ctx, t, true, zonebus.KeyDatabaseReadOnly, msg)
		case SizeWritable:
			err = d.flip(ctx, t, false, zonebus.KeyDatabaseWritable, "")
		default:
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		flipped++
	}
	return flipped, errors.Join(errs...)
}

func (d *Databases) flip(ctx context.Context, t TrackedDatabase, readOnly bool, key, message string) error {
	if err := d.Sizes.SetReadOnly(ctx, t.Name, readOnly); err != nil {
		return err
	}
	if err := d.Sizes.Reconnect(ctx, t.Name); err != nil {
		return err
	}
	if err := d.Store.InTx(ctx, func(tx Tx) error {
		return tx.Publish(ctx, key, d.event(t.DatabaseID, t.AppID, message))
	}); err != nil {
		return err
	}
	d.Log.InfoContext(ctx, "database size crossed its cap", "database_id", t.DatabaseID, "read_only", readOnly)
	return d.Sizes.MarkReadOnly(t.Name, readOnly)
}

// Cap is a database's cap: the plan's maxBytes, lowered to CapOverride when that is set.
func (d *Databases) Cap(maxBytes int64) int64 {
	if d.CapOverride > 0 && d.CapOverride < maxBytes {
		return d.CapOverride
	}
	return maxBytes
}

func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

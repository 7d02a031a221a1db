package usecase

import (
	"context"
	"errors"

	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/sizecap"
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

// CheckSizes measures every database against its cap (lowered to CapOverride when that is
// set, for tests) and flips those that crossed it (the rule: sizecap.Decide), reporting each flip. One database's
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
		switch sizecap.Decide(size, limit, t.ReadOnly) {
		case sizecap.ReadOnly:
			err = d.flip(ctx, t, true, zonebus.KeyDatabaseReadOnly, sizecap.OverCapMessage(size, limit))
		case sizecap.Writable:
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

// Cap is a database's cap: the plan's maxBytes, lowered to CapOverride when that is set
// (sizecap.Cap).
func (d *Databases) Cap(maxBytes int64) int64 { return sizecap.Cap(maxBytes, d.CapOverride) }

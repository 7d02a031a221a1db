package usecase

import (
	"context"
	"errors"
	"time"
)

// ErrNoDump: no such dump in the zone's bucket (or the zone keeps no dumps).
var ErrNoDump = errors.New("no such dump")

// DumpURL is a short-lived URL that downloads dump dumpID of database databaseID from the
// zone's bucket, and when it stops working. The databases service has checked whose it is.
func (d *Databases) DumpURL(ctx context.Context, databaseID, dumpID string) (string, time.Time, error) {
	if d.Dumps == nil {
		return "", time.Time{}, ErrNoDump
	}
	key := dumpKey(databaseID, dumpID)
	// A URL of nothing would answer the customer with the store's own error page.
	if ok, err := d.Dumps.Exists(ctx, key); err != nil {
		return "", time.Time{}, err
	} else if !ok {
		return "", time.Time{}, ErrNoDump
	}
	u, lifetime, err := d.Dumps.DownloadURL(ctx, key)
	if err != nil {
		return "", time.Time{}, err
	}
	expires := d.Now().Add(lifetime)
	d.Log.InfoContext(ctx, "dump download URL made", "database_id", databaseID, "dump_id", dumpID, "expires_at", expires)
	return u, expires, nil
}

// DeleteDumps deletes the dumps retention pruned from the zone's bucket and returns how
// many were there; deleting what is gone succeeds.
func (d *Databases) DeleteDumps(ctx context.Context, databaseID string, dumpIDs []string) (int, error) {
	if d.Dumps == nil || len(dumpIDs) == 0 {
		return 0, nil
	}
	keys := make([]string, 0, len(dumpIDs))
	for _, id := range dumpIDs {
		keys = append(keys, dumpKey(databaseID, id))
	}
	n, err := d.Dumps.Delete(ctx, keys)
	if err != nil {
		return n, err
	}
	d.Log.InfoContext(ctx, "pruned dumps deleted", "database_id", databaseID, "count", n)
	return n, nil
}

// dumpKey is where a dump lives in the zone's bucket (docs/conventions.md, "Dump objects"),
// as the databases service names it in its dump command.
func dumpKey(databaseID, dumpID string) string {
	return "dumps/" + databaseID + "/" + dumpID + ".dump"
}

package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/logstest"
)

// The page read gives back every field as stored: streams, deploy ids changing from row to
// row (and absent), messages, UTC timestamps in (timestamp, id) order.
func TestEntriesReadBackAsStored(t *testing.T) {
	db := logstest.NewDB(t)
	appID, a, b := uuid.NewString(), uuid.NewString(), uuid.NewString()
	t0 := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
	deploys := []string{a, a, "", b, a, "", "", b}
	var want []logs.Entry
	for i, d := range deploys {
		want = append(want, logs.Entry{AppID: appID, DeployID: d, Stream: logs.Streams[i%len(logs.Streams)],
			Timestamp: t0.Add(time.Duration(i) * time.Second), Message: "line " + string(rune('a'+i))})
	}
	db.Seed(t, want)
	got, err := db.Store.Entries(context.Background(), appID, t0, t0.Add(time.Hour), nil, logs.ProcessFilter{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for i, g := range got {
		w := want[i]
		if g.ID == 0 || g.AppID != w.AppID || g.DeployID != w.DeployID || g.Stream != w.Stream ||
			g.Message != w.Message || !g.Timestamp.Equal(w.Timestamp) || g.Timestamp.Location() != time.UTC {
			t.Errorf("entry %d = %+v, want %+v", i, g, w)
		}
	}
}

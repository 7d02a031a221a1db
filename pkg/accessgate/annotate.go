package accessgate

import (
	"context"

	auditv1 "tori.dev/proto/gen/tori/audit/v1"
)

type entryKey struct{}

func withEntry(ctx context.Context, e *auditv1.EntryRecorded) context.Context {
	return context.WithValue(ctx, entryKey{}, e)
}

// SetTarget names what the request's change was on, when the path does not say it (a new
// app's slug, a new deploy's id). It must be called before the change's transaction commits.
func SetTarget(ctx context.Context, target string) {
	if e, ok := ctx.Value(entryKey{}).(*auditv1.EntryRecorded); ok {
		e.Target = target
	}
}

// SetApp names the app of a change whose path does not (POST /api/apps).
func SetApp(ctx context.Context, slug string) {
	if e, ok := ctx.Value(entryKey{}).(*auditv1.EntryRecorded); ok {
		e.App = slug
	}
}

// Annotate adds what else the entry should say (the keys an env change set, a new role).
// Never a secret or an environment value: the audit log shows keys only.
func Annotate(ctx context.Context, key, value string) {
	if e, ok := ctx.Value(entryKey{}).(*auditv1.EntryRecorded); ok {
		e.Metadata[key] = value
	}
}

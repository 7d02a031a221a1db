// Package databasesbus names what the databases service publishes on the bus. Each name is
// declared here once, beside its message in events.proto.
package databasesbus

// Events (routing keys on the events exchange).
const (
	KeyDatabaseReady   = "databases.database.ready"   // databasesv1.DatabaseChanged
	KeyDatabaseDeleted = "databases.database.deleted" // databasesv1.DatabaseChanged
	// KeyDatabaseRotated: the database has a new password (the apps service asks the zone for
	// it and rewrites DATABASE_URL); the old one works until retired.
	KeyDatabaseRotated = "databases.database.rotated" // databasesv1.DatabaseChanged
	// A restore's database is ready (the apps service writes DATABASE_RESTORE_URL) or gone
	// (it removes it); database_id is the restore's id.
	KeyRestoreReady   = "databases.restore.ready"   // databasesv1.DatabaseChanged
	KeyRestoreDeleted = "databases.restore.deleted" // databasesv1.DatabaseChanged
	// KeyAppCleaned: a deleted app's database is gone (or it had none), for the apps
	// service's cleanup record.
	KeyAppCleaned = "databases.app.cleaned" // appsv1.AppCleanupConfirmed
)

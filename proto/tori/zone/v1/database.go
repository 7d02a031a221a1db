package zonebus

// Managed databases (database.proto). The commands come from the databases service, the
// events from the zone; the credentials question is asked by the apps service alone, the
// dump URL and dump deletion questions by the databases service alone.
const (
	CommandDatabaseCreate = "database_create" // zonev1.CreateDatabase
	CommandDatabaseDrop   = "database_drop"   // zonev1.DropDatabase
	CommandDatabaseDump   = "database_dump"   // zonev1.DumpDatabase
	// CommandDatabaseRestore makes a new database from a dump; database_drop (with the
	// restore's id and name) takes it away again.
	CommandDatabaseRestore = "database_restore" // zonev1.RestoreDatabase
	// CommandDatabaseRotate gives the database a new password while the current one goes on
	// working; CommandDatabaseRetire makes the one a rotation replaced stop working.
	CommandDatabaseRotate = "database_rotate" // zonev1.DropDatabase (the database's ids and name)
	CommandDatabaseRetire = "database_retire" // zonev1.DropDatabase (the database's ids and name)

	KeyDatabaseReady   = "zone.database.ready"   // zonev1.DatabaseChanged
	KeyDatabaseFailed  = "zone.database.failed"  // zonev1.DatabaseChanged
	KeyDatabaseDropped = "zone.database.dropped" // zonev1.DatabaseChanged
	// Over its cap the database is made read-only (message: the usage and the cap); under
	// 90 % of it, writable again.
	KeyDatabaseReadOnly = "zone.database.read_only" // zonev1.DatabaseChanged
	KeyDatabaseWritable = "zone.database.writable"  // zonev1.DatabaseChanged
	KeyDatabaseDumped   = "zone.database.dumped"    // zonev1.DatabaseDumped
	KeyDatabaseRestored = "zone.database.restored"  // zonev1.DatabaseRestored
	// The new password works (the apps service asks for it and rewrites DATABASE_URL).
	KeyDatabaseRotated = "zone.database.rotated" // zonev1.DatabaseChanged
)

// DatabaseCredentialsQueue is zone's request queue for a database's credentials
// (zonev1.DatabaseCredentialsRequest → DatabaseCredentialsReply).
func DatabaseCredentialsQueue(zone string) string {
	return "zoneagent." + zone + ".rpc.database_credentials"
}

// DumpURLQueue is zone's request queue for a short-lived download URL of one dump
// (zonev1.DumpURLRequest → DumpURLReply), asked by the databases service alone.
func DumpURLQueue(zone string) string {
	return "zoneagent." + zone + ".rpc.dump_url"
}

// DeleteDumpsQueue is zone's request queue to delete pruned dumps from its bucket
// (zonev1.DeleteDumpsRequest → DeleteDumpsReply), asked by the databases service alone.
func DeleteDumpsQueue(zone string) string {
	return "zoneagent." + zone + ".rpc.dump_delete"
}

package bus

// WatchOutbox is what Relay.Run does for /metrics, without a relay publishing the rows away.
var WatchOutbox = outboxes.watch

// Package apps is the app lifecycle: the App record, the rules of creating and deleting one
// (slugs, regions, kinds, the plan's app limit) and the tombstone that holds a deleted app's
// slug until every service that kept data of the app has confirmed its cleanup.
//
// It does no I/O; the use cases are in internal/usecase.
package apps
